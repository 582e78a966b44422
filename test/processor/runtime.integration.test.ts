/**
 * The processor Lambda's runtime (lambdas/processor/runtime.ts) as deployed: its own logger and
 * metrics (no options), SQS records through Powertools' batch processor, against DynamoDB Local,
 * the SQS emulator, s3rver and the effects sink. What an operator reads at 3 a.m. is checked line
 * by line and metric by metric, outcome by outcome.
 */
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { EXAMPLE_APPLIERS } from '../../examples/payments/appliers/index.js';
import type { ProcessorDeps } from '../../lambdas/processor/core.js';
import { HttpEffect } from '../../lambdas/processor/effects.js';
import {
  createProcessorHandler,
  initFailureRecorder,
  type ProcessorHandler,
  type ProcessorHandlerOptions,
  processorDepsFromEnvironment,
} from '../../lambdas/processor/runtime.js';
import { ClaimStatus } from '../../lambdas/store/claim.js';
import { toSqsRecord } from '../../local/sqs-poller.js';
import { bucketKeys, receiveAll, s3EndpointByName, stubLocalAwsEnvironment } from '../helpers/aws.js';
import { stripeCustomerEvent, stripePaymentIntentEvent } from '../helpers/events.js';
import {
  createPipelineHarness,
  type PipelineHarness,
  type PipelineOptions,
} from '../helpers/pipeline-harness.js';
import { capturePowertoolsOutput } from '../helpers/powertools-output.js';
import { stripeHeaders } from '../helpers/signing.js';

let h: PipelineHarness | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  await h?.stop();
  h = undefined;
});

/** A pipeline on the local servers, stopped after the test. */
async function startPipeline(options?: PipelineOptions): Promise<PipelineHarness> {
  h = await createPipelineHarness(options);
  return h;
}

const lambdaContext = {
  awsRequestId: 'req-1',
  functionName: 'processor',
  getRemainingTimeInMillis: () => 60_000,
} as unknown as Context;

function sqsRecord(body: string, messageId: string, receiveCount?: number): SQSRecord {
  return toSqsRecord(
    {
      MessageId: messageId,
      Body: body,
      ReceiptHandle: `r-${messageId}`,
      ...(receiveCount === undefined
        ? {}
        : { Attributes: { ApproximateReceiveCount: String(receiveCount) } }),
    },
    '',
    'us-east-1',
  );
}

type Line = Record<string, unknown>;

/** Each metric of each EMF document: its name, value, unit, provider dimension and namespace. */
function metricsOf(lines: readonly Line[]) {
  return lines
    .filter((line) => line._aws !== undefined)
    .flatMap((line) => {
      const [directive] = (
        line._aws as { CloudWatchMetrics: { Namespace: string; Metrics: { Name: string; Unit: string }[] }[] }
      ).CloudWatchMetrics;
      return (directive?.Metrics ?? []).map(({ Name, Unit }) => ({
        name: Name,
        value: line[Name],
        unit: Unit,
        provider: line.provider,
        namespace: directive?.Namespace,
        service: line.service,
      }));
    });
}

/**
 * Runs records through a handler built as the deployed one is (its own logger and metrics), or
 * through `handler` (built by {@link deployedHandler}) for a second invocation of one container.
 */
async function invoke(
  records: readonly SQSRecord[],
  handlerOrOptions: Omit<ProcessorHandlerOptions, 'logger' | 'metrics'> | ProcessorHandler,
  context: Context = lambdaContext,
) {
  const output = capturePowertoolsOutput();
  const handler =
    typeof handlerOrOptions === 'function' ? handlerOrOptions : createProcessorHandler(handlerOrOptions);
  const result = await handler({ Records: [...records] } as SQSEvent, context);
  vi.restoreAllMocks();
  const lines = output
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line);
  return {
    result,
    lines,
    logs: lines.filter((line) => line._aws === undefined),
    metrics: metricsOf(lines),
  };
}

/** A handler as the deployed one is built, with metrics on (Powertools reads that when it is built). */
function deployedHandler(options: Omit<ProcessorHandlerOptions, 'logger' | 'metrics'>): ProcessorHandler {
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
  return createProcessorHandler(options);
}

const count = (name: string, provider = 'stripe') => ({
  name,
  value: 1,
  unit: 'Count',
  provider,
  namespace: 'IdempotentWebhooks',
  service: 'webhook-processor',
});
const latency = {
  name: 'ProcessingLatency',
  value: expect.any(Number),
  unit: 'Milliseconds',
  provider: 'stripe',
  namespace: 'IdempotentWebhooks',
  service: 'webhook-processor',
};

async function deliver(
  pipeline: PipelineHarness,
  event: { id: string },
): Promise<{ key: string; body: string }> {
  const body = JSON.stringify(event);
  const accepted = await pipeline.receiver.deliver('stripe', body, stripeHeaders(body));
  expect(accepted.statusCode).toBe(200);
  const [message] = await receiveAll(pipeline.receiver.sqs, pipeline.receiver.queueUrl);
  return { key: accepted.key ?? '', body: message?.Body ?? '' };
}

describe('processor runtime: each outcome is logged and counted per provider', () => {
  it('applied, then already done: one event line each, Processed and its latency, then AlreadyDone', async () => {
    const pipeline = await startPipeline();
    const event = stripePaymentIntentEvent({ intentId: 'pi_runtime_applied' });
    const startedAt = Date.now();
    const { key, body } = await deliver(pipeline, event);
    let built = 0;
    const handler = deployedHandler({
      deps: () => {
        built += 1;
        return pipeline.processorDeps;
      },
    });

    const first = await invoke([sqsRecord(body, 'm-1', 2)], handler);
    expect(first.result).toEqual({ batchItemFailures: [] });
    expect(first.metrics).toEqual([count('Processed'), latency]);
    const line = first.logs.find((l) => l.message === 'event');
    expect(line).toMatchObject({
      level: 'INFO',
      service: 'webhook-processor',
      provider: 'stripe',
      key,
      eventId: event.id,
      eventType: 'payment_intent.succeeded',
      result: 'applied',
      receiveCount: 2,
      messageId: 'm-1',
      latencyMs: expect.any(Number),
      function_request_id: 'req-1',
    });
    expect(line?.latencyMs).toBeLessThan(30_000);
    // From the receiver's receipt to the end of processing: more than nothing, less than the test.
    const [, processing] = first.metrics;
    expect(processing?.value).toBeGreaterThan(0);
    expect(processing?.value).toBeLessThan(Date.now() - startedAt);
    expect(line).not.toHaveProperty('effectsInDoubt');
    expect(first.logs.filter((l) => l.level !== 'INFO')).toEqual([]);

    // The same message again, in a later invocation: the clients are built once per container.
    const again = await invoke([sqsRecord(body, 'm-2')], handler);
    expect(again.metrics).toEqual([count('AlreadyDone')]);
    expect(again.logs.find((l) => l.message === 'event')).toMatchObject({
      result: 'already-done',
      receiveCount: 1,
      messageId: 'm-2',
    });
    expect(built).toBe(1);
  });

  it('stale and unhandled: each counted with Processed, and named on the event line', async () => {
    const pipeline = await startPipeline();
    const created = Math.floor(Date.now() / 1000);
    const newer = await deliver(
      pipeline,
      stripePaymentIntentEvent({ intentId: 'pi_runtime_stale', created }),
    );
    const older = await deliver(
      pipeline,
      stripePaymentIntentEvent({
        intentId: 'pi_runtime_stale',
        created: created - 60,
        type: 'payment_intent.processing',
        status: 'processing',
      }),
    );
    const customer = await deliver(pipeline, stripeCustomerEvent());
    const options = { deps: () => pipeline.processorDeps };
    await invoke([sqsRecord(newer.body, 'm-new')], options);

    const stale = await invoke([sqsRecord(older.body, 'm-old')], options);
    expect(stale.metrics).toEqual([count('Processed'), count('StaleSkipped'), latency]);
    expect(stale.logs.find((l) => l.message === 'event')).toMatchObject({ result: 'stale' });

    const unhandled = await invoke([sqsRecord(customer.body, 'm-customer')], options);
    // Per provider, and summed over providers (no provider dimension): what the UnhandledEvents alarm reads.
    const { provider: _none, ...unhandledTotal } = count('Unhandled');
    expect(unhandled.metrics).toEqual([
      count('Processed'),
      count('Unhandled'),
      { ...unhandledTotal, provider: undefined },
      latency,
    ]);
    expect(unhandled.logs.find((l) => l.message === 'event')).toMatchObject({
      result: 'unhandled',
      eventType: 'customer.created',
    });
  });

  it('a claim busy elsewhere: an info line with its key, counted Busy, the record retried', async () => {
    const pipeline = await startPipeline();
    const { key, body } = await deliver(pipeline, stripePaymentIntentEvent({ intentId: 'pi_runtime_busy' }));
    await pipeline.holdProcessingLease(key, 'healthy-worker');

    const busy = await invoke([sqsRecord(body, 'm-busy', 3)], { deps: () => pipeline.processorDeps });
    expect(busy.result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-busy' }] });
    expect(busy.metrics).toEqual([count('Busy')]);
    expect(busy.logs.find((l) => l.message === 'event busy elsewhere; will retry')).toMatchObject({
      level: 'INFO',
      key,
      messageId: 'm-busy',
      receiveCount: 3,
      error: expect.stringMatching(/^ClaimBusyError: /),
      latencyMs: expect.any(Number),
    });
    expect(busy.logs.find((l) => l.message === 'event busy elsewhere; will retry')?.latencyMs).toBeLessThan(
      30_000,
    );
  });

  it('an unreadable message: an error line, counted ProcessingFailed for the provider it names or `unknown`', async () => {
    const pipeline = await startPipeline();
    const records = [
      sqsRecord('not json', 'm-text'),
      sqsRecord(JSON.stringify({ v: 1, provider: 'stripe' }), 'm-stripe'),
      sqsRecord(JSON.stringify({ v: 1, provider: 'paypal' }), 'm-paypal'),
      sqsRecord(JSON.stringify({ v: 1, provider: 7 }), 'm-number'),
      sqsRecord('null', 'm-null'),
    ];
    const poison = await invoke(records, { deps: () => pipeline.processorDeps });
    expect(poison.result.batchItemFailures.map((f) => f.itemIdentifier)).toEqual([
      'm-text',
      'm-stripe',
      'm-paypal',
      'm-number',
      'm-null',
    ]);
    expect(poison.metrics).toEqual([
      count('ProcessingFailed', 'unknown'),
      count('ProcessingFailed', 'stripe'),
      count('ProcessingFailed', 'unknown'),
      count('ProcessingFailed', 'unknown'),
      count('ProcessingFailed', 'unknown'),
    ]);
    const lines = poison.logs.filter((l) => l.message === 'unreadable message; it will reach the DLQ');
    expect(lines.map((l) => [l.level, l.messageId])).toEqual([
      ['ERROR', 'm-text'],
      ['ERROR', 'm-stripe'],
      ['ERROR', 'm-paypal'],
      ['ERROR', 'm-number'],
      ['ERROR', 'm-null'],
    ]);
    expect(lines[0]).toMatchObject({
      receiveCount: 1,
      error: expect.stringMatching(/^PoisonMessageError: /),
    });
  });

  it('an applier that throws: counted ProcessingFailed for its provider, the record retried', async () => {
    const pipeline = await startPipeline();
    const { body } = await deliver(pipeline, stripePaymentIntentEvent({ intentId: 'pi_runtime_throws' }));
    const deps: Omit<ProcessorDeps, 'log'> = {
      ...pipeline.processorDeps,
      appliers: {
        stripe: {
          'payment_intent.*': {
            plan: async () => {
              throw new Error('the applier broke');
            },
          },
        },
      },
    };
    const failed = await invoke([sqsRecord(body, 'm-throws')], { deps: () => deps });
    expect(failed.result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-throws' }] });
    expect(failed.metrics).toEqual([count('ProcessingFailed')]);
    // Logged by the core with its cause; the runtime says nothing of poison here.
    expect(failed.logs.filter((l) => l.message === 'unreadable message; it will reach the DLQ')).toEqual([]);
  });

  it('passes the time left in the invocation, so an effect that could outlast it is not started', async () => {
    const pipeline = await startPipeline();
    const { body } = await deliver(pipeline, stripePaymentIntentEvent({ intentId: 'pi_runtime_deadline' }));
    const nearlyOut = { ...lambdaContext, getRemainingTimeInMillis: () => 1_000 } as Context;
    const late = await invoke([sqsRecord(body, 'm-late')], { deps: () => pipeline.processorDeps }, nearlyOut);
    expect(late.result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-late' }] });
    expect(pipeline.sink.entries()).toEqual([]);

    // A context without the clock (a test's, a local runner's) sets no deadline.
    const local = await invoke(
      [sqsRecord(body, 'm-local')],
      { deps: () => pipeline.processorDeps },
      {} as Context,
    );
    expect(local.result).toEqual({ batchItemFailures: [] });
    expect(pipeline.sink.entries().map((entry) => entry.service)).toEqual(['ledger', 'mailer']);
  });

  it('archives a batch in one object, which each record of it names', async () => {
    const pipeline = await startPipeline();
    const first = await deliver(pipeline, stripePaymentIntentEvent({ intentId: 'pi_runtime_batch_1' }));
    const second = await deliver(pipeline, stripePaymentIntentEvent({ intentId: 'pi_runtime_batch_2' }));
    const batch = await invoke([sqsRecord(first.body, 'm-b1'), sqsRecord(second.body, 'm-b2')], {
      deps: () => pipeline.processorDeps,
    });
    expect(batch.result).toEqual({ batchItemFailures: [] });
    const keys = await bucketKeys(pipeline.s3, pipeline.archiveBucket);
    expect(keys).toHaveLength(1);
    expect((await pipeline.receiver.claim(first.key))?.archiveKey).toBe(keys[0]);
    expect((await pipeline.receiver.claim(second.key))?.archiveKey).toBe(keys[0]);
  });
});

describe('processor runtime: messages the receiver of today would not write', () => {
  it('counts no latency for a receipt time it cannot read, and none below zero for one ahead of its clock', async () => {
    const pipeline = await startPipeline();
    const options = { deps: () => pipeline.processorDeps };
    const unreadable = await deliver(pipeline, stripePaymentIntentEvent({ intentId: 'pi_runtime_when' }));
    const ahead = await deliver(pipeline, stripePaymentIntentEvent({ intentId: 'pi_runtime_ahead' }));
    const withReceivedAt = (body: string, receivedAt: string) =>
      JSON.stringify({ ...JSON.parse(body), receivedAt });

    const undated = await invoke(
      [sqsRecord(withReceivedAt(unreadable.body, 'yesterday'), 'm-when')],
      options,
    );
    expect(undated.result).toEqual({ batchItemFailures: [] });
    expect(undated.metrics).toEqual([count('Processed')]);

    const early = new Date(Date.now() + 3_600_000).toISOString();
    const skewed = await invoke([sqsRecord(withReceivedAt(ahead.body, early), 'm-ahead')], options);
    expect(skewed.metrics).toEqual([count('Processed'), { ...latency, value: 0 }]);
  });

  it('fails an event of a provider this deployment no longer has as poison, counted under `unknown`', async () => {
    const pipeline = await startPipeline();
    const { body } = await deliver(pipeline, stripeCustomerEvent());
    const message = JSON.parse(body) as Record<string, unknown>;
    const key = `retired:platform:${String(message.eventId)}`;
    const retired = JSON.stringify({ ...message, provider: 'retired', key });
    const result = await invoke([sqsRecord(retired, 'm-retired')], { deps: () => pipeline.processorDeps });
    expect(result.result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-retired' }] });
    expect(result.metrics).toEqual([count('ProcessingFailed', 'unknown')]);
    expect(result.logs.find((l) => l.message === 'unreadable message; it will reach the DLQ')).toMatchObject({
      error: 'PoisonMessageError: message names unknown provider "retired"',
    });
    expect((await pipeline.receiver.claim(key))?.status).toBe(ClaimStatus.Failed);
  });
});

describe('processor runtime: a processor that cannot initialise', () => {
  const payment = () => JSON.stringify({ v: 1, provider: 'stripe', key: 'stripe:platform:evt_x' });
  const broken = () => {
    throw new Error('environment variable PAYMENTS_TABLE_NAME is required');
  };

  it('fails every record with an error line and ProcessingFailed, and tries again on each', async () => {
    let tried = 0;
    const failed = await invoke([sqsRecord(payment(), 'm-1', 2), sqsRecord('not json', 'm-2')], {
      deps: () => {
        tried += 1;
        return broken();
      },
    });
    // Answered, not thrown, though no record succeeded: one contract for the event source.
    expect(failed.result).toEqual({
      batchItemFailures: [{ itemIdentifier: 'm-1' }, { itemIdentifier: 'm-2' }],
    });
    // Once for the batch's archive, then once per record.
    expect(tried).toBe(3);
    expect(failed.metrics).toEqual([count('ProcessingFailed'), count('ProcessingFailed', 'unknown')]);
    const lines = failed.logs.filter(
      (l) => l.message === 'processor initialisation failed; the record is retried',
    );
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'ERROR',
        messageId: 'm-1',
        receiveCount: 2,
        claimMarkedFailed: false,
        error: 'Error: environment variable PAYMENTS_TABLE_NAME is required',
      }),
      expect.objectContaining({ messageId: 'm-2', receiveCount: 1, claimMarkedFailed: false }),
    ]);
  });

  it('says whether the claim was marked, and a mark that fails is a warning, not a second failure', async () => {
    const calls: unknown[][] = [];
    const marked = await invoke([sqsRecord(payment(), 'm-1', 5)], {
      deps: broken,
      onInitFailure: async (...args) => {
        calls.push(args);
        return true;
      },
    });
    expect(calls).toEqual([
      [payment(), 5, expect.objectContaining({ message: expect.stringContaining('PAYMENTS') })],
    ]);
    expect(marked.logs.find((l) => l.level === 'ERROR')).toMatchObject({ claimMarkedFailed: true });

    const unmarked = await invoke([sqsRecord(payment(), 'm-1', 5)], {
      deps: broken,
      onInitFailure: () => Promise.reject(new Error('DynamoDB is down too')),
    });
    expect(unmarked.result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-1' }] });
    expect(unmarked.logs.find((l) => l.level === 'WARN')).toMatchObject({
      message: 'could not mark the claim FAILED after the initialisation failure',
      error: 'Error: DynamoDB is down too',
    });
    expect(unmarked.logs.find((l) => l.level === 'ERROR')).toMatchObject({ claimMarkedFailed: false });
  });
});

describe('processor runtime: the init-failure recorder', () => {
  it('needs a claims table name to mark anything', () => {
    expect(initFailureRecorder({})).toBeUndefined();
    expect(initFailureRecorder({ CLAIMS_TABLE_NAME: '  ' })).toBeUndefined();
    expect(initFailureRecorder({ CLAIMS_TABLE_NAME: 'claims' })).toBeTypeOf('function');
  });

  it('marks only on the last attempt, reading a bad MAX_RECEIVE_COUNT as its default (5)', async () => {
    const pipeline = await startPipeline({ maxReceiveCount: 5 });
    const { key, body } = await deliver(pipeline, stripePaymentIntentEvent({ intentId: 'pi_runtime_init' }));
    for (const bad of ['x', '0', '-2', '2.5']) {
      const recorder = initFailureRecorder(
        {
          CLAIMS_TABLE_NAME: pipeline.receiver.tableName,
          MAX_RECEIVE_COUNT: bad,
          CLAIM_RETENTION_SECONDS: bad,
        },
        pipeline.receiver.dynamo,
      );
      expect(await recorder?.(body, 4, new Error('boom')), bad).toBe(false);
    }
    expect((await pipeline.receiver.claim(key))?.status).toBe(ClaimStatus.Enqueued);

    const recorder = initFailureRecorder(
      {
        CLAIMS_TABLE_NAME: pipeline.receiver.tableName,
        MAX_RECEIVE_COUNT: 'x',
        CLAIM_RETENTION_SECONDS: '3600',
      },
      pipeline.receiver.dynamo,
    );
    // Not an event message: nothing to mark.
    expect(await recorder?.('not json', 5, new Error('boom'))).toBe(false);
    const before = Math.floor(Date.now() / 1000);
    expect(await recorder?.(body, 5, new Error('boom'))).toBe(true);
    const claim = await pipeline.receiver.claim(key);
    expect(claim).toMatchObject({
      status: ClaimStatus.Failed,
      lastError: 'processor initialisation failed: Error: boom',
    });
    // Kept the retention it was given (an hour here), from now.
    expect(Number(claim?.expiresAt)).toBeGreaterThanOrEqual(before + 3600);
    expect(Number(claim?.expiresAt)).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 3600);
  });

  it('names a thrown value that is not an Error as it is', async () => {
    const pipeline = await startPipeline({ maxReceiveCount: 1 });
    const { key, body } = await deliver(
      pipeline,
      stripePaymentIntentEvent({ intentId: 'pi_runtime_init_text' }),
    );
    const recorder = initFailureRecorder(
      { CLAIMS_TABLE_NAME: pipeline.receiver.tableName, MAX_RECEIVE_COUNT: '1' },
      pipeline.receiver.dynamo,
    );
    expect(await recorder?.(body, 1, 'no settings')).toBe(true);
    expect((await pipeline.receiver.claim(key))?.lastError).toBe(
      'processor initialisation failed: no settings',
    );
  });
});

describe('processor runtime: the production wiring from the environment', () => {
  const env = {
    CLAIMS_TABLE_NAME: 'claims',
    BUSINESS_TABLES: '{"payments":"payments","orders":"orders","resources":"resources"}',
  };

  it('runs on it against the local servers: the example applied, its effects called, its batch archived', async () => {
    const pipeline = await startPipeline();
    const { key, body } = await deliver(pipeline, stripePaymentIntentEvent({ intentId: 'pi_runtime_wired' }));
    stubLocalAwsEnvironment({ DYNAMODB: inject('dynamoDbEndpoint'), S3: s3EndpointByName() });
    const deps = processorDepsFromEnvironment(
      {
        CLAIMS_TABLE_NAME: pipeline.receiver.tableName,
        BUSINESS_TABLES: JSON.stringify(pipeline.tables),
        EFFECTS: JSON.stringify({
          ledger: { url: pipeline.sink.urlOf('ledger'), honoursIdempotencyKey: true },
          mailer: { url: pipeline.sink.urlOf('mailer') },
        }),
        ARCHIVE_BUCKET_NAME: pipeline.archiveBucket,
        // s3rver, like any local S3, needs path-style addresses.
        ARCHIVE_FORCE_PATH_STYLE: 'true',
      },
      EXAMPLE_APPLIERS,
    );
    const wired = await invoke([sqsRecord(body, 'm-wired')], { deps: () => deps });
    expect(wired.result).toEqual({ batchItemFailures: [] });
    const claim = await pipeline.receiver.claim(key);
    expect(claim).toMatchObject({ status: ClaimStatus.Done, outcome: 'applied' });
    expect(pipeline.sink.entries().map((entry) => entry.service)).toEqual(['ledger', 'mailer']);
    expect(await bucketKeys(pipeline.s3, pipeline.archiveBucket)).toEqual([claim?.archiveKey]);
  });

  it('builds an HTTP adapter for each effect with a URL, and the archive only with a bucket', () => {
    const deps = processorDepsFromEnvironment({
      ...env,
      EFFECTS: JSON.stringify({
        crm: { url: 'https://crm.example.com/hook', honoursIdempotencyKey: true, timeoutSeconds: 3 },
        mailer: { honoursIdempotencyKey: false },
      }),
      PROCESSING_LEASE_SECONDS: '45',
      MAX_RECEIVE_COUNT: '4',
      CLAIM_RETENTION_SECONDS: '86400',
    });
    expect(Object.keys(deps.effects ?? {})).toEqual(['crm']);
    expect(deps.effects?.crm).toBeInstanceOf(HttpEffect);
    expect(deps.effects?.crm).toMatchObject({ honoursIdempotencyKey: true, timeoutMs: 3_000 });
    expect(deps).toMatchObject({
      leaseSeconds: 45,
      maxReceiveCount: 4,
      claimRetentionSeconds: 86_400,
      appliers: {},
    });
    expect(deps.archive).toBeUndefined();
    expect(deps.compliance).toBeUndefined();
    expect(deps.faultPoint).toBeUndefined();

    const archived = processorDepsFromEnvironment({
      ...env,
      ARCHIVE_BUCKET_NAME: 'archive',
      FAULT_POINTS: 'processor.afterState',
    });
    expect(archived.archive).toBeDefined();
    expect(archived.compliance).toBeDefined();
    expect(archived.faultPoint).toBeTypeOf('function');
  });
});
