/**
 * The whole pipeline on the local servers: the receiver core writing claims to DynamoDB Local and
 * messages to an SQS emulator queue with a real redrive policy to a DLQ; the processor Lambda
 * handler (Powertools batch, middy) fed by an event-source-mapping stand-in; business tables; and
 * an effects sink playing the ledger and the mailer.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { S3Client } from '@aws-sdk/client-s3';
import {
  EXAMPLE_APPLIERS,
  EXAMPLE_EFFECTS,
  type EXAMPLE_TABLES,
} from '../../examples/payments/appliers/index.js';
import { exampleEffectAdapters } from '../../examples/payments/effects.js';
import type { ProcessorDeps } from '../../lambdas/processor/core.js';
import {
  createProcessorHandler,
  type ProcessorHandler,
  sqsDeadLetters,
} from '../../lambdas/processor/runtime.js';
import { StateStore } from '../../lambdas/processor/state-store.js';
import type { EffectAdapter, RuntimeApplierRegistry, TableRef } from '../../lambdas/processor/types.js';
import { CLAIM_RETENTION_DEFAULT_SECONDS } from '../../lambdas/shared/claim-retention.js';
import { faultInjector } from '../../lambdas/shared/faults.js';
import { METRIC_NAMESPACE } from '../../lambdas/shared/metric-names.js';
import { S3ComplianceStore } from '../../lambdas/store/compliance-store.js';
import { ProcessingClaims } from '../../lambdas/store/processing-claims.js';
import { type EffectsSink, startEffectsSink } from '../../local/effects-sink.js';
import { SqsPoller } from '../../local/sqs-poller.js';
import {
  createClaimsTable,
  createQueueWithDlq,
  createTable,
  dynamoClient,
  getItem,
  queueDepth,
  receiveAll,
  s3Client,
  sqsClient,
} from './aws.js';
import { createReceiverHarness, type ReceiverHarness } from './receiver-harness.js';

export interface PipelineOptions {
  readonly maxReceiveCount?: number;
  readonly visibilityTimeoutSeconds?: number;
  readonly leaseSeconds?: number;
  readonly faultPoints?: string;
  readonly appliers?: RuntimeApplierRegistry;
  /** The example's HTTP adapters' timeout. @default 5000 */
  readonly effectTimeoutMs?: number;
  /** Serve Shopify's compliance topics on the archive bucket, as the stack does. @default false */
  readonly compliance?: boolean;
  /** Adapters of the app's own, besides the example's HTTP ones. @default none */
  readonly adapters?: Readonly<Record<string, EffectAdapter>>;
  /**
   * Move an event that can never succeed to the DLQ at once, as the stack's processor does
   * (`DEAD_LETTER_QUEUE_URL`). @default true
   */
  readonly deadLetters?: boolean;
}

export interface PipelineHarness {
  readonly receiver: ReceiverHarness;
  readonly sink: EffectsSink;
  readonly dlqUrl: string;
  readonly tables: Readonly<Record<(typeof EXAMPLE_TABLES)[number], string>>;
  readonly processorDeps: Omit<ProcessorDeps, 'log'>;
  readonly processor: ProcessorHandler;
  readonly poller: SqsPoller;
  readonly maxReceiveCount: number;
  readonly s3: S3Client;
  readonly archiveBucket: string;
  /** Polls until the queue is empty and no message is in flight, or the timeout passes. */
  drainQueue(timeoutMs?: number): Promise<void>;
  row(table: TableRef, pk: string): Promise<Record<string, unknown> | undefined>;
  /** Takes the processing lease on a claim as a live, healthy other worker would (one minute). */
  holdProcessingLease(key: string, token: string): ReturnType<ProcessorDeps['claims']['beginProcessing']>;
  dlqMessages(): Promise<number>;
  stop(): Promise<void>;
}

/** Powertools output is silenced in tests; set TEST_LOGS=1 to see it. */
function quietPowertools(): { logger: Logger; metrics: Metrics } {
  const verbose = process.env.TEST_LOGS === '1';
  const previous = process.env.POWERTOOLS_METRICS_DISABLED;
  if (!verbose) process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  const metrics = new Metrics({ namespace: METRIC_NAMESPACE, serviceName: 'webhook-processor' });
  if (previous === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
  else process.env.POWERTOOLS_METRICS_DISABLED = previous;
  return {
    logger: new Logger({ serviceName: 'webhook-processor', logLevel: verbose ? 'DEBUG' : 'SILENT' }),
    metrics,
  };
}

export async function createPipelineHarness(options: PipelineOptions = {}): Promise<PipelineHarness> {
  const maxReceiveCount = options.maxReceiveCount ?? 3;
  const dynamo = dynamoClient();
  const sqs = sqsClient();
  const s3 = s3Client();
  const [claimsTable, payments, orders, resources, queues, sink] = await Promise.all([
    createClaimsTable(dynamo),
    createTable(dynamo, 'payments'),
    createTable(dynamo, 'orders'),
    createTable(dynamo, 'resources'),
    createQueueWithDlq(sqs, {
      maxReceiveCount,
      visibilityTimeoutSeconds: options.visibilityTimeoutSeconds ?? 1,
    }),
    startEffectsSink({ effects: EXAMPLE_EFFECTS }),
  ]);
  // One archive bucket, as in the stack: the receiver's claim checks are the processor's archive.
  const receiver = await createReceiverHarness({}, { tableName: claimsTable, queueUrl: queues.queueUrl });
  const { archiveBucket } = receiver;
  const tables = { payments, orders, resources } as const;
  const faultPoint = faultInjector(options.faultPoints);
  const processorDeps: Omit<ProcessorDeps, 'log'> = {
    claims: new ProcessingClaims(receiver.dynamo, claimsTable),
    state: new StateStore(receiver.dynamo, tables),
    appliers: options.appliers ?? EXAMPLE_APPLIERS,
    leaseSeconds: options.leaseSeconds ?? 30,
    maxReceiveCount,
    claimRetentionSeconds: CLAIM_RETENTION_DEFAULT_SECONDS,
    effects: {
      ...exampleEffectAdapters(
        sink.urlOf,
        options.effectTimeoutMs === undefined ? {} : { timeoutMs: options.effectTimeoutMs },
      ),
      ...options.adapters,
    },
    ...(options.deadLetters === false ? {} : { deadLetters: sqsDeadLetters(queues.dlqUrl, receiver.sqs) }),
    ...(faultPoint ? { faultPoint } : {}),
    archive: receiver.archive,
    ...(options.compliance ? { compliance: new S3ComplianceStore(s3, archiveBucket) } : {}),
  };
  const processor = createProcessorHandler({ deps: () => processorDeps, ...quietPowertools() });
  const poller = new SqsPoller({ client: receiver.sqs, queueUrl: queues.queueUrl, handler: processor });

  return {
    receiver,
    sink,
    dlqUrl: queues.dlqUrl,
    tables,
    processorDeps,
    processor,
    poller,
    maxReceiveCount,
    s3,
    archiveBucket,
    async drainQueue(timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const result = await poller.pollOnce();
        if (result.received === 0 && (await queueDepth(receiver.sqs, queues.queueUrl)) === 0) return;
        if (Date.now() > deadline) throw new Error('queue did not drain in time');
        if (result.received === 0) await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    row: (table, pk) => {
      const name = (tables as Readonly<Record<string, string>>)[table];
      if (name === undefined) throw new Error(`the harness has no business table ${table}`);
      return getItem(receiver.doc, name, pk);
    },
    holdProcessingLease: (key, token) =>
      processorDeps.claims.beginProcessing(
        {
          pk: key,
          provider: 'stripe',
          account: 'platform',
          eventId: 'x',
          eventType: 'x',
          expiresAt: Math.floor(Date.now() / 1000) + 3600,
        },
        { token, expiresAt: Date.now() + 60_000, owner: 'processor' },
        Date.now(),
        Math.floor(Date.now() / 1000) + 3600,
      ),
    dlqMessages: async () => (await receiveAll(receiver.sqs, queues.dlqUrl)).length,
    stop: () => sink.stop(),
  };
}
