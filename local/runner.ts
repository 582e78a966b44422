/**
 * The local runner, shared by `npx webhooks local` (any app, from its directory) and `npm start`
 * (this repository's example app): checks what it needs (the emulators, Java), synthesizes the app,
 * picks the stack holding the construct, runs it on this machine (./stack.ts) and writes the outputs
 * file, until SIGINT, SIGTERM or SIGHUP (./shutdown.ts). Expected failures are LocalRunErrors, one
 * line each, which the caller prints after its own name (`npm start: ...`, `webhooks: ...`).
 *
 * Loaded by the CLI only when `webhooks local` runs, and it loads ./stack.ts (and through it the
 * emulators) only once they are known to be installed.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { HMAC_PROVIDERS_ENV, readHmacProviderConfigs } from '../lambdas/providers/configured.js';
import { ConfigError } from '../lambdas/shared/settings.js';
import { chooseReceiverStack, LocalRunError } from './assembly.js';
import { NodeRuntimeError, nodeBinaryFor } from './node-runtime.js';
import { FUNCTIONS_NODE_MAJOR, javaMajor, javaMessage, missingPeersMessage } from './peers.js';
import { isPortFree } from './ports.js';
import { LOCAL_ENV, loadLocalStartSettings } from './settings.js';
import { handleShutdown } from './shutdown.js';
import { defaultCdkOut, synthesize } from './synth.js';
import { localTimings, timingKnobs } from './timings.js';

export { LocalRunError } from './assembly.js';
export { nodeInstallHint } from './node-runtime.js';

export interface LocalRunOptions {
  /** The CDK app's directory: cdk.json, the default cdk.out, `--persist`'s .local-data/. */
  readonly appDirectory: string;
  /** The working directory: the outputs file and relative paths are resolved against it. */
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** `--app CMD`. @default cdk.json's `app` */
  readonly app?: string | undefined;
  /** `--cdk-out DIR`. @default LOCAL_CDK_OUT, else cdk.json's `output`, else cdk.out */
  readonly cdkOut?: string | undefined;
  /** `--no-synth`: run the assembly already in `cdkOut`. @default LOCAL_SKIP_SYNTH=1 */
  readonly noSynth?: boolean;
  /** `--stack NAME`, when several stacks hold the construct. */
  readonly stack?: string | undefined;
  /** `--port`. @default PORT, else 3000 */
  readonly port?: number | undefined;
  /** `--persist`: DynamoDB's data (and s3rver's) kept in <appDirectory>/.local-data/. */
  readonly persist?: boolean;
  /** What sets the port, for the port-in-use message: `PORT`. */
  readonly portSetting: string;
  /** The command line that starts the runner on another port, for the port-in-use message. */
  readonly onPort: (port: number) => string;
  /** How to install the functions' Node when it is missing. @default `npm ci` (the repository's) */
  readonly nodeInstall?: (major: number) => string;
  readonly log: (line: string) => void;
}

/**
 * Runs the local stack; resolves with the exit code once it has stopped (on a signal, or its parent
 * going away), rejects with a LocalRunError for an expected failure before it is up. The caller
 * exits the process with that code at once: a stop during start-up relies on it.
 */
export async function runLocal(options: LocalRunOptions): Promise<number> {
  const { env, log } = options;
  // Checked before anything loads the provider registry (./stack.ts does), so a bad config is one
  // line naming the variable and the field, not a stack trace.
  try {
    readHmacProviderConfigs(env[HMAC_PROVIDERS_ENV]);
  } catch (error) {
    throw new LocalRunError((error as Error).message);
  }
  // The development tools an app that only deploys does not install: one line saying what to.
  // In an app of one's own, Node 24 for the functions is one of them (the repository's `npm ci`
  // installs it, and the stack's own check says so there).
  const missing =
    missingPeersMessage({ nodeFound: options.nodeInstall ? functionsNodeFound() : true }) ??
    javaMessage(javaMajor());
  if (missing) throw new LocalRunError(missing);

  let port: number | undefined;
  try {
    const settings = loadLocalStartSettings(
      env,
      options.cwd,
      options.appDirectory,
      defaultCdkOut(options.appDirectory),
    );
    port = options.port ?? settings.port;
    const outdir = options.cdkOut === undefined ? settings.cdkOut : resolve(options.cwd, options.cdkOut);
    const skipSynth = options.noSynth === true || settings.skipSynth;
    const { outputsFile } = settings;
    // The timing knobs' rules that need no template (a lease longer than the visibility timeout, say),
    // before the synth; the rest are checked against the template when the stack starts.
    localTimings({}, timingKnobs(env));
    // The outputs file is not touched here: on a taken port, or stopped during start-up, this
    // process leaves alone the one a running stack wrote. The stack writes its own once it is up,
    // and removes it when it stops (./outputs-file.ts).
    // Before the synth, so a taken port is a one-line answer in a second, not after 15 s of bundling.
    if (port !== 0 && !(await isPortFree(port))) throw portInUse(options, port);
    if (!skipSynth) synthesize({ appDirectory: options.appDirectory, outdir, app: options.app, env, log });
    if (!existsSync(join(outdir, 'manifest.json')))
      throw new LocalRunError(
        `no cloud assembly in ${outdir} (no manifest.json): synthesize it (without --no-synth or ${LOCAL_ENV.skipSynth}=1), or name it with --cdk-out`,
      );
    const stack = chooseReceiverStack(outdir, options.stack);

    const { startLocalStack } = await import('./stack.js');
    let dataDirectory: string | undefined;
    if (options.persist) {
      dataDirectory = join(options.appDirectory, '.local-data');
      mkdirSync(dataDirectory, { recursive: true });
    }
    // Signals during start-up too: stop what was started, never leave Java or function hosts behind.
    // Before start-up finished, exiting runs the emulators' exit hooks (DynamoDB Local's process
    // group is killed) and the function hosts exit when their IPC channel closes.
    let running: Awaited<ReturnType<typeof startLocalStack>> | undefined;
    let stopping = false;
    let stopped: (code: number) => void = () => undefined;
    const done = new Promise<number>((resolveCode) => {
      stopped = resolveCode;
    });
    handleShutdown({
      log,
      stop: async () => {
        stopping = true;
        if (running) await running.stop();
      },
      exit: (code) => stopped(code),
    });

    const starting = startLocalStack({
      outdir: stack.outdir,
      stackName: stack.id,
      port,
      outputsFile,
      env,
      log,
      ...(options.nodeInstall ? { nodeInstall: options.nodeInstall } : {}),
      ...(dataDirectory ? { dataDirectory } : {}),
    });
    // Stopped during start-up: return at once, and the caller's exit ends the start-up where it is
    // (the exit hooks kill Java and the function hosts), so it never writes the outputs file.
    const first = await Promise.race([starting, done]);
    if (typeof first === 'number') return first;
    running = first;
    // Up just as a stop began, which found nothing to stop yet: stop it here (its outputs file too).
    if (stopping) {
      await running.stop();
      return done;
    }

    log('');
    for (const [name, value] of Object.entries(running.outputs)) {
      if (name.endsWith('WebhookUrl')) log(`  ${name.padEnd(20)} ${value}`);
    }
    log(`  ${'LocalEffectsUrl'.padEnd(20)} ${running.outputs.LocalEffectsUrl}`);
    log(`  outputs: ${outputsFile}${dataDirectory ? `, data kept in ${dataDirectory}` : ''}`);
    log(`ready: ${running.stackName} is running locally on ${running.baseUrl} (Ctrl-C to stop)`);
    return done;
  } catch (error) {
    const { code, port: errorPort } = error as { code?: string; port?: number };
    // Taken between the check before the synth and the listen.
    if (code === 'EADDRINUSE' && port !== undefined && errorPort === port) throw portInUse(options, port);
    // A bad variable (a knob breaking a timing rule, say) or no Node of the functions' runtime (the
    // message says how to get one) is one line, not a stack trace.
    if (error instanceof ConfigError || error instanceof NodeRuntimeError)
      throw new LocalRunError(error.message);
    throw error;
  }
}

/** Whether this machine has a Node of the construct's functions' major (./node-runtime.ts's rule). */
function functionsNodeFound(): boolean {
  try {
    nodeBinaryFor(`nodejs${FUNCTIONS_NODE_MAJOR}.x`);
    return true;
  } catch (error) {
    if (error instanceof NodeRuntimeError) return false;
    throw error;
  }
}

function portInUse(options: LocalRunOptions, port: number): LocalRunError {
  return new LocalRunError(
    `port ${port} on 127.0.0.1 is in use (${options.portSetting}). Stop what holds it, or pick another: ` +
      options.onPort(port === 65_535 ? port - 1 : port + 1),
  );
}
