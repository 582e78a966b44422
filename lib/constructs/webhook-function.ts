/**
 * The defaults both Lambdas share: Node.js 24 on Graviton, a local esbuild ESM bundle that also runs
 * on Node 20, an explicit log group with retention, and a role with no managed policies (each
 * construct adds exactly the statements its function needs).
 */
import { fileURLToPath } from 'node:url';
import type { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/** The repository root: bundling runs from here (package-lock.json, tsconfig.json). */
export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** An entry module of this repository, by its path from the root (`lambdas/receiver/handler.ts`). */
export const projectPath = (relativePath: string): string =>
  fileURLToPath(new URL(`../../${relativePath}`, import.meta.url));

/**
 * @middy/core 6 is ESM-only, so the bundle is ESM; CommonJS dependencies bundled into it still call
 * `require`, which ESM lacks: the banner provides one.
 */
const ESM_REQUIRE_BANNER =
  "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

export interface WebhookFunctionProps {
  /** Path to the handler module (TypeScript or JavaScript) exporting `handler`. */
  readonly entry: string;
  readonly description: string;
  readonly timeout: Duration;
  readonly memorySize: number;
  readonly logRetention: logs.RetentionDays;
  readonly environment: Readonly<Record<string, string>>;
  /**
   * Concurrency reserved for this function, which is also its ceiling.
   * @default none: the function draws on the account's unreserved pool
   */
  readonly reservedConcurrentExecutions?: number;
}

/** A NodejsFunction with the project's runtime, bundling, log group and an empty role. */
export class WebhookFunction extends Construct {
  public readonly function: nodejs.NodejsFunction;
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

    this.function = new nodejs.NodejsFunction(this, 'Function', {
      entry: props.entry,
      handler: 'handler',
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
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: projectPath('package-lock.json'),
      // SDK v3 reuses connections by default; the variable only mattered for v2.
      awsSdkConnectionReuse: false,
      environment: {
        // Stack traces point at the TypeScript sources (the bundle ships its source map).
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
      bundling: {
        forceDockerBundling: false,
        format: nodejs.OutputFormat.ESM,
        // Node 20, not the runtime's 24: the same bundles are run locally on Node 20.
        target: 'node20',
        mainFields: ['module', 'main'],
        banner: ESM_REQUIRE_BANNER,
        minify: true,
        sourceMap: true,
        // The AWS SDK is bundled rather than taken from the runtime, because these bundles also run
        // locally where no SDK is provided. Whether bundling it is also faster on Lambda (cold start)
        // is measured in the benchmark issue.
        externalModules: [],
      },
    });
  }
}
