/**
 * The defaults every Lambda shares: Node.js 24 on Graviton, an ESM bundle (run locally on Node 24 too),
 * an explicit log group with retention, and a role with no managed policies (each construct adds
 * exactly the statements its function needs).
 *
 * The framework's own functions (receiver, sweeper, default processor) run prebuilt bundles: the
 * package ships them in assets/, so an app that installs it needs neither esbuild nor the TypeScript
 * sources. From the repository's TypeScript sources they are built at synth time instead, so they
 * always match the sources. A user's `processorEntry` is bundled from the user's project by
 * NodejsFunction, with the same options; that needs esbuild (an optional peer dependency).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { AssetHashType, DockerImage, type Duration, type ILocalBundling, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import {
  ASSETS_DIR,
  BUNDLE_FILE,
  BUNDLE_HANDLER,
  BUNDLE_MAIN_FIELDS,
  BUNDLE_TARGET,
  ESM_REQUIRE_BANNER,
  FRAMEWORK_FUNCTIONS,
  type FrameworkFunction,
  frameworkBuildOptions,
  PACKAGE_NAME,
  packageRoot,
  RUNNING_FROM_SOURCES,
} from './lambda-bundle.js';

/** A module of the user's exporting `handler`, bundled from the user's project. */
export interface UserEntryCode {
  /** Path to the handler module (TypeScript or JavaScript) exporting `handler`. */
  readonly entry: string;
  /** @default the directory of `depsLockFilePath` */
  readonly projectRoot?: string;
  /** @default the nearest lock file (npm, yarn, pnpm, bun) in or above the entry's directory */
  readonly depsLockFilePath?: string;
}

/** The framework's own bundle by name, or a module of the user's. */
export type WebhookFunctionCode = { readonly framework: FrameworkFunction } | UserEntryCode;

/** The function's code cannot be built: a missing entry, lock file, esbuild or prebuilt bundle. */
/**
 * Lambda's quotas: "Total size of environment variables set: 4 KB".
 * https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html
 */
export const LAMBDA_ENVIRONMENT_MAX_BYTES = 4_096;
/** A value known only at deploy time (an ARN, a table name, a queue URL), counted as this many bytes. */
const DEPLOY_TIME_VALUE_BYTES = 128;

export class FunctionEnvironmentError extends Error {
  override readonly name = 'FunctionEnvironmentError';
}

/** A resolved template value's size, each deploy-time reference counted as a long ARN. */
function resolvedBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value).length;
  if (value !== null && typeof value === 'object') {
    const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
    if (join)
      return (
        join[1].reduce<number>((sum, part) => sum + resolvedBytes(part), 0) +
        join[0].length * (join[1].length - 1)
      );
  }
  return DEPLOY_TIME_VALUE_BYTES;
}

/**
 * About how large each variable of `environment` will be once deployed (name and value), each
 * deploy-time value counted as {@link DEPLOY_TIME_VALUE_BYTES}. Lambda refuses a deploy past its
 * 4 KB in all; the synth says so first.
 */
export function environmentSizes(
  scope: Construct,
  environment: Readonly<Record<string, string>>,
): Array<readonly [string, number]> {
  const stack = Stack.of(scope);
  return Object.entries(environment).map(
    // As JSON (`"name":"value",`): the quoting counted too, in case Lambda counts the set that way.
    ([name, value]) => [name, Buffer.byteLength(name) + resolvedBytes(stack.resolve(value)) + 6] as const,
  );
}

export class FunctionCodeError extends Error {
  override readonly name = 'FunctionCodeError';
}

export interface WebhookFunctionProps {
  readonly code: WebhookFunctionCode;
  readonly description: string;
  readonly timeout: Duration;
  readonly memorySize: number;
  readonly logRetention: logs.RetentionDays;
  /**
   * Run with `--enable-source-maps`: stack traces name the TypeScript sources, at about 20 ms more
   * per cold start (docs/performance.md). The bundles ship their source maps either way.
   * @default false
   */
  readonly sourceMaps?: boolean;
  readonly environment: Readonly<Record<string, string>>;
  /**
   * Concurrency reserved for this function, which is also its ceiling.
   * @default none: the function draws on the account's unreserved pool
   */
  readonly reservedConcurrentExecutions?: number;
}

/** A Lambda function with the project's runtime, bundle, log group and an empty role. */
export class WebhookFunction extends Construct {
  public readonly function: lambda.Function;
  public readonly role: iam.Role;
  public readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: WebhookFunctionProps) {
    super(scope, id);

    this.logGroup = new logs.LogGroup(this, 'LogGroup', { retention: props.logRetention });
    // No AWSLambdaBasicExecutionRole: it allows writing to any log group. This one may only write here.
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: props.description,
    });
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );

    const environment = {
      // Stack traces point at the TypeScript sources (the bundle ships its source map), when asked.
      ...(props.sourceMaps ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
      ...props.environment,
    };
    const sizes = environmentSizes(this, environment);
    const bytes = sizes.reduce((sum, [, size]) => sum + size, 0);
    if (bytes > LAMBDA_ENVIRONMENT_MAX_BYTES) {
      const largest = [...sizes].sort((a, b) => b[1] - a[1]).slice(0, 3);
      throw new FunctionEnvironmentError(
        `${this.node.path}: its environment takes about ${bytes} bytes (each deploy-time value counted as ` +
          `${DEPLOY_TIME_VALUE_BYTES}), over Lambda's ${LAMBDA_ENVIRONMENT_MAX_BYTES}; the largest: ` +
          largest.map(([name, size]) => `${name} ${size}`).join(', '),
      );
    }
    const common = {
      description: props.description,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      timeout: props.timeout,
      memorySize: props.memorySize,
      ...(props.reservedConcurrentExecutions === undefined
        ? {}
        : { reservedConcurrentExecutions: props.reservedConcurrentExecutions }),
      role: this.role,
      logGroup: this.logGroup,
      environment,
    };

    this.function =
      'framework' in props.code
        ? new lambda.Function(this, 'Function', {
            ...common,
            code: frameworkCode(props.code.framework),
            handler: BUNDLE_HANDLER,
          })
        : new nodejs.NodejsFunction(this, 'Function', {
            ...common,
            ...userEntryBundling(this, props.code),
            handler: 'handler',
            // SDK v3 reuses connections by default; the variable only mattered for v2.
            awsSdkConnectionReuse: false,
          });
    suppressRedundantRoleDependency(this.function);
  }
}

/**
 * cfn-lint's W3005 (a DependsOn that a Ref or GetAtt already implies) does not apply here: CDK's
 * lambda.Function depends on its role *construct*, so that the role's policies (DefaultPolicy) exist
 * before the function can first run; the role itself lands in DependsOn beside them, redundant with
 * the `Role` GetAtt and harmless. Suppressed on each function only (docs/rules.md), so the check still
 * covers every other resource, in this repository's templates and in users' alike.
 */
function suppressRedundantRoleDependency(fn: lambda.Function): void {
  (fn.node.defaultChild as lambda.CfnFunction).addMetadata('cfn-lint', {
    config: { ignore_checks: ['W3005'] },
  });
}

/**
 * The shipped bundle (compiled package), or, from the TypeScript sources, a bundle esbuild builds
 * at synth time into CDK's staging directory. The latter is skipped like any bundling when the stack
 * is not in `aws:cdk:bundling-stacks` (the infrastructure tests).
 */
function frameworkCode(name: FrameworkFunction): lambda.Code {
  const root = packageRoot(import.meta.url);
  if (!RUNNING_FROM_SOURCES) {
    const dir = join(root, ASSETS_DIR, name);
    if (!existsSync(join(dir, BUNDLE_FILE)))
      throw new FunctionCodeError(
        `the prebuilt ${name} bundle is missing (${join(dir, BUNDLE_FILE)}): build the package (npm run build)`,
      );
    return lambda.Code.fromAsset(dir);
  }
  const entry = join(root, FRAMEWORK_FUNCTIONS[name]);
  return lambda.Code.fromAsset(join(root, 'lambdas'), {
    // The hash of the bundle, not of the sources: it changes exactly when the deployed code does.
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never used: the local bundling below builds the bundle or throws.
      image: DockerImage.fromRegistry('dummy'),
      local: new FrameworkBundler(entry),
    },
  });
}

/**
 * Builds one framework bundle with esbuild (a devDependency of the repository). `entry` is a field,
 * not a closure variable, because CDK's in-process asset cache keys on the bundling options' JSON.
 */
class FrameworkBundler implements ILocalBundling {
  constructor(readonly entry: string) {}

  tryBundle(outputDir: string): boolean {
    const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
    esbuild.buildSync(frameworkBuildOptions(this.entry, outputDir));
    return true;
  }
}

/** Lock files NodejsFunction understands, in its order of preference. */
const LOCK_FILES = ['pnpm-lock.yaml', 'yarn.lock', 'bun.lock', 'bun.lockb', 'package-lock.json'];

function findLockFile(from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const found = LOCK_FILES.map((file) => join(dir, file)).find((file) => existsSync(file));
    if (found) return found;
    if (dirname(dir) === dir) return undefined;
  }
}

/** NodejsFunction props for a user's module, bundled from the user's project with the shared options. */
function userEntryBundling(
  scope: Construct,
  code: UserEntryCode,
): Pick<nodejs.NodejsFunctionProps, 'entry' | 'projectRoot' | 'depsLockFilePath' | 'bundling'> {
  const entry = resolve(code.entry);
  if (!existsSync(entry)) throw new FunctionCodeError(`processorEntry ${entry} does not exist`);
  const depsLockFilePath = code.depsLockFilePath
    ? resolve(code.depsLockFilePath)
    : findLockFile(dirname(entry));
  if (!depsLockFilePath)
    throw new FunctionCodeError(
      `no lock file (${LOCK_FILES.join(', ')}) in or above ${dirname(entry)}: processorEntry is bundled ` +
        'with its own project dependencies; install them first or pass processorBundling.depsLockFilePath',
    );
  const projectRoot = code.projectRoot ? resolve(code.projectRoot) : dirname(depsLockFilePath);
  // Without esbuild NodejsFunction would try Docker and fail with a message about Docker.
  if (Stack.of(scope).bundlingRequired && !esbuildInstalled(projectRoot))
    throw new FunctionCodeError(
      `processorEntry ${entry} is bundled with esbuild, which is not installed: run ` +
        `\`npm install --save-dev esbuild\` in ${projectRoot} (an optional peer dependency of ${PACKAGE_NAME})`,
    );
  return {
    entry,
    projectRoot,
    depsLockFilePath,
    bundling: {
      forceDockerBundling: false,
      format: nodejs.OutputFormat.ESM,
      target: BUNDLE_TARGET,
      mainFields: BUNDLE_MAIN_FIELDS,
      banner: ESM_REQUIRE_BANNER,
      minify: true,
      sourceMap: true,
      // The AWS SDK is bundled rather than taken from the runtime, as in the framework's bundles.
      externalModules: [],
    },
  };
}

/**
 * Whether NodejsFunction can run esbuild for this project: it runs `npx --no-install esbuild` in the
 * project root, or `esbuild` from PATH.
 */
function esbuildInstalled(projectRoot: string): boolean {
  try {
    createRequire(join(projectRoot, 'package.json')).resolve('esbuild');
    return true;
  } catch {
    const onPath = spawnSync('esbuild', ['--version'], { stdio: 'ignore' });
    return onPath.status === 0 && !onPath.error;
  }
}
