/**
 * Which Node.js binary a local function runs on: the major of its Lambda runtime (`nodejs24.x` ->
 * Node 24), as deployed, whatever Node started `npm start`. The devDependency `node` (an exact 24.x)
 * installs that binary into node_modules; a process already on the runtime's major serves too, so a
 * machine the `node` package has no binary for can run `npm start` on its own Node 24.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The npm package that ships the Node binary of Lambda's runtime (package.json devDependencies). */
export const RUNTIME_NODE_PACKAGE = 'node';

export class NodeRuntimeError extends Error {
  override readonly name = 'NodeRuntimeError';
}

export interface NodeBinary {
  /** Absolute path of the executable. */
  readonly path: string;
  /** Its version, `v24.21.0`. */
  readonly version: string;
}

export interface NodeBinaryLookup {
  /** The process looking: used when it is on the runtime's major. @default this process */
  readonly current?: NodeBinary;
  /** The installed `node` package's package.json, or undefined when it is not installed. @default resolved from here */
  readonly packageJson?: string | undefined;
  /**
   * How to get the runtime's Node, for the message when there is none: in this repository `npm ci`
   * (the devDependency), in an app of one's own `npm install --save-dev node@24` (nodeInstallHint).
   * @default `npm ci`
   */
  readonly install?: (major: number) => string;
}

/** What an app using the package (`webhooks local`) runs to get Node `major` into its node_modules. */
export const nodeInstallHint = (major: number): string =>
  `npm install --save-dev ${RUNTIME_NODE_PACKAGE}@${major}`;

/** `nodejs24.x` -> 24; anything that is not a Node.js runtime is refused (the local stack runs Node only). */
export function nodeMajorOf(runtime: string): number {
  const match = /^nodejs(\d+)\.x$/.exec(runtime);
  if (!match)
    throw new NodeRuntimeError(
      `runtime ${runtime || '(none)'} is not a Node.js runtime: the local stack runs nodejsNN.x functions only`,
    );
  return Number(match[1]);
}

const majorOf = (version: string): number => Number(/^v?(\d+)\./.exec(version)?.[1] ?? Number.NaN);

function installedPackageJson(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve(`${RUNTIME_NODE_PACKAGE}/package.json`);
  } catch {
    return undefined;
  }
}

/** The binary the `node` package installed (its preinstall links it to the path its `bin` names). */
function packagedBinary(packageJson: string | undefined): NodeBinary | undefined {
  if (!packageJson || !existsSync(packageJson)) return undefined;
  const manifest = JSON.parse(readFileSync(packageJson, 'utf8')) as {
    version?: string;
    bin?: { node?: string };
  };
  const path = join(dirname(packageJson), manifest.bin?.node ?? 'bin/node');
  if (!manifest.version || !existsSync(path)) return undefined;
  return { path, version: `v${manifest.version}` };
}

/**
 * The Node binary for a Lambda runtime: the `node` package's when it is on the runtime's major (the
 * version CI runs), else this process's when it is; else a NodeRuntimeError saying how to get one.
 */
export function nodeBinaryFor(runtime: string, lookup: NodeBinaryLookup = {}): NodeBinary {
  const major = nodeMajorOf(runtime);
  const current = lookup.current ?? { path: process.execPath, version: process.version };
  const packageJson = 'packageJson' in lookup ? lookup.packageJson : installedPackageJson();
  const packaged = packagedBinary(packageJson);
  if (packaged && majorOf(packaged.version) === major) return packaged;
  if (majorOf(current.version) === major) return current;
  const installed = packaged
    ? `the installed \`${RUNTIME_NODE_PACKAGE}\` package is ${packaged.version}`
    : `the devDependency \`${RUNTIME_NODE_PACKAGE}\` is not installed (or its install script did not run)`;
  throw new NodeRuntimeError(
    `functions run on ${runtime} on Lambda, so locally on Node ${major}: this is Node ${current.version} ` +
      `and ${installed}. Run \`${lookup.install?.(major) ?? 'npm ci'}\` (it installs Node ${major} into node_modules), or start on Node ${major}.`,
  );
}
