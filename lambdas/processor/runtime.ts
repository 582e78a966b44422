/**
 * The processor Lambda's runtime (its entry is ./handler.ts, or your module through `createProcessor`
 * in ./sdk): SQS event source with ReportBatchItemFailures. Powertools' BatchProcessor
 * runs each record through the core and reports only the failed ones, so one failed record never
 * makes the rest of the batch run again. The batch's payloads are archived together
 * (./batch-archive.ts). Logs one line per record, EMF metrics per provider.
 */

import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { isProviderId } from '../providers/types.js';
import { retainUntil } from '../shared/claim-retention.js';
import { faultInjector } from '../shared/faults.js';
import { invocationLogContext } from '../shared/log-context.js';
import {
  METRIC_NAMESPACE,
  PROCESSOR_SERVICE,
  PROVIDER_DIMENSION,
  ProcessorMetric,
} from '../shared/metric-names.js';
import { ConfigError } from '../shared/settings.js';
import { EFFECT_MARGIN_MS } from '../shared/timing-rules.js';
import { S3ComplianceStore } from '../store/compliance-store.js';
import { S3PayloadArchive } from '../store/payload-archive.js';
import { ProcessingClaims } from '../store/processing-claims.js';
import { archiveBatch, type BatchArchives } from './batch-archive.js';
import {
  ClaimBusyError,
  PoisonMessageError,
  type ProcessorDeps,
  parseEventMessage,
  processMessage,
} from './core.js';
import {
  effectHeaderSource,
  type SecretCache,
  type SecretReader,
  secretsManagerReader,
} from './effect-headers.js';
import { HttpEffect } from './effects.js';
import { adapterNameProblem } from './extension-names.js';
import type { DeadLetters } from './failures.js';
import { DEFAULTS, ENV, loadProcessorSettings, type ProcessorSettings } from './settings.js';
import { StateStore } from './state-store.js';
import type { EffectAdapter, RuntimeApplierRegistry } from './types.js';

/**
 * Called for each record when the processor cannot initialise (a bad setting, say): on the attempt
 * SQS will not redeliver, it marks the record's claim FAILED, so the claim does not stay ENQUEUED
 * while its only message sits in the DLQ. Resolves whether it marked the claim.
 */
export type InitFailureRecorder = (body: string, receiveCount: number, error: unknown) => Promise<boolean>;

export interface ProcessorHandlerOptions {
  readonly deps: () => Omit<ProcessorDeps, 'log'>;
  /** @default none: an initialisation failure leaves the claims as they are */
  readonly onInitFailure?: InitFailureRecorder;
  readonly logger?: Logger;
  readonly metrics?: Metrics;
}

type MetricUnitValue = Parameters<Metrics['addMetric']>[1];

export type ProcessorHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export function createProcessorHandler(options: ProcessorHandlerOptions): ProcessorHandler {
  const logger = options.logger ?? new Logger({ serviceName: PROCESSOR_SERVICE });
  const metrics =
    options.metrics ?? new Metrics({ namespace: METRIC_NAMESPACE, serviceName: PROCESSOR_SERVICE });
  let deps: ProcessorDeps | undefined;
  // One EMF document per metric: records in a batch belong to different providers, and a single
  // metric is flushed (dimensions included) by its first addMetric.
  const emit = (
    name: string,
    provider: string,
    value = 1,
    unit: MetricUnitValue = MetricUnit.Count,
  ): void => {
    const single = metrics.singleMetric();
    single.addDimension(PROVIDER_DIMENSION, provider);
    single.addMetric(name, unit, value);
  };

  const processRecord = async (
    record: SQSRecord,
    archives: BatchArchives,
    context: Context,
  ): Promise<void> => {
    const receiveCount = Number(record.attributes.ApproximateReceiveCount) || 1;
    if (deps === undefined) {
      try {
        deps = { ...options.deps(), log: logger };
      } catch (error) {
        // Tried again on the next record and the next invocation, until the cause is fixed.
        const marked = await (
          options.onInitFailure?.(record.body, receiveCount, error) ?? Promise.resolve(false)
        ).catch((markError: unknown) => {
          logger.warn('could not mark the claim FAILED after the initialisation failure', {
            error: String(markError),
          });
          return false;
        });
        logger.error('processor initialisation failed; the record is retried', {
          messageId: record.messageId,
          receiveCount,
          claimMarkedFailed: marked,
          error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        });
        emit(ProcessorMetric.ProcessingFailed, providerOf(record.body));
        throw error;
      }
    }
    const started = Date.now();
    try {
      const batchArchive = batchArchiveOf(archives, record.body);
      const result = await processMessage(record.body, receiveCount, deps, {
        ...(batchArchive ? { batchArchive } : {}),
        ...(typeof context.getRemainingTimeInMillis === 'function'
          ? { remainingTimeMs: () => context.getRemainingTimeInMillis() }
          : {}),
      });
      // A provider this deployment does not have never gets here: its message is poison (below).
      const { provider } = result.event;
      if (result.kind === 'failed') {
        // Moved to the DLQ by the core, which logged why; this receive is done with.
        emit(ProcessorMetric.ProcessingFailed, provider);
        return;
      }
      if (result.kind === 'already-done') {
        emit(ProcessorMetric.AlreadyDone, provider);
      } else {
        emit(ProcessorMetric.Processed, provider);
        if (result.outcome === 'stale') emit(ProcessorMetric.StaleSkipped, provider);
        if (result.outcome === 'unhandled') {
          emit(ProcessorMetric.Unhandled, provider);
          // And summed over providers: what the UnhandledEvents alarm reads.
          metrics.singleMetric().addMetric(ProcessorMetric.Unhandled, MetricUnit.Count, 1);
        }
        if (result.unresumed.length > 0) {
          emit(ProcessorMetric.EffectsInDoubt, provider, result.unresumed.length);
          // And summed over providers (dimension `service` only): what the EffectsInDoubt alarm reads.
          const total = metrics.singleMetric();
          total.addMetric(ProcessorMetric.EffectsInDoubt, MetricUnit.Count, result.unresumed.length);
        }
        const receivedAt = Date.parse(result.event.receivedAt);
        if (!Number.isNaN(receivedAt)) {
          emit(
            ProcessorMetric.ProcessingLatency,
            provider,
            Math.max(0, Date.now() - receivedAt),
            MetricUnit.Milliseconds,
          );
        }
      }
      logger.info('event', {
        provider,
        key: result.key,
        eventId: result.event.eventId,
        eventType: result.event.eventType,
        result: result.kind === 'already-done' ? 'already-done' : result.outcome,
        ...(result.kind === 'done' && result.unresumed.length > 0
          ? { effectsInDoubt: result.unresumed }
          : {}),
        receiveCount,
        messageId: record.messageId,
        latencyMs: Date.now() - started,
      });
    } catch (error) {
      const details = {
        messageId: record.messageId,
        receiveCount,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        latencyMs: Date.now() - started,
      };
      if (error instanceof ClaimBusyError)
        logger.info('event busy elsewhere; will retry', { ...details, key: error.key });
      else if (error instanceof PoisonMessageError)
        logger.error('unreadable message; it will reach the DLQ', details);
      emit(
        error instanceof ClaimBusyError ? ProcessorMetric.Busy : ProcessorMetric.ProcessingFailed,
        providerOf(record.body),
      );
      throw error;
    }
  };

  /** The batch's archive objects, being written (none without an archive, or before init succeeds). */
  const archivesOf = (event: SQSEvent): BatchArchives => {
    if (deps === undefined) {
      try {
        deps = { ...options.deps(), log: logger };
      } catch {
        return new Map(); // each record meets the failure itself (processRecord)
      }
    }
    const archive = deps.archive;
    if (!archive) return new Map();
    return archiveBatch(
      event.Records.map((record) => record.body),
      archive,
      (deps.clock ?? Date.now)(),
    );
  };

  const handle = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    const processor = new BatchProcessor(EventType.SQS);
    const archives = archivesOf(event);
    const run = (record: SQSRecord) => processRecord(record, archives, context);
    // Always answer with batchItemFailures (even when every record failed), so the contract is one.
    return processPartialResponse(event, run, processor, {
      context,
      throwOnFullBatchFailure: false,
    });
  };

  // Metrics go out per record (singleMetric: each record has its own provider), so there is no
  // batch-level flush to add.
  return middy(handle).use(invocationLogContext(logger)) as unknown as ProcessorHandler;
}

/** The message's fields as written, whatever they hold; none for a body that is not JSON. */
function fieldsOf(body: string): { readonly key?: unknown; readonly provider?: unknown } {
  try {
    return Object(JSON.parse(body));
  } catch {
    return {};
  }
}

/** Its batch's archive: a key that is no string (a poison message) is in no batch's map. */
function batchArchiveOf(archives: BatchArchives, body: string) {
  return archives.get(fieldsOf(body).key as string);
}

function providerOf(body: string): string {
  const { provider } = fieldsOf(body);
  return isProviderId(provider) ? provider : 'unknown';
}

/**
 * The init-failure recorder from the few variables it needs (`CLAIMS_TABLE_NAME`, and
 * `MAX_RECEIVE_COUNT`, `CLAIM_RETENTION_SECONDS` or their defaults when they are the bad setting).
 * Undefined without a claims table name: then there is nothing to mark.
 */
export function initFailureRecorder(
  env: NodeJS.ProcessEnv = process.env,
  client?: DynamoDBClient,
): InitFailureRecorder | undefined {
  // Read leniently on purpose: the settings failed to load, and a bad value here must not stop the mark.
  const tableName = env[ENV.claimsTableName]?.trim();
  if (!tableName) return undefined;
  const orDefault = (name: string, fallback: number) => {
    const value = Number(env[name]);
    return Number.isSafeInteger(value) && value > 0 ? value : fallback;
  };
  const maxReceiveCount = orDefault(ENV.maxReceiveCount, DEFAULTS.maxReceiveCount);
  const retention = orDefault(ENV.claimRetentionSeconds, DEFAULTS.claimRetentionSeconds);
  let claims: ProcessingClaims | undefined;
  return async (body, receiveCount, error) => {
    if (receiveCount < maxReceiveCount) return false;
    let key: string;
    try {
      key = parseEventMessage(body).key;
    } catch {
      return false; // not an event message: no claim to mark
    }
    claims ??= new ProcessingClaims(client ?? new DynamoDBClient({ maxAttempts: 3 }), tableName);
    const now = Date.now();
    const reason = `processor initialisation failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
    return claims.failUnheld(key, reason, now, retainUntil(now, retention));
  };
}

/**
 * Production wiring from the environment; `appliers` is where a user plugs in their own registry
 * and `adapters` their own effect adapters (`createProcessor` in ./sdk). With no appliers, every
 * event is completed as `unhandled`.
 */
export function processorDepsFromEnvironment(
  env: NodeJS.ProcessEnv = process.env,
  appliers: RuntimeApplierRegistry = {},
  adapters: Readonly<Record<string, EffectAdapter>> = {},
  secrets: SecretReader = secretsManagerReader(),
): Omit<ProcessorDeps, 'log'> {
  const settings = loadProcessorSettings(env);
  const client = new DynamoDBClient({ maxAttempts: 3 });
  const faultPoint = faultInjector(settings.faultPoints, settings.faultPointsStateDirectory);
  return {
    claims: new ProcessingClaims(client, settings.claimsTableName),
    state: new StateStore(client, settings.tableNames),
    appliers,
    leaseSeconds: settings.leaseSeconds,
    maxReceiveCount: settings.maxReceiveCount,
    claimRetentionSeconds: settings.claimRetentionSeconds,
    effects: { ...effectAdapters(settings.effects, secrets), ...ownAdapters(adapters, settings) },
    ...(faultPoint ? { faultPoint } : {}),
    ...(settings.archiveBucket ? archiveDeps(settings.archiveBucket, settings.archiveForcePathStyle) : {}),
    ...(settings.deadLetterQueueUrl ? { deadLetters: sqsDeadLetters(settings.deadLetterQueueUrl) } : {}),
  };
}

/** Sends a message that can never succeed to the DLQ, as it was received. */
export function sqsDeadLetters(queueUrl: string, client = new SQSClient({ maxAttempts: 3 })): DeadLetters {
  return {
    async send(body) {
      await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    },
  };
}

/**
 * The app's own adapters (`createProcessor({ adapters })`), checked as the construct checks its
 * `effects`: a valid name, not one the construct configures with a URL too, and a call bounded
 * shorter than the lease when it may act twice.
 */
function ownAdapters(
  adapters: Readonly<Record<string, EffectAdapter>>,
  settings: ProcessorSettings,
): Record<string, EffectAdapter> {
  for (const [name, adapter] of Object.entries(adapters)) {
    const where = `createProcessor: adapters.${name}`;
    const problem = adapterNameProblem(name);
    if (problem) throw new ConfigError(`createProcessor: adapters: ${problem}`);
    if (settings.effects[name]?.url !== undefined)
      throw new ConfigError(
        `${where} is also configured with a URL by the construct's effects prop: give it one home (drop the url, or the adapter)`,
      );
    if (typeof adapter?.call !== 'function' || typeof adapter.honoursIdempotencyKey !== 'boolean')
      throw new ConfigError(
        `${where} must have call(body, idempotencyKey, options) and honoursIdempotencyKey (true or false)`,
      );
    if (
      adapter.timeoutMs !== undefined &&
      adapter.timeoutMs + EFFECT_MARGIN_MS >= settings.leaseSeconds * 1000
    )
      throw new ConfigError(
        `${where}: timeoutMs ${adapter.timeoutMs} must be shorter than PROCESSING_LEASE_SECONDS (${settings.leaseSeconds} s) by more than ${EFFECT_MARGIN_MS} ms`,
      );
  }
  return { ...adapters };
}

/** The archive, and the same bucket as Shopify's compliance requests change it (one S3 client). */
function archiveDeps(bucket: string, forcePathStyle: boolean): Pick<ProcessorDeps, 'archive' | 'compliance'> {
  const s3 = new S3Client({ maxAttempts: 3, forcePathStyle });
  return { archive: new S3PayloadArchive(s3, bucket), compliance: new S3ComplianceStore(s3, bucket) };
}

/**
 * An HTTP adapter for each configured effect with a URL; one without a URL is not configured. The
 * adapters share one cache of secret values, so a secret used by several is read once.
 */
function effectAdapters(
  effects: ProcessorSettings['effects'],
  secrets: SecretReader,
): Record<string, EffectAdapter> {
  const adapters: Record<string, EffectAdapter> = {};
  const cache: SecretCache = new Map();
  for (const [name, effect] of Object.entries(effects)) {
    const { url, honoursIdempotencyKey, timeoutMs, permanentStatuses } = effect;
    if (url === undefined) continue;
    const headers = effectHeaderSource(effect.headers, secrets, { cache });
    adapters[name] = new HttpEffect({
      name,
      url,
      honoursIdempotencyKey,
      timeoutMs,
      permanentStatuses,
      ...(headers ? { headers } : {}),
    });
  }
  return adapters;
}
