/**
 * Clients for the local servers started by global-setup.ts, and factories for uniquely named
 * tables and queues so test files never share state.
 */
import { randomBytes } from 'node:crypto';
import {
  CreateTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { inject, vi } from 'vitest';
import { businessTableDefinition } from '../../lambdas/processor/state-store.js';
import { allObjectKeys } from '../../lambdas/store/object-listing.js';
import { CLAIMS_TABLE_SCHEMA, claimsTableDefinition } from '../../lambdas/store/schema.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/emulators.js';

export const uniqueName = (prefix: string): string => `${prefix}-${randomBytes(5).toString('hex')}`;

/**
 * Points the SDK's default clients (the functions' production wiring) at local servers: the region,
 * the local credentials, and each endpoint given by service (`{ DYNAMODB: ... }` sets
 * `AWS_ENDPOINT_URL_DYNAMODB`). With `vi.stubEnv`: `vi.unstubAllEnvs()` undoes it.
 */
export function stubLocalAwsEnvironment(endpoints: Readonly<Record<string, string>>): void {
  vi.stubEnv('AWS_REGION', LOCAL_REGION);
  vi.stubEnv('AWS_ACCESS_KEY_ID', LOCAL_CREDENTIALS.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', LOCAL_CREDENTIALS.secretAccessKey);
  for (const [service, endpoint] of Object.entries(endpoints))
    vi.stubEnv(`AWS_ENDPOINT_URL_${service}`, endpoint);
}

/**
 * s3rver by the name `localhost`: to an IP address the SDK sends path-style requests whatever
 * `forcePathStyle` says, and `<bucket>.localhost` resolves nowhere, so only that setting reaches it.
 */
export const s3EndpointByName = (): string => inject('s3Endpoint').replace('127.0.0.1', 'localhost');

export function dynamoClient(): DynamoDBClient {
  return new DynamoDBClient({
    endpoint: inject('dynamoDbEndpoint'),
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
}

export function sqsClient(): SQSClient {
  return new SQSClient({
    endpoint: inject('sqsEndpoint'),
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
}

/** Creates a claims table exactly as the stack declares it: partition key `pk`, TTL on `expiresAt`, the unfinished-claims index. */
export async function createClaimsTable(
  client: DynamoDBClient,
  name = uniqueName('claims'),
): Promise<string> {
  await client.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      ...claimsTableDefinition(),
    }),
  );
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: name,
      TimeToLiveSpecification: { AttributeName: CLAIMS_TABLE_SCHEMA.ttlAttribute, Enabled: true },
    }),
  );
  const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: name }));
  if (ttl.TimeToLiveDescription?.AttributeName !== CLAIMS_TABLE_SCHEMA.ttlAttribute) {
    throw new Error(`TTL was not enabled on ${name}`);
  }
  return name;
}

/** A business table as the stack declares them: partition key `pk`, on demand. */
export async function createTable(client: DynamoDBClient, prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  await client.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      ...businessTableDefinition(),
    }),
  );
  return name;
}

export async function createQueue(
  client: SQSClient,
  name = uniqueName('events'),
  attributes: Record<string, string> = {},
): Promise<string> {
  const result = await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  if (!result.QueueUrl) throw new Error('CreateQueue returned no URL');
  return result.QueueUrl;
}

/** An event queue with a DLQ through a real redrive policy. */
export async function createQueueWithDlq(
  client: SQSClient,
  options: { maxReceiveCount: number; visibilityTimeoutSeconds: number },
): Promise<{ queueUrl: string; dlqUrl: string }> {
  const dlqUrl = await createQueue(client, uniqueName('events-dlq'));
  const dlq = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }),
  );
  const queueUrl = await createQueue(client, uniqueName('events'), {
    VisibilityTimeout: String(options.visibilityTimeoutSeconds),
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: dlq.Attributes?.QueueArn,
      maxReceiveCount: options.maxReceiveCount,
    }),
  });
  return { queueUrl, dlqUrl };
}

/** Drains every visible message (short visibility so a second drain would see nothing new). */
export async function receiveAll(client: SQSClient, queueUrl: string): Promise<Message[]> {
  const messages: Message[] = [];
  for (;;) {
    const result = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 300,
      }),
    );
    if (!result.Messages?.length) return messages;
    messages.push(...result.Messages);
  }
}

/** Reads one message's body without hiding it (visibility timeout 0). */
export async function peekMessageBody(client: SQSClient, queueUrl: string): Promise<string> {
  const result = await client.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 1,
      WaitTimeSeconds: 0,
      VisibilityTimeout: 0,
    }),
  );
  const body = result.Messages?.[0]?.Body;
  if (body === undefined) throw new Error('no message to peek at');
  return body;
}

export { queueDepth } from '../../local/sqs-poller.js';

/**
 * The queue's depth (waiting + in flight) once every message sent to it is counted. The SQS
 * emulator counts a message only after a timer of its own fires, holding it as delayed until then
 * even on a queue without delay; under load that timer lags the send's answer, and a depth read at
 * once came out 5 for 6 messages sent (issue 31). So: poll until no message is delayed, then read.
 */
export async function settledQueueDepth(
  client: SQSClient,
  queueUrl: string,
  timeoutMs = 5_000,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { Attributes: counts = {} } = await client.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: [
          'ApproximateNumberOfMessages',
          'ApproximateNumberOfMessagesNotVisible',
          'ApproximateNumberOfMessagesDelayed',
        ],
      }),
    );
    const delayed = Number(counts.ApproximateNumberOfMessagesDelayed ?? 0);
    if (delayed === 0)
      return (
        Number(counts.ApproximateNumberOfMessages ?? 0) +
        Number(counts.ApproximateNumberOfMessagesNotVisible ?? 0)
      );
    if (Date.now() > deadline)
      throw new Error(`${queueUrl} still holds ${delayed} delayed message(s) after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export function s3Client(): S3Client {
  return new S3Client({
    endpoint: inject('s3Endpoint'),
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    forcePathStyle: true,
  });
}

export async function createBucket(client: S3Client, name = uniqueName('archive')): Promise<string> {
  await client.send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

export async function getObjectText(client: S3Client, bucket: string, key: string): Promise<string> {
  const result = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (await result.Body?.transformToString('utf8')) ?? '';
}

/** Every object key in the bucket, sorted. */
export async function bucketKeys(client: S3Client, bucket: string): Promise<string[]> {
  return (await allObjectKeys(client, { bucket })).sort();
}

/**
 * Runs `fn` with `onCommand` called before each command the client sends (its name and input, as
 * the caller built it), then takes it off the client again; `onCommand` may throw, to fail that
 * command as a server would, and the command waits for what it returns (another writer's write first).
 */
export async function withEachCommand<T>(
  client: DynamoDBClient,
  onCommand: (commandName: string, input: Readonly<Record<string, unknown>>) => unknown,
  fn: () => Promise<T>,
): Promise<T> {
  const name = uniqueName('each-command');
  client.middlewareStack.add(
    (next, context) => async (args) => {
      await onCommand(context.commandName ?? '?', (args.input ?? {}) as Record<string, unknown>);
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    return await fn();
  } finally {
    client.middlewareStack.remove(name);
  }
}

export function documentClient(client: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

export async function getItem(
  doc: DynamoDBDocumentClient,
  tableName: string,
  pk: string,
): Promise<Record<string, unknown> | undefined> {
  const result = await doc.send(new GetCommand({ TableName: tableName, Key: { pk }, ConsistentRead: true }));
  return result.Item;
}

export async function putItem(
  doc: DynamoDBDocumentClient,
  tableName: string,
  item: Record<string, unknown>,
): Promise<void> {
  await doc.send(new PutCommand({ TableName: tableName, Item: item }));
}

/** Another writer's move on an item: sets `values` on it, nothing else, unconditionally. */
export async function setAttributes(
  doc: DynamoDBDocumentClient,
  tableName: string,
  pk: string,
  values: Record<string, unknown>,
): Promise<void> {
  const names = Object.keys(values);
  await doc.send(
    new UpdateCommand({
      TableName: tableName,
      Key: { pk },
      UpdateExpression: `SET ${names.map((_name, i) => `#n${i} = :v${i}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(names.map((name, i) => [`#n${i}`, name])),
      ExpressionAttributeValues: Object.fromEntries(names.map((name, i) => [`:v${i}`, values[name]])),
    }),
  );
}

export async function scanAll(
  doc: DynamoDBDocumentClient,
  tableName: string,
): Promise<Record<string, unknown>[]> {
  const result = await doc.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
  return result.Items ?? [];
}
