/**
 * The stack under soak: `npm start` of a checkout (this repository, or an older commit's worktree),
 * synthesized with the soak's effect services as the example's ledger and mailer (`-c ledgerUrl`,
 * `-c mailerUrl`, as bin/app.ts reads them), then started with the knobs and the fault points
 * (`LOCAL_SKIP_SYNTH`, `LOCAL_CDK_OUT`, `LOCAL_OUTPUTS_FILE`, `PORT=0`). Its output goes to a log file
 * the report quotes from. Stopped by process group, as Ctrl-C stops it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SoakStack {
  readonly outputs: Readonly<Record<string, string>>;
  readonly env: NodeJS.ProcessEnv;
  readonly logFile: string;
  /** The log so far (the whole file). */
  log(): string;
  stop(): Promise<void>;
}

export interface SoakStackOptions {
  /** The checkout to run (its own node_modules). */
  readonly dir: string;
  readonly workDir: string;
  readonly effectUrls: Readonly<Record<string, string>>;
  /** Knobs and FAULT_POINTS. */
  readonly env: Readonly<Record<string, string>>;
  readonly startTimeoutMs?: number;
}

function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv, log: string) {
  return new Promise<void>((resolve, reject) => {
    const out = createWriteStream(log, { flags: 'a' });
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    child.once('error', reject);
    child.once('exit', (code) => {
      out.end();
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} exited ${code}: see ${log}`));
    });
  });
}

export async function startSoakStack(options: SoakStackOptions): Promise<SoakStack> {
  const cdkOut = join(options.workDir, 'cdk.out');
  const outputsFile = join(options.workDir, 'cdk-outputs.local.json');
  const logFile = join(options.workDir, 'stack.log');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    CDK_DISABLE_VERSION_CHECK: 'true',
    LOCAL_OUTPUTS_FILE: outputsFile,
    LOCAL_CDK_OUT: cdkOut,
    ...options.env,
  };
  const context = Object.entries(options.effectUrls).flatMap(([name, url]) => ['-c', `${name}Url=${url}`]);
  await run(
    join(options.dir, 'node_modules', '.bin', 'cdk'),
    ['synth', '--quiet', '--output', cdkOut, ...context],
    options.dir,
    env,
    logFile,
  );

  const out = createWriteStream(logFile, { flags: 'a' });
  const child: ChildProcess = spawn('npm', ['start'], {
    cwd: options.dir,
    // The soak's own effect services are the ledger and the mailer: the local stack calls their URLs
    // instead of its sink (a checkout from before LOCAL_REAL_EFFECTS called every URL anyway).
    env: { ...env, LOCAL_SKIP_SYNTH: '1', PORT: '0', LOCAL_REAL_EFFECTS: '*' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(out, { end: false });
  child.stderr?.pipe(out, { end: false });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const stop = async () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid, 'SIGTERM');
      const killed = setTimeout(() => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }, 20_000);
      await exited;
      clearTimeout(killed);
    }
    out.end();
  };

  const deadline = Date.now() + (options.startTimeoutMs ?? 180_000);
  for (;;) {
    if (existsSync(outputsFile) && log().includes('ready:')) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the stack did not start (see ${logFile}):\n${log().slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const all = JSON.parse(readFileSync(outputsFile, 'utf8')) as Record<string, Record<string, string>>;
  return { outputs: Object.values(all)[0] ?? {}, env, logFile, log, stop };
}
