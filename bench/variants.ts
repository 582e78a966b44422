/**
 * What is measured, side by side, each on its own fresh table and queue and its own client instances
 * (same configuration):
 *
 * - `ours`: the receiver Lambda handler as deployed (createReceiverHandler: middy, Powertools logger and
 *   metrics, the core, DynamoClaimStore, SqsEventQueue), silenced logs and metrics.
 * - `oursUncounted`: the same with its duplicate counter off (`COUNT_DUPLICATES=false`, the
 *   construct's `countDuplicates: false`): a duplicate is its failed conditional write alone.
 * - `oursLean`: the counter off and no ENQUEUED mark (`MARK_ENQUEUED=false`, `markEnqueued: false`):
 *   a new event is its claim write and its send. Its duplicates here arrive before any processor took
 *   the event (nothing drains its queue while it is measured), so each sends a copy of its own.
 * - `bare`: the I/O floor of any idempotent receiver, no framework: one conditional PutItem keyed on the
 *   event id, then one SendMessage of the raw body. No signature check, no release on a failed send
 *   (an event is lost if SQS refuses it after the put): a floor, not a design.
 * - `bareOurIo`: the same floor with our receiver's three requests (conditional PutItem, SendMessage,
 *   conditional UpdateItem marking the claim queued), still no framework: separates what our design's
 *   extra round trip costs from what our code costs.
 * - `powertools`: the same receiver logic made idempotent with @aws-lambda-powertools/idempotency:
 *   the same middy + logger + metrics shell, our provider's `verify` and key rule, then `makeIdempotent`
 *   around the SendMessage with the DynamoDB persistence layer (its own table, key `id`, TTL
 *   `expiration`, the key taken from the payload with `eventKeyJmesPath`).
 *
 * And two processors, for the pipeline's capacity and duration: ours (createProcessorHandler with the
 * example handlers and, given an S3 endpoint, the payload archive as deployed) and a Powertools one (BatchProcessor + makeIdempotent around "write the payment
 * row, post to the ledger, send the receipt").
 */

import { randomUUID } from 'node:crypto';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import {
  ConditionalCheckFailedException,
  type DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import middy from '@middy/core';
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyStructuredResultV2,
  Context,
  SQSBatchResponse,
  SQSEvent,
  SQSRecord,
} from 'aws-lambda';
import { EXAMPLE_APPLIERS } from '../examples/payments/appliers/index.js';
import { exampleEffectAdapters } from '../examples/payments/effects.js';
import { HttpEffect } from '../lambdas/processor/effects.js';
import { createProcessorHandler, type ProcessorHandler } from '../lambdas/processor/runtime.js';
import { StateStore } from '../lambdas/processor/state-store.js';
import { stripeProvider } from '../lambdas/providers/stripe.js';
import { SqsEventQueue } from '../lambdas/queue/event-queue.js';
import { createReceiverHandler, type ReceiverHandler } from '../lambdas/receiver/handler.js';
import { deliveryFromEvent } from '../lambdas/receiver/http.js';
import { loadReceiverSettings } from '../lambdas/receiver/settings.js';
import { CLAIM_RETENTION_DEFAULT_SECONDS } from '../lambdas/shared/claim-retention.js';
import { buildIdempotencyKey, resolveKeyRule } from '../lambdas/shared/keys.js';
import { METRIC_NAMESPACE } from '../lambdas/shared/metric-names.js';
import { StaticSecretSource } from '../lambdas/shared/secrets.js';
import { DynamoClaimStore } from '../lambdas/store/dynamo-claim-store.js';
import { S3PayloadArchive } from '../lambdas/store/payload-archive.js';
import { ProcessingClaims } from '../lambdas/store/processing-claims.js';
import type { CapacityMeter, RequestCounter } from './capacity.js';
import {
  createBucket,
  createClaimsTable,
  createQueue,
  createTable,
  dynamoClient,
  type Endpoints,
  s3Client,
  sqsClient,
} from './resources.js';

export type VariantName = 'ours' | 'oursUncounted' | 'oursLean' | 'bare' | 'bareOurIo' | 'powertools';
export const VARIANTS: readonly VariantName[] = [
  'ours',
  'oursUncounted',
  'oursLean',
  'bare',
  'bareOurIo',
  'powertools',
];

export interface ReceiverVariant {
  readonly name: VariantName;
  readonly handler: ReceiverHandler;
  readonly dynamo: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly tableName: string;
  readonly queueUrl: string;
}

export interface VariantOptions {
  readonly secret: string;
  /** Capacity meter attached to the variant's DynamoDB client. */
  readonly meter?: CapacityMeter;
  /** Log level of the Powertools logger (SILENT for latency runs). */
  readonly logLevel?: 'SILENT' | 'INFO';
}

/** Stripe's retry window plus margin, as our provider module sets it (7 days). */
const CLAIM_TTL_SECONDS = stripeProvider.defaults.claimTtlSeconds;

function powertoolsShell(
  serviceName: string,
  logLevel: 'SILENT' | 'INFO',
): { logger: Logger; metrics: Metrics } {
  return {
    logger: new Logger({ serviceName, logLevel }),
    metrics: new Metrics({ namespace: METRIC_NAMESPACE, serviceName }),
  };
}

function json(statusCode: number, body: Record<string, unknown>): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

export async function createReceiverVariant(
  name: VariantName,
  endpoints: Endpoints,
  options: VariantOptions,
): Promise<ReceiverVariant> {
  const dynamo = dynamoClient(endpoints);
  if (options.meter) options.meter.attach(dynamo);
  const sqs = sqsClient(endpoints);
  const queueUrl = await createQueue(sqs, `${name}-events`);
  const logLevel = options.logLevel ?? 'SILENT';
  switch (name) {
    case 'ours':
    case 'oursUncounted':
    case 'oursLean': {
      const tableName = await createClaimsTable(dynamo);
      const settings = loadReceiverSettings({
        CLAIMS_TABLE_NAME: tableName,
        EVENT_QUEUE_URL: queueUrl,
        // The same receiver with its duplicate counter off (the construct's countDuplicates: false).
        ...(name === 'oursUncounted' ? { COUNT_DUPLICATES: 'false' } : {}),
        // And without the ENQUEUED mark (markEnqueued: false).
        ...(name === 'oursLean' ? { COUNT_DUPLICATES: 'false', MARK_ENQUEUED: 'false' } : {}),
      });
      const handler = createReceiverHandler({
        deps: () => ({
          settings,
          store: new DynamoClaimStore({ client: dynamo, tableName }),
          queue: new SqsEventQueue({ client: sqs, queueUrl }),
          secrets: new StaticSecretSource({ stripe: [options.secret] }),
        }),
        ...powertoolsShell('webhook-receiver', logLevel),
      });
      return { name, handler, dynamo, sqs, tableName, queueUrl };
    }
    case 'bare':
    case 'bareOurIo': {
      const tableName = await createTable(dynamo, name, { ttlAttribute: 'expiresAt' });
      const handler = bareReceiver(dynamo, sqs, tableName, queueUrl, name === 'bareOurIo');
      return { name, handler, dynamo, sqs, tableName, queueUrl };
    }
    case 'powertools': {
      const tableName = await createTable(dynamo, 'powertools', {
        keyName: 'id',
        ttlAttribute: 'expiration',
      });
      const handler = powertoolsReceiver(dynamo, sqs, tableName, queueUrl, options.secret, logLevel);
      return { name, handler, dynamo, sqs, tableName, queueUrl };
    }
  }
}

function bareReceiver(
  dynamo: DynamoDBClient,
  sqs: SQSClient,
  tableName: string,
  queueUrl: string,
  markEnqueued: boolean,
): ReceiverHandler {
  return async (event) => {
    const body = event.body ?? '';
    const pk = { S: `stripe:${String((JSON.parse(body) as { id?: unknown }).id)}` };
    const token = { S: randomUUID() };
    try {
      await dynamo.send(
        new PutItemCommand({
          TableName: tableName,
          Item: {
            pk,
            expiresAt: { N: String(Math.floor(Date.now() / 1000) + CLAIM_TTL_SECONDS) },
            ...(markEnqueued ? { status: { S: 'RECEIVED' }, leaseToken: token } : {}),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return json(200, { outcome: 'duplicate' });
      throw error;
    }
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    if (markEnqueued) {
      await dynamo.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: { pk },
          UpdateExpression: 'SET #status = :enqueued, messageId = :id REMOVE leaseToken',
          ConditionExpression: 'leaseToken = :token',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':enqueued': { S: 'ENQUEUED' },
            ':id': { S: sent.MessageId ?? '' },
            ':token': token,
          },
        }),
      );
    }
    return json(200, { outcome: 'accepted' });
  };
}

/** What the Powertools variant queues: our idempotency key and the raw body. */
interface PowertoolsMessage {
  readonly key: string;
  readonly body: string;
}

function powertoolsReceiver(
  dynamo: DynamoDBClient,
  sqs: SQSClient,
  tableName: string,
  queueUrl: string,
  secret: string,
  logLevel: 'SILENT' | 'INFO',
): ReceiverHandler {
  const { logger, metrics } = powertoolsShell('webhook-receiver', logLevel);
  const secrets = new StaticSecretSource({ stripe: [secret] });
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'key', expiresAfterSeconds: CLAIM_TTL_SECONDS });
  // The wrapped function runs only for a new key; `sent` tells the caller that it ran.
  const enqueue = makeIdempotent(
    async (message: PowertoolsMessage, sent: { value: boolean }) => {
      const result = await sqs.send(
        new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(message) }),
      );
      sent.value = true;
      return { messageId: result.MessageId ?? null };
    },
    {
      persistenceStore: new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: dynamo }),
      config,
    },
  );
  const rules = stripeProvider.defaults.keyRules;

  const handle = async (
    event: APIGatewayProxyEventV2,
    context: Context,
  ): Promise<APIGatewayProxyStructuredResultV2> => {
    config.registerLambdaContext(context);
    const delivery = deliveryFromEvent(event);
    const rawBody = Buffer.from(delivery.body ?? '', delivery.isBase64Encoded ? 'base64' : 'utf8');
    const request = { headers: delivery.headers, rawBody };
    const verification = stripeProvider.verify(request, {
      secrets: await secrets.getSecrets('stripe'),
      nowSeconds: Math.floor(Date.now() / 1000),
    });
    if (!verification.ok) return json(401, { outcome: 'invalid_signature', reason: verification.reason });
    const extracted = stripeProvider.extract(request);
    if (!extracted.ok) return json(400, { outcome: 'malformed', reason: extracted.reason });
    const key = buildIdempotencyKey(
      'stripe',
      extracted.event,
      resolveKeyRule(rules, extracted.event.eventType),
    );
    if (!key.ok) return json(400, { outcome: 'malformed', reason: key.reason });
    const sent = { value: false };
    await enqueue({ key: key.key, body: rawBody.toString('utf8') }, sent);
    const outcome = sent.value ? 'accepted' : 'duplicate';
    logger.info('delivery', { provider: 'stripe', outcome, key: key.key });
    metrics.addDimension('provider', 'stripe');
    metrics.addMetric(sent.value ? 'Accepted' : 'Duplicate', MetricUnit.Count, 1);
    return json(200, { outcome, key: key.key });
  };
  return middy(handle)
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics)) as unknown as ReceiverHandler;
}

export type SqsBatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export interface ProcessorSetup {
  readonly handler: SqsBatchHandler;
  /** Business tables the processor writes, for the item-size check. */
  readonly tables: readonly string[];
  /** The payload archive, when the processor writes one (ours, as deployed, given an S3 endpoint). */
  readonly archive?: { readonly s3: S3Client; readonly bucket: string };
  /** Releases the processor's clients (their keep-alive sockets). */
  close(): void;
}

export interface ProcessorOptions {
  readonly ledgerUrl: string;
  readonly mailerUrl: string;
  readonly meter?: CapacityMeter;
  /** Counts the archive's S3 requests. */
  readonly s3Counter?: RequestCounter;
  readonly logLevel?: 'SILENT' | 'INFO';
}

/**
 * Our processor Lambda handler on the receiver's claims table and fresh business tables, archiving
 * each payload to S3 as the deployed stack does (ARCHIVE_BUCKET_NAME) when an S3 endpoint is given.
 */
export async function createOurProcessor(
  receiver: ReceiverVariant,
  endpoints: Endpoints,
  options: ProcessorOptions,
): Promise<ProcessorSetup> {
  // The processor has its own client in Lambda (processorDepsFromEnvironment): so here.
  const dynamo = dynamoClient(endpoints);
  if (options.meter) options.meter.attach(dynamo);
  const [payments, orders, resources] = await Promise.all([
    createTable(dynamo, 'payments'),
    createTable(dynamo, 'orders'),
    createTable(dynamo, 'resources'),
  ]);
  let archive: ProcessorSetup['archive'];
  if (endpoints.s3Endpoint) {
    const s3 = s3Client(endpoints.s3Endpoint);
    if (options.s3Counter) options.s3Counter.attach(s3);
    archive = { s3, bucket: await createBucket(s3) };
  }
  const handler: ProcessorHandler = createProcessorHandler({
    deps: () => ({
      claims: new ProcessingClaims(dynamo, receiver.tableName),
      state: new StateStore(dynamo, { payments, orders, resources }),
      appliers: EXAMPLE_APPLIERS,
      leaseSeconds: 120,
      maxReceiveCount: 5,
      claimRetentionSeconds: CLAIM_RETENTION_DEFAULT_SECONDS,
      effects: exampleEffectAdapters((name) => (name === 'ledger' ? options.ledgerUrl : options.mailerUrl)),
      ...(archive ? { archive: new S3PayloadArchive(archive.s3, archive.bucket) } : {}),
    }),
    ...powertoolsShell('webhook-processor', options.logLevel ?? 'SILENT'),
  });
  const close = () => {
    dynamo.destroy();
    archive?.s3.destroy();
  };
  return { handler, tables: [payments], close, ...(archive ? { archive } : {}) };
}

/**
 * A Powertools processor for the Powertools receiver's messages: per record, makeIdempotent around
 * one conditional PutItem of the payment row (stale-order guard on the event time), the ledger post
 * and the receipt, with the same idempotency keys as ours. No step markers: a crash between the
 * ledger and the receipt re-runs the whole record once its in-progress lock expires.
 */
export async function createPowertoolsProcessor(
  endpoints: Endpoints,
  options: ProcessorOptions,
): Promise<ProcessorSetup> {
  const dynamo = dynamoClient(endpoints);
  if (options.meter) options.meter.attach(dynamo);
  const [payments, idempotency] = await Promise.all([
    createTable(dynamo, 'pt-payments'),
    createTable(dynamo, 'pt-processor', { keyName: 'id', ttlAttribute: 'expiration' }),
  ]);
  const ledger = new HttpEffect({ name: 'ledger', url: options.ledgerUrl, honoursIdempotencyKey: true });
  const mailer = new HttpEffect({ name: 'mailer', url: options.mailerUrl });
  const { logger } = powertoolsShell('webhook-processor', options.logLevel ?? 'SILENT');
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'key', expiresAfterSeconds: CLAIM_TTL_SECONDS });

  const apply = makeIdempotent(
    async (message: PowertoolsMessage) => {
      const event = JSON.parse(message.body) as {
        id: string;
        created: number;
        data: { object: Record<string, unknown> };
      };
      const intent = event.data.object;
      const payment = `stripe:platform:${String(intent.id)}`;
      try {
        await dynamo.send(
          new PutItemCommand({
            TableName: payments,
            Item: {
              pk: { S: payment },
              status: { S: String(intent.status) },
              amount: { N: String(intent.amount) },
              currency: { S: String(intent.currency) },
              lastEventId: { S: event.id },
              lastEventCreated: { N: String(event.created) },
            },
            ConditionExpression: 'attribute_not_exists(pk) OR lastEventCreated < :at',
            ExpressionAttributeValues: { ':at': { N: String(event.created) } },
          }),
        );
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) return { outcome: 'stale' };
        throw error;
      }
      const amount = Number(intent.amount_received ?? intent.amount);
      await ledger.call(
        { payment, provider: 'stripe', paymentIntent: intent.id, amount, currency: intent.currency },
        `${message.key}:ledger`,
      );
      await mailer.call(
        {
          template: 'payment-receipt',
          payment,
          customer: intent.customer,
          amount,
          currency: intent.currency,
        },
        `${message.key}:receipt`,
      );
      return { outcome: 'applied' };
    },
    {
      persistenceStore: new DynamoDBPersistenceLayer({ tableName: idempotency, awsSdkV3Client: dynamo }),
      config,
    },
  );

  const handle = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    config.registerLambdaContext(context);
    return processPartialResponse(
      event,
      async (record: SQSRecord) => apply(JSON.parse(record.body) as PowertoolsMessage),
      new BatchProcessor(EventType.SQS),
      { context, throwOnFullBatchFailure: false },
    );
  };
  const handler = middy(handle).use(
    injectLambdaContext(logger, { resetKeys: true }),
  ) as unknown as SqsBatchHandler;
  return { handler, tables: [payments, idempotency], close: () => dynamo.destroy() };
}
