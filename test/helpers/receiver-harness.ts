/**
 * A receiver core wired to a fresh claims table in DynamoDB Local and a fresh queue in the SQS
 * emulator: real servers over the wire, nothing mocked.
 */

import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { QueueMessage } from '../../lambdas/queue/event-message.js';
import { SqsEventQueue } from '../../lambdas/queue/event-queue.js';
import { type DeliveryResult, type ReceiverDeps, receiveDelivery } from '../../lambdas/receiver/core.js';
import {
  parseProviderSettings,
  RECEIVER_DEFAULTS,
  type ReceiverSettings,
} from '../../lambdas/receiver/settings.js';
import { StaticSecretSource } from '../../lambdas/shared/secrets.js';
import type { ClaimRecord } from '../../lambdas/store/claim.js';
import { DynamoClaimStore } from '../../lambdas/store/dynamo-claim-store.js';
import { S3PayloadArchive } from '../../lambdas/store/payload-archive.js';
import {
  createBucket,
  createClaimsTable,
  createQueue,
  documentClient,
  dynamoClient,
  getItem,
  receiveAll,
  s3Client,
  scanAll,
  settledQueueDepth,
  sqsClient,
} from './aws.js';
import { TEST_SECRETS } from './signing.js';

export interface LogEntry {
  readonly level: 'warn' | 'error';
  readonly message: string;
  readonly details: Record<string, unknown>;
}

export interface ReceiverHarness {
  readonly dynamo: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly doc: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly queueUrl: string;
  readonly store: DynamoClaimStore;
  readonly queue: SqsEventQueue;
  readonly s3: S3Client;
  /** The archive bucket claim checks go to (s3rver). */
  readonly archiveBucket: string;
  readonly archive: S3PayloadArchive;
  readonly settings: ReceiverSettings;
  readonly logs: LogEntry[];
  readonly deps: ReceiverDeps;
  deliver(
    provider: string,
    body: string,
    headers: Record<string, string>,
    options?: { deps?: Partial<ReceiverDeps>; isBase64Encoded?: boolean; method?: string; rawQuery?: string },
  ): Promise<DeliveryResult>;
  claim(pk: string): Promise<ClaimRecord | undefined>;
  claims(): Promise<ClaimRecord[]>;
  /** Receives (and hides) every message currently on the queue, parsed. */
  drain(): Promise<QueueMessage[]>;
  /** Messages waiting or in flight, once the emulator has counted every one sent (settledQueueDepth). */
  depth(): Promise<number>;
}

export async function createReceiverHarness(
  settingsOverride: Partial<ReceiverSettings> = {},
  existing: { tableName?: string; queueUrl?: string } = {},
): Promise<ReceiverHarness> {
  const dynamo = dynamoClient();
  const sqs = sqsClient();
  const s3 = s3Client();
  const [tableName, queueUrl, archiveBucket] = await Promise.all([
    existing.tableName ?? createClaimsTable(dynamo),
    existing.queueUrl ?? createQueue(sqs),
    createBucket(s3),
  ]);
  const archive = new S3PayloadArchive(s3, archiveBucket);
  const doc = documentClient(dynamo);
  const store = new DynamoClaimStore({ client: dynamo, tableName });
  const queue = new SqsEventQueue({ client: sqs, queueUrl });
  const settings: ReceiverSettings = {
    claimsTableName: tableName,
    eventQueueUrl: queueUrl,
    leaseSeconds: RECEIVER_DEFAULTS.leaseSeconds,
    hmacProviders: [],
    duplicateWaitMs: RECEIVER_DEFAULTS.duplicateWaitMs,
    duplicatePollMs: 20,
    countDuplicates: RECEIVER_DEFAULTS.countDuplicates,
    markEnqueued: RECEIVER_DEFAULTS.markEnqueued,
    maxBodyBytes: RECEIVER_DEFAULTS.maxBodyBytes,
    claimCheckThresholdBytes: RECEIVER_DEFAULTS.claimCheckThresholdBytes,
    archiveBucket,
    archiveForcePathStyle: true,
    claimRetentionSeconds: RECEIVER_DEFAULTS.claimRetentionSeconds,
    providers: parseProviderSettings(undefined),
    ...settingsOverride,
  };
  const logs: LogEntry[] = [];
  const deps: ReceiverDeps = {
    settings,
    store,
    queue,
    archive,
    // One test secret per provider that has one (a test adding a provider passes its own secrets).
    secrets: new StaticSecretSource(
      Object.fromEntries(Object.entries(TEST_SECRETS).map(([provider, secret]) => [provider, [secret]])),
    ),
    log: {
      warn: (message, details) => logs.push({ level: 'warn', message, details }),
      error: (message, details) => logs.push({ level: 'error', message, details }),
    },
  };
  return {
    dynamo,
    sqs,
    doc,
    tableName,
    queueUrl,
    store,
    queue,
    s3,
    archiveBucket,
    archive,
    settings,
    logs,
    deps,
    deliver: (provider, body, headers, options = {}) =>
      receiveDelivery(
        {
          providerId: provider,
          method: options.method ?? 'POST',
          headers,
          body: options.isBase64Encoded ? Buffer.from(body).toString('base64') : body,
          isBase64Encoded: options.isBase64Encoded ?? false,
          ...(options.rawQuery === undefined ? {} : { rawQuery: options.rawQuery }),
        },
        { ...deps, ...options.deps },
      ),
    claim: async (pk) => (await getItem(doc, tableName, pk)) as ClaimRecord | undefined,
    claims: async () => (await scanAll(doc, tableName)) as unknown as ClaimRecord[],
    drain: async () =>
      (await receiveAll(sqs, queueUrl)).map((m) => JSON.parse(m.Body ?? '{}') as QueueMessage),
    depth: () => settledQueueDepth(sqs, queueUrl),
  };
}
