/**
 * Starts the local stack as a user does, `npm start` in a child process (its own process group,
 * port, outputs file and cdk.out), waits for its outputs file and "ready", and stops the whole group.
 * Shared by the end-to-end suites; bounded waits print the stack's log when they time out.
 */

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { BUILT_IN_PROVIDERS } from '../../lambdas/providers/index.js';
import { TEST_SECRETS } from './signing.js';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');

export interface LocalStackProcess {
  /** The environment the stack runs with (pass it to `npm run send` / the CLI so they find it). */
  readonly env: NodeJS.ProcessEnv;
  readonly outputs: Readonly<Record<string, string>>;
  /** The process id of `npm start` itself (the group leader). */
  readonly pid: number;
  /** Resolves when `npm start` has exited. */
  readonly exited: Promise<void>;
  log(): string;
  /** Polls `probe` every 200 ms until it returns a value; throws with the stack's log on timeout. */
  waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs?: number): Promise<T>;
  stop(): Promise<void>;
  /** Runs the repository's `webhooks` CLI against this stack, as a user's shell would; never throws. */
  webhooks(...args: string[]): Promise<CliRun>;
}

/** What one run of the `webhooks` CLI printed, and its exit code (-1 when it did not exit by itself). */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node cli/webhooks.mjs ARGS` from the repository with `env`, for at most a minute. */
export async function runWebhooksCli(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<CliRun> {
  try {
    const { stdout, stderr } = await promisify(execFile)('node', ['cli/webhooks.mjs', ...args], {
      cwd: REPO_ROOT,
      env,
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: unknown; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

export async function startLocalStackProcess(
  extraEnv: Record<string, string>,
  name = 'webhooks-e2e',
): Promise<LocalStackProcess> {
  const workDir = mkdtempSync(join(tmpdir(), `${name}-`));
  const outputsFile = join(workDir, 'cdk-outputs.local.json');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LOCAL_OUTPUTS_FILE: outputsFile,
    // Its own cdk.out, so suites that start a stack at the same time do not synthesize over each other.
    LOCAL_CDK_OUT: join(workDir, 'cdk.out'),
    // Each built-in provider's variable (its module's `secret.envVar`) holds the test secret.
    ...Object.fromEntries(
      BUILT_IN_PROVIDERS.map((provider) => [provider.secret.envVar, TEST_SECRETS[provider.id]]),
    ),
    ...extraEnv,
  };
  let log = '';
  const child: ChildProcess = spawn('npm', ['start'], {
    cwd: REPO_ROOT,
    // Port 0: the stack binds whatever the kernel gives it and writes the URLs it got to the outputs
    // file. A port chosen here would sit unbound through the synth, free for anyone to take.
    env: { ...env, PORT: '0' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.stdout?.on('data', (c: Buffer) => {
    log += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    log += c.toString();
  });

  const waitFor = async <T>(
    what: string,
    probe: () => Promise<T | undefined>,
    timeoutMs = 20_000,
  ): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${what}\n--- local stack log ---\n${log.slice(-4000)}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const stop = async () => {
    if (child.pid && child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid, 'SIGTERM');
      await exited;
    }
  };

  try {
    await waitFor(
      'the outputs file',
      async () => (existsSync(outputsFile) && log.includes('ready:') ? true : undefined),
      150_000,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  const all = JSON.parse(readFileSync(outputsFile, 'utf8')) as Record<string, Record<string, string>>;
  return {
    env,
    outputs: Object.values(all)[0] ?? {},
    pid: child.pid ?? 0,
    exited,
    log: () => log,
    waitFor,
    stop,
    webhooks: (...args) => runWebhooksCli(env, args),
  };
}
