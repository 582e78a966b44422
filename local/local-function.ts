/**
 * A locally running Lambda function: a pool of child processes (./function-host.ts), each importing
 * the synthesized bundle with the function's environment. Invocations queue for a free process, time
 * out after the function's timeout (the process is then replaced, as Lambda does), and log with a
 * prefix so the output of several functions stays readable. The processes run on the Node major of
 * the function's Lambda runtime (./node-runtime.ts), not on whichever Node started the local stack.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type NodeBinary, nodeBinaryFor } from './node-runtime.js';

export interface LocalFunctionOptions {
  readonly name: string;
  /** Absolute path of the bundle's entry file (index.mjs / index.js in the asset directory). */
  readonly entry: string;
  readonly handler: string;
  /** The function's Lambda runtime (`nodejs24.x`): its processes run on that Node major. */
  readonly runtime: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
  /** Execution environments started up front. @default 4 */
  readonly concurrency?: number;
  /** More are started on demand (a cold start, as on Lambda), up to this many. @default concurrency */
  readonly maxConcurrency?: number;
  readonly log?: (line: string) => void;
}

interface Worker {
  child: ChildProcess;
  /** Resolves with the host's Node version once the bundle is imported. */
  ready: Promise<string>;
  busy: boolean;
}

let nextId = 0;

/** Run from the sources (the repository) or compiled (dist/local/ of the package, `webhooks local`). */
const FROM_SOURCES = import.meta.url.endsWith('.ts');
const HOST_PATH = fileURLToPath(new URL(`./function-host.${FROM_SOURCES ? 'ts' : 'js'}`, import.meta.url));
/**
 * From the sources the host is TypeScript: loaded through tsx by absolute URL, so it starts the same
 * whatever started this process (a vitest worker, `tsx`, `node --import tsx`) and with none of its
 * flags (--inspect). Compiled, it is JavaScript, and an app using the package has no tsx.
 */
const HOST_EXEC_ARGV = FROM_SOURCES
  ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href]
  : [];

interface ReadyMessage {
  readonly type: 'ready';
  /** `process.version` of the host: what the function runs on. */
  readonly node: string;
}

export class LocalFunction {
  private readonly workers: Worker[] = [];
  private readonly waiting: Array<(worker: Worker) => void> = [];
  private stopped = false;
  // If this process exits without stop() (a deadline, an uncaught error), take the hosts with it:
  // a host busy in a handler would only notice the closed IPC channel when the handler returns.
  private readonly killOnExit = (): void => {
    for (const w of this.workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
  };

  private readonly node: NodeBinary;

  /** Throws a NodeRuntimeError when no Node of the runtime's major is installed. */
  constructor(private readonly options: LocalFunctionOptions) {
    this.node = nodeBinaryFor(options.runtime);
  }

  async start(): Promise<void> {
    process.on('exit', this.killOnExit);
    const count = this.options.concurrency ?? 4;
    for (let i = 0; i < count; i++) this.workers.push(this.spawnWorker());
    const versions = await Promise.all(this.workers.map((w) => w.ready));
    // What the hosts report, not what was asked for: the line shows what the function really runs on.
    this.options.log?.(
      `[${this.options.name}] ${this.options.runtime}: Node ${[...new Set(versions)].join(', ')} (${this.node.path})`,
    );
  }

  private spawnWorker(): Worker {
    const child = fork(HOST_PATH, [], {
      execPath: this.node.path,
      execArgv: HOST_EXEC_ARGV,
      // Only the function's own environment (plus PATH), as on Lambda.
      env: { PATH: process.env.PATH ?? '', ...this.options.environment },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const prefix = `[${this.options.name}] `;
    const forward = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) if (line.trim()) this.options.log?.(prefix + line);
    };
    child.stdout?.on('data', forward);
    child.stderr?.on('data', forward);
    const ready = new Promise<string>((resolve, reject) => {
      const onMessage = (message: ReadyMessage | { type: 'init-error'; error: string }) => {
        if (message.type === 'ready') {
          child.off('message', onMessage);
          resolve(message.node);
        } else if (message.type === 'init-error') {
          child.off('message', onMessage);
          reject(new Error(`${this.options.name} failed to initialise: ${message.error}`));
        }
      };
      child.on('message', onMessage);
      child.once('exit', (code) =>
        reject(new Error(`${this.options.name} host exited (${code}) during init`)),
      );
    });
    ready.catch(() => undefined);
    child.send({
      type: 'init',
      entry: this.options.entry,
      handler: this.options.handler,
      functionName: this.options.name,
      timeoutMs: this.options.timeoutSeconds * 1000,
      memoryMb: this.options.memoryMb,
    });
    return { child, ready, busy: false };
  }

  private acquire(): Promise<Worker> {
    const free = this.workers.find((w) => !w.busy);
    if (free) {
      free.busy = true;
      return Promise.resolve(free);
    }
    const max = Math.max(this.options.maxConcurrency ?? 0, this.options.concurrency ?? 4);
    if (this.workers.length < max) {
      const cold = this.spawnWorker();
      cold.busy = true;
      this.workers.push(cold);
      return Promise.resolve(cold);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private releaseWorker(worker: Worker): void {
    const next = this.waiting.shift();
    if (next) next(worker);
    else worker.busy = false;
  }

  /** Invokes the function with an event; resolves with its result, rejects with its error. */
  async invoke<T = unknown>(event: unknown): Promise<T> {
    if (this.stopped) throw new Error(`${this.options.name} is stopped`);
    let worker = await this.acquire();
    await worker.ready;
    const id = ++nextId;
    const requestId = randomUUID();
    try {
      return await new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          cleanup();
          // A timed-out execution environment is not reused: replace the process.
          worker.child.kill('SIGKILL');
          const index = this.workers.indexOf(worker);
          const replacement = this.spawnWorker();
          replacement.busy = true;
          if (index >= 0) this.workers[index] = replacement;
          worker = replacement;
          reject(new Error(`${this.options.name} timed out after ${this.options.timeoutSeconds} s`));
        }, this.options.timeoutSeconds * 1000);
        const onMessage = (message: { type: string; id?: number; result?: T; error?: string }) => {
          if (message.type !== 'result' || message.id !== id) return;
          cleanup();
          if (message.error !== undefined) reject(new Error(message.error));
          else resolve(message.result as T);
        };
        const onExit = () => {
          cleanup();
          // A crashed execution environment is replaced too, as Lambda does, unless stopping.
          if (!this.stopped) {
            const index = this.workers.indexOf(worker);
            const replacement = this.spawnWorker();
            replacement.busy = true;
            if (index >= 0) this.workers[index] = replacement;
            worker = replacement;
          }
          reject(new Error(`${this.options.name} process exited during an invocation`));
        };
        const cleanup = () => {
          clearTimeout(timer);
          worker.child.off('message', onMessage);
          worker.child.off('exit', onExit);
        };
        worker.child.on('message', onMessage);
        worker.child.once('exit', onExit);
        worker.child.send({ type: 'invoke', id, event, requestId });
      });
    } finally {
      this.releaseWorker(worker);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    process.removeListener('exit', this.killOnExit);
    await Promise.all(
      this.workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.child.exitCode !== null || w.child.signalCode !== null) return resolve();
            w.child.once('exit', () => resolve());
            w.child.kill('SIGTERM');
            setTimeout(() => w.child.kill('SIGKILL'), 2_000).unref();
          }),
      ),
    );
  }
}
