/**
 * Clients for the local servers and fresh, uniquely named tables and queues for each measurement,
 * shaped as the stack declares them. Every variant gets its own client instances with the same
 * configuration (the receiver's production client settings, pointed at loopback).
 */
import { randomBytes } from 'node:crypto';
import {
  CreateTableCommand,
  DynamoDBClient,
  ScanCommand,
  type ScanCommandOutput,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { boundedRequests } from '../lambdas/shared/request-timeouts.js';
import { CLAIMS_TABLE_SCHEMA, claimsTableDefinition } from '../lambdas/store/schema.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../local/emulators.js';
import { itemSizeBytes } from './capacity.js';

export interface Endpoints {
  readonly dynamoDbEndpoint: string;
  readonly sqsEndpoint: string;
  /** S3-compatible server for the processor's payload archive; the processor archives nothing without it. */
  readonly s3Endpoint?: string;
}

/** As in lambdas/receiver/handler.ts depsFromEnvironment: short timeouts, three attempts. */
const CLIENT_SETTINGS = {
  region: LOCAL_REGION,
  credentials: LOCAL_CREDENTIALS,
  maxAttempts: 3,
  requestHandler: boundedRequests(2_000),
} as const;

export const uniqueName = (prefix: string): string => `bench-${prefix}-${randomBytes(4).toString('hex')}`;

export function dynamoClient(endpoints: Endpoints): DynamoDBClient {
  return new DynamoDBClient({ ...CLIENT_SETTINGS, endpoint: endpoints.dynamoDbEndpoint });
}

export function sqsClient(endpoints: Endpoints): SQSClient {
  return new SQSClient({ ...CLIENT_SETTINGS, endpoint: endpoints.sqsEndpoint });
}

/** Path-style, as the local stack configures the processor (ARCHIVE_FORCE_PATH_STYLE) for s3rver. */
export function s3Client(endpoint: string): S3Client {
  return new S3Client({ ...CLIENT_SETTINGS, endpoint, forcePathStyle: true });
}

export async function createBucket(client: S3Client): Promise<string> {
  const name = uniqueName('archive');
  await client.send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

/** Objects in a bucket and their mean size in bytes. */
export async function bucketObjects(
  client: S3Client,
  bucket: string,
): Promise<{ count: number; meanBytes: number }> {
  let count = 0;
  let bytes = 0;
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
    for (const object of page.Contents ?? []) {
      count++;
      bytes += object.Size ?? 0;
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return { count, meanBytes: count === 0 ? 0 : Math.round(bytes / count) };
}

/** A table with a string partition key, on demand, with an optional TTL attribute. */
export async function createTable(
  client: DynamoDBClient,
  prefix: string,
  options: { keyName?: string; ttlAttribute?: string; claims?: boolean } = {},
): Promise<string> {
  const name = uniqueName(prefix);
  const keyName = options.keyName ?? 'pk';
  await client.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      // The claims table as the stack declares it, index of unfinished claims included: its writes count.
      ...(options.claims
        ? claimsTableDefinition()
        : {
            AttributeDefinitions: [{ AttributeName: keyName, AttributeType: 'S' as const }],
            KeySchema: [{ AttributeName: keyName, KeyType: 'HASH' as const }],
          }),
    }),
  );
  if (options.ttlAttribute) {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: name,
        TimeToLiveSpecification: { AttributeName: options.ttlAttribute, Enabled: true },
      }),
    );
  }
  return name;
}

export function createClaimsTable(client: DynamoDBClient): Promise<string> {
  return createTable(client, 'claims', {
    keyName: CLAIMS_TABLE_SCHEMA.partitionKey,
    ttlAttribute: CLAIMS_TABLE_SCHEMA.ttlAttribute,
    claims: true,
  });
}

export async function createQueue(client: SQSClient, prefix: string): Promise<string> {
  const result = await client.send(
    new CreateQueueCommand({ QueueName: uniqueName(prefix), Attributes: { VisibilityTimeout: '300' } }),
  );
  if (!result.QueueUrl) throw new Error('CreateQueue returned no URL');
  return result.QueueUrl;
}

/** The largest item in a table, by DynamoDB's size rules: checks the "<= 1 KB" assumption. */
export async function maxItemBytes(client: DynamoDBClient, tableName: string): Promise<number> {
  let max = 0;
  let startKey: ScanCommandOutput['LastEvaluatedKey'];
  do {
    const page = await client.send(
      new ScanCommand({ TableName: tableName, ExclusiveStartKey: startKey, ConsistentRead: true }),
    );
    for (const item of page.Items ?? []) max = Math.max(max, itemSizeBytes(item));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return max;
}
