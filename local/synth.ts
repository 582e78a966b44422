/**
 * Synthesizes a CDK app into a cloud assembly for the local runner, as `cdk synth` would: the app
 * command is `--app`, else cdk.json's `app` in the app's directory. Through the app's own `aws-cdk`
 * CLI when it has one (its context handling, `cdk.context.json`, exactly), else by running the app
 * command itself with CDK_OUTDIR (and cdk.json's context), which is what the CLI does underneath.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { LocalRunError } from './assembly.js';

export interface SynthOptions {
  /** The app's directory: where cdk.json is looked for and the app command runs. */
  readonly appDirectory: string;
  /** Where the cloud assembly is written. */
  readonly outdir: string;
  /** `--app CMD`. @default cdk.json's `app` */
  readonly app?: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly log: (line: string) => void;
}

interface CdkJson {
  readonly app?: string;
  readonly output?: string;
  readonly context?: Record<string, unknown>;
}

/** cdk.json in `directory`, or undefined when there is none. */
export function readCdkJson(directory: string): CdkJson | undefined {
  const file = join(directory, 'cdk.json');
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as CdkJson;
  } catch (error) {
    throw new LocalRunError(`cannot read ${file}: ${(error as Error).message}`);
  }
}

/** The cloud assembly directory `cdk synth` would write: cdk.json's `output`, else cdk.out. */
export function defaultCdkOut(appDirectory: string): string {
  return resolve(appDirectory, readCdkJson(appDirectory)?.output ?? 'cdk.out');
}

/** The `cdk` CLI's entry point in the app's own node_modules (npm `aws-cdk`), if installed. */
export function appCdkCli(appDirectory: string): string | undefined {
  try {
    const manifest = createRequire(join(appDirectory, 'package.json')).resolve('aws-cdk/package.json');
    const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin?: { cdk?: string } };
    const entry = join(dirname(manifest), bin?.cdk ?? 'bin/cdk');
    return existsSync(entry) ? entry : undefined;
  } catch {
    return undefined;
  }
}

export function synthesize(options: SynthOptions): void {
  const cdkJson = readCdkJson(options.appDirectory);
  const app = options.app ?? cdkJson?.app;
  if (!app)
    throw new LocalRunError(
      `no cdk.json in ${options.appDirectory} and no --app: run it from your CDK app's directory, or pass --app "node app.mjs"`,
    );
  // Synthesis needs no AWS account; and no notice about newer CLI versions in a local run.
  const env = { ...options.env, CDK_DISABLE_VERSION_CHECK: 'true' };
  const cli = appCdkCli(options.appDirectory);
  let described: string;
  let result: ReturnType<typeof spawnSync>;
  if (cli) {
    described = options.app ? `npx cdk synth --app ${JSON.stringify(app)}` : 'npx cdk synth';
    options.log(`synthesizing the CDK app (${described})...`);
    result = spawnSync(
      process.execPath,
      [cli, 'synth', '--quiet', '--output', options.outdir, ...(options.app ? ['--app', options.app] : [])],
      { cwd: options.appDirectory, stdio: 'inherit', env },
    );
  } else {
    described = app;
    options.log(
      `synthesizing the CDK app (${app}, no aws-cdk CLI installed: CDK_OUTDIR=${options.outdir})...`,
    );
    const context = cdkJson?.context && Object.keys(cdkJson.context).length > 0 ? cdkJson.context : undefined;
    result = spawnSync(app, {
      cwd: options.appDirectory,
      stdio: 'inherit',
      shell: true,
      env: {
        ...env,
        CDK_OUTDIR: options.outdir,
        ...(context ? { CDK_CONTEXT_JSON: JSON.stringify(context) } : {}),
      },
    });
  }
  if (result.error) throw new LocalRunError(`cannot run ${described}: ${result.error.message}`);
  if (result.status !== 0)
    throw new LocalRunError(
      `synthesis failed: ${described} exited with ${result.status ?? result.signal}: see its messages above`,
    );
  if (!existsSync(join(options.outdir, 'manifest.json')))
    throw new LocalRunError(
      `${described} wrote no cloud assembly to ${options.outdir}: does the app call app.synth() and leave its outdir to CDK_OUTDIR?`,
    );
}
