/**
 * The receiver Lambda: API Gateway HTTP API (payload 2.0) -> receiver core -> HTTP answer.
 * A thin adapter: it builds the AWS clients once per container, logs one structured line per
 * delivery and emits EMF metrics per provider. All decisions are in ./core.ts.
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { isProviderId } from '../providers/types.js';
import { SqsEventQueue } from '../queue/event-queue.js';
import { faultInjector } from '../shared/faults.js';
import { invocationLogContext } from '../shared/log-context.js';
import {
  METRIC_NAMESPACE,
  PROVIDER_DIMENSION,
  RECEIVER_SERVICE,
  ReceiverMetric,
} from '../shared/metric-names.js';
import { boundedRequests } from '../shared/request-timeouts.js';
import { secretSourceFromEnvironment } from '../shared/secrets-manager.js';
import { DynamoClaimStore } from '../store/dynamo-claim-store.js';
import type { PayloadArchive } from '../store/payload-archive.js';
import { type DeliveryOutcome, type DeliveryResult, type ReceiverDeps, receiveDelivery } from './core.js';
import { deliveryFromEvent, toHttpResponse } from './http.js';
import { loadReceiverSettings } from './settings.js';

const OUTCOME_METRIC: Readonly<Record<DeliveryOutcome, string | undefined>> = {
  accepted: ReceiverMetric.Accepted,
  duplicate: ReceiverMetric.Duplicate,
  // Not a delivery of an event: counted in neither Received nor the duplicate ratio.
  handshake: undefined,
  invalid_signature: ReceiverMetric.InvalidSignature,
  malformed: ReceiverMetric.Malformed,
  method_not_allowed: ReceiverMetric.Malformed,
  payload_too_large: ReceiverMetric.PayloadTooLarge,
  in_flight: ReceiverMetric.InFlight,
  enqueue_failed: ReceiverMetric.Failed,
  not_configured: ReceiverMetric.Failed,
  internal_error: ReceiverMetric.Failed,
  unknown_provider: ReceiverMetric.UnknownProvider,
};

export interface ReceiverHandlerOptions {
  /** The core's dependencies, minus the log (the handler's logger serves). */
  readonly deps: () => Omit<ReceiverDeps, 'log'>;
  readonly logger?: Logger;
  readonly metrics?: Metrics;
}

export type ReceiverHandler = (
  event: APIGatewayProxyEventV2,
  context: import('aws-lambda').Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

export function createReceiverHandler(options: ReceiverHandlerOptions): ReceiverHandler {
  const logger = options.logger ?? new Logger({ serviceName: RECEIVER_SERVICE });
  const metrics =
    options.metrics ?? new Metrics({ namespace: METRIC_NAMESPACE, serviceName: RECEIVER_SERVICE });
  let deps: ReceiverDeps | undefined;

  const handle = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    const started = Date.now();
    let result: DeliveryResult;
    try {
      deps ??= { ...options.deps(), log: logger };
      result = await receiveDelivery(deliveryFromEvent(event), deps);
    } catch (error) {
      // Configuration errors land here (and are thrown again on the next call until fixed).
      logger.error('receiver could not handle the delivery', { error: error as Error });
      result = {
        statusCode: 500,
        outcome: 'internal_error',
        message: 'Internal error; the delivery was not accepted, please retry.',
        enqueued: 0,
      };
    }
    const latencyMs = Date.now() - started;
    record(result, latencyMs, logger, metrics);
    return toHttpResponse(result);
  };

  return middy(handle)
    .use(invocationLogContext(logger))
    .use(logMetrics(metrics)) as unknown as ReceiverHandler;
}

function record(result: DeliveryResult, latencyMs: number, logger: Logger, metrics: Metrics): void {
  const provider = isProviderId(result.provider) ? result.provider : 'unknown';
  const line = {
    provider,
    outcome: result.outcome,
    statusCode: result.statusCode,
    latencyMs,
    // What is undefined is left out of the printed JSON.
    reason: result.reason,
    key: result.key,
    eventId: result.eventId,
    eventType: result.eventType,
    deliveries: result.deliveries,
    enqueued: result.enqueued,
    tookOver: result.tookOver || undefined,
  };
  // A 503 in_flight is the designed answer to a duplicate racing its first delivery: not an error.
  if (result.statusCode >= 500 && result.outcome !== 'in_flight') logger.error('delivery', line);
  else if (result.statusCode >= 400) logger.warn('delivery', line);
  else logger.info('delivery', line);

  // Unknown routes share the fixed dimension value `unknown`: a scanner must not be able to mint dimensions.
  metrics.addDimension(PROVIDER_DIMENSION, provider);
  if (provider !== 'unknown' && result.outcome !== 'handshake')
    metrics.addMetric(ReceiverMetric.Received, MetricUnit.Count, 1);
  const outcomeMetric = OUTCOME_METRIC[result.outcome];
  if (outcomeMetric) metrics.addMetric(outcomeMetric, MetricUnit.Count, 1);
  metrics.addMetric(ReceiverMetric.Latency, MetricUnit.Milliseconds, latencyMs);
}

/** Builds the production dependencies from the environment (called once, on the first delivery). */
export function depsFromEnvironment(env: NodeJS.ProcessEnv = process.env): Omit<ReceiverDeps, 'log'> {
  const settings = loadReceiverSettings(env);
  const faultPoint = faultInjector(settings.faultPoints, settings.faultPointsStateDirectory);
  // Short timeouts and few retries: a provider's deadline is 5-10 s for the whole delivery.
  const clientConfig = {
    maxAttempts: 3,
    requestHandler: boundedRequests(2_000),
  };
  return {
    settings,
    store: new DynamoClaimStore({
      client: new DynamoDBClient(clientConfig),
      tableName: settings.claimsTableName,
    }),
    queue: new SqsEventQueue({ client: new SQSClient(clientConfig), queueUrl: settings.eventQueueUrl }),
    secrets: secretSourceFromEnvironment(env),
    ...(settings.archiveBucket
      ? { archive: lazyArchive(settings.archiveBucket, settings.archiveForcePathStyle) }
      : {}),
    // Recovery testing only (docs/rules.md): never set on a deployed stack.
    ...(faultPoint ? { faultPoint } : {}),
  };
}

/**
 * The archive bucket's client, loaded on the first claim check: most deliveries are small, and the
 * S3 SDK is not evaluated during a cold start that never needs it.
 */
function lazyArchive(bucket: string, forcePathStyle: boolean): Pick<PayloadArchive, 'put'> {
  let loading: Promise<PayloadArchive> | undefined;
  const archive = (): Promise<PayloadArchive> => {
    loading ??= Promise.all([import('@aws-sdk/client-s3'), import('../store/payload-archive.js')]).then(
      ([{ S3Client }, { S3PayloadArchive }]) =>
        new S3PayloadArchive(
          new S3Client({
            maxAttempts: 3,
            forcePathStyle,
            // A 6 MB PUT takes longer than a claim write: a wider request timeout, same attempts.
            requestHandler: boundedRequests(5_000),
          }),
          bucket,
        ),
    );
    return loading;
  };
  return {
    put: async (message, firstSeenAt, nowMs) => (await archive()).put(message, firstSeenAt, nowMs),
  };
}

export const handler: ReceiverHandler = createReceiverHandler({ deps: () => depsFromEnvironment() });
