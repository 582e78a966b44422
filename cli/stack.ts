/**
 * Which stack the CLI works on, and AWS clients for it. Locally: the outputs file `npm start`
 * writes (`LOCAL_OUTPUTS_FILE`, else cdk-outputs.local.json in the working directory) and the
 * emulators' endpoints, with throwaway credentials. Deployed (`--stack NAME`): the same output names
 * read with CloudFormation `DescribeStacks`, the default credential chain and region, no endpoints.
 */
import { existsSync, readFileSync } from 'node:fs';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localOutputsFile as localOutputsFileOf } from '../local/settings.js';
import { CliError, describeAwsError } from './errors.js';

const LOCAL_REGION = 'us-east-1';
/** The emulators accept any credentials; these keep the SDK from looking for real ones. */
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

export type StackOutputs = Readonly<Record<string, string>>;

export interface StackContext {
  readonly name: string;
  /** Running on the emulators of `npm start`. */
  readonly local: boolean;
  /** For messages: `the local stack` or `stack NAME`. */
  readonly label: string;
  readonly outputs: StackOutputs;
  readonly doc: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly s3: S3Client;
  /** An output's value; a CliError naming it when the stack has none. */
  output(name: string): string;
  destroy(): void;
}

/** `LOCAL_OUTPUTS_FILE`, else cdk-outputs.local.json in the working directory (local/settings.ts). */
export function localOutputsFile(env: NodeJS.ProcessEnv = process.env): string {
  return localOutputsFileOf(env);
}

/** The first stack of an outputs file in the shape of `cdk deploy --outputs-file`. */
export function readOutputsFile(file: string): {
  readonly stackName: string;
  readonly outputs: StackOutputs;
} {
  if (!existsSync(file))
    throw new CliError(
      `no outputs file at ${file}: start the local stack with npx webhooks local (npm start in the repository), or pass --stack NAME`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CliError(`cannot read the outputs file ${file}: ${(error as Error).message}`);
  }
  const entry =
    typeof parsed === 'object' && parsed !== null
      ? Object.entries(parsed as Record<string, unknown>)[0]
      : undefined;
  if (!entry || typeof entry[1] !== 'object' || entry[1] === null)
    throw new CliError(`the outputs file ${file} names no stack: restart the local stack`);
  const outputs: Record<string, string> = {};
  for (const [name, value] of Object.entries(entry[1] as Record<string, unknown>)) {
    if (typeof value === 'string') outputs[name] = value;
  }
  return { stackName: entry[0], outputs };
}

export async function describeStackOutputs(
  stackName: string,
  client: CloudFormationClient = new CloudFormationClient({}),
): Promise<StackOutputs> {
  try {
    const result = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    const stack = result.Stacks?.[0];
    if (!stack) throw new CliError(`stack ${stackName} not found`);
    const outputs: Record<string, string> = {};
    for (const output of stack.Outputs ?? []) {
      if (output.OutputKey && output.OutputValue !== undefined)
        outputs[output.OutputKey] = output.OutputValue;
    }
    return outputs;
  } catch (error) {
    if (error instanceof CliError) throw error;
    if ((error as Error).name === 'ValidationError' && /does not exist/.test((error as Error).message)) {
      const region = await client.config.region().catch(() => 'the default region');
      throw new CliError(`stack ${stackName} not found in ${region}`);
    }
    throw describeAwsError(error, `CloudFormation (stack ${stackName})`) ?? error;
  } finally {
    client.destroy();
  }
}

export interface OpenStackOptions {
  /** `--stack NAME`: a deployed stack. Absent: the local outputs file. */
  readonly stack?: string | undefined;
  readonly env?: NodeJS.ProcessEnv;
}

export async function openStack(options: OpenStackOptions = {}): Promise<StackContext> {
  const env = options.env ?? process.env;
  let name: string;
  let outputs: StackOutputs;
  if (options.stack) {
    name = options.stack;
    outputs = await describeStackOutputs(options.stack);
  } else {
    ({ stackName: name, outputs } = readOutputsFile(localOutputsFile(env)));
  }
  // A file written by `cdk deploy --outputs-file` has no Local* endpoints: talk to AWS then.
  const local = !options.stack && outputs.LocalDynamoDbEndpoint !== undefined;
  const base = local ? { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS } : {};
  const endpoint = (output: string) => {
    const value = outputs[output];
    if (local && !value)
      throw new CliError(`the local outputs file has no ${output}: restart the local stack`);
    return local ? { endpoint: value } : {};
  };
  const dynamo = new DynamoDBClient({ ...base, ...endpoint('LocalDynamoDbEndpoint') });
  const doc = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  const sqs = new SQSClient({ ...base, ...endpoint('LocalSqsEndpoint') });
  // s3rver serves path-style URLs only.
  const s3 = new S3Client({
    ...base,
    ...(local ? { ...endpoint('LocalS3Endpoint'), forcePathStyle: true } : {}),
  });
  const label = local ? 'the local stack' : `stack ${name}`;
  return {
    name,
    local,
    label,
    outputs,
    doc,
    sqs,
    s3,
    output(output) {
      const value = outputs[output];
      if (!value)
        throw new CliError(`${label} has no output ${output} (deployed before this CLI? run cdk deploy)`);
      return value;
    },
    destroy() {
      // The document client's destroy() leaves the client it wraps open.
      dynamo.destroy();
      sqs.destroy();
      s3.destroy();
    },
  };
}

/** Runs an AWS call, turning expected failures (unreachable, denied, missing) into one-line errors. */
export async function aws<T>(
  stack: Pick<StackContext, 'label'>,
  what: string,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw describeAwsError(error, `${stack.label}: ${what}`) ?? error;
  }
}
