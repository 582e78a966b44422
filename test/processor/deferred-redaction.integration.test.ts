/**
 * Deferred redactions through the real pipeline (receiver core, SQS emulator with its DLQ, the
 * processor handler, DynamoDB Local, s3rver): a Shopify redaction that meets an order whose claim is
 * not DONE keeps its body; the processor applies the order, then removes the body right after DONE,
 * and a crash in between is finished by the redelivery or, on the last receive, by the sweeper. The
 * redaction request is applied as the processor applies it (`applyCompliance` on the same stores),
 * at the moment each test needs; over HTTP: test/e2e/shopify-deferred-redaction.e2e.test.ts.
 */
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { EXAMPLE_APPLIERS } from '../../examples/payments/appliers/index.js';
import { applyCompliance, complianceRequestOf } from '../../lambdas/processor/compliance.js';
import { processMessage } from '../../lambdas/processor/core.js';
import { DeferredRedactionError } from '../../lambdas/processor/deferred-redaction.js';
import type { Applier } from '../../lambdas/processor/types.js';
import { ClaimStatus } from '../../lambdas/store/claim.js';
import { S3ComplianceStore } from '../../lambdas/store/compliance-store.js';
import { parseArchive } from '../../lambdas/store/payload-archive.js';
import { RedactionClaims } from '../../lambdas/store/redaction-claims.js';
import { SweepStore } from '../../lambdas/store/sweep-store.js';
import { STUCK_SHARD } from '../../lambdas/store/unfinished-index.js';
import { sweep } from '../../lambdas/sweeper/core.js';
import { getObjectText, peekMessageBody, withEachCommand } from '../helpers/aws.js';
import { stripePaymentIntentEvent } from '../helpers/events.js';
import { recordingLog } from '../helpers/log.js';
import {
  createPipelineHarness,
  type PipelineHarness,
  type PipelineOptions,
} from '../helpers/pipeline-harness.js';
import { shopifyHeaders, stripeHeaders } from '../helpers/signing.js';

const SHOP = 'deferred.myshopify.com';
let h: PipelineHarness;
afterEach(async () => {
  await h?.stop();
});

const pipeline = (options: PipelineOptions = {}) =>
  createPipelineHarness({ compliance: true, visibilityTimeoutSeconds: 1, ...options });

const erin = { id: 9101, email: 'erin@example.com', phone: '+15550009101' };
const order = (id: number, big: boolean) => ({
  id,
  email: erin.email,
  updated_at: '2026-12-02T10:00:00Z',
  financial_status: 'paid',
  fulfillment_status: null,
  customer: erin,
  ...(big ? { note: 'x'.repeat(500_000) } : {}),
});

async function deliverOrder(id: string, orderId: number, big: boolean): Promise<string> {
  const body = JSON.stringify(order(orderId, big));
  const result = await h.receiver.deliver(
    'shopify',
    body,
    shopifyHeaders(body, { shop: SHOP, webhookId: id, eventId: id }),
  );
  expect(result).toMatchObject({ statusCode: 200, outcome: 'accepted' });
  return result.key ?? '';
}

/** Erin's `customers/redact`, applied as the processor applies it. */
function redactErin(id = 'redact-erin') {
  const request = complianceRequestOf({
    provider: 'shopify',
    eventType: 'customers/redact',
    payload: { shop_id: 1, shop_domain: SHOP, customer: erin, orders_to_redact: [] },
  });
  if (request === undefined) throw new Error('not a compliance request');
  return applyCompliance(
    request,
    { key: `shopify:${SHOP}:${id}`, eventId: id },
    {
      store: new S3ComplianceStore(h.s3, h.archiveBucket),
      claims: new RedactionClaims(h.receiver.dynamo, h.receiver.tableName),
      log: { info: () => undefined },
    },
  );
}

/** Every archive object, with the idempotency keys it holds. */
async function archive(): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  const store = new S3ComplianceStore(h.s3, h.archiveBucket);
  for await (const key of store.list('events/'))
    found.set(
      key,
      parseArchive(await getObjectText(h.s3, h.archiveBucket, key), key).map((e) => e.key),
    );
  return found;
}
const holding = async (key: string) =>
  [...(await archive())].filter(([, keys]) => keys.includes(key)).map(([object]) => object);

/** Moves every DLQ message back to the event queue, as `webhooks dlq redrive --max` does. */
async function redrive(): Promise<number> {
  let moved = 0;
  for (;;) {
    const page = await h.receiver.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: h.dlqUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    if (!page.Messages?.length) return moved;
    for (const message of page.Messages) {
      await h.receiver.sqs.send(
        new SendMessageCommand({ QueueUrl: h.receiver.queueUrl, MessageBody: message.Body ?? '' }),
      );
      moved++;
    }
  }
}

const expectRedacted = async (key: string, by = `shopify:${SHOP}:redact-erin`) => {
  const claim = await h.receiver.claim(key);
  expect(claim).toMatchObject({ status: ClaimStatus.Done, outcome: 'applied', redactedBy: by });
  for (const gone of ['redactionPendingBy', 'redactionObjects', 'sweepShard', 'sweepAt'])
    expect(claim).not.toHaveProperty(gone);
  expect(await holding(key)).toEqual([]);
};

const exampleOrder = EXAMPLE_APPLIERS.shopify?.['orders/create'];
if (exampleOrder === undefined) throw new Error('the example appliers have no Shopify orders/create');

describe('a redaction that meets an order not applied yet', () => {
  it('keeps a queued claim-checked order, which is applied and then removed', async () => {
    h = await pipeline();
    const key = await deliverOrder('w-queued', 910001, true);
    const [bodyObject] = await holding(key);
    expect(await redactErin()).toMatchObject({ deferredEvents: 1, matchedEvents: 0, deletedObjects: 0 });
    expect(await holding(key)).toEqual([bodyObject]);

    await h.drainQueue();
    expect(await h.row('orders', 'shopify:order:910001')).toMatchObject({ lastEventId: 'w-queued' });
    await expectRedacted(key);
    expect(await h.dlqMessages()).toBe(0);
  }, 30_000);

  it('finishes a redaction that marked the order while a worker was applying it (read after DONE)', async () => {
    let bodyDuringRequest: string[] | undefined;
    const racing: Applier = {
      async plan(event, context) {
        if (bodyDuringRequest === undefined) {
          // Another worker applies the request now: the claim is PROCESSING under this worker's lease.
          await redactErin();
          bodyDuringRequest = await holding(event.key);
        }
        return exampleOrder.plan(event, context);
      },
    };
    h = await pipeline({ appliers: { shopify: { 'orders/create': racing } } });
    const key = await deliverOrder('w-racing', 910002, true);
    await h.drainQueue();
    expect(bodyDuringRequest).toHaveLength(1);
    expect(await h.row('orders', 'shopify:order:910002')).toMatchObject({ lastEventId: 'w-racing' });
    await expectRedacted(key);
  }, 30_000);

  it('keeps a small order failed into the DLQ in every batch object; after a redrive, removes it from all, the redrive batch included', async () => {
    h = await pipeline({ maxReceiveCount: 2, faultPoints: 'processor.afterClaim@w-dlq:2' });
    const key = await deliverOrder('w-dlq', 910003, false);
    await h.drainQueue();
    expect((await h.receiver.claim(key))?.status).toBe(ClaimStatus.Failed);
    const failedCopies = await holding(key);
    expect(failedCopies.length).toBe(2);

    expect(await redactErin()).toMatchObject({ deferredEvents: 1 });
    expect(await holding(key)).toEqual(failedCopies);
    expect([...((await h.receiver.claim(key))?.redactionObjects ?? [])].sort()).toEqual(failedCopies);

    expect(await redrive()).toBe(1);
    await h.drainQueue();
    expect(await h.row('orders', 'shopify:order:910003')).toMatchObject({ lastEventId: 'w-dlq' });
    await expectRedacted(key);
  }, 30_000);

  it('finishes on the redelivery when the worker crashes between DONE and removing the body', async () => {
    h = await pipeline({ maxReceiveCount: 3, faultPoints: 'compliance.afterDone:1' });
    const key = await deliverOrder('w-crash', 910004, true);
    await redactErin();
    await h.drainQueue();
    await expectRedacted(key);
    // The redelivery found it DONE: it was applied once.
    expect((await h.receiver.claim(key))?.processingAttempts).toBe(1);
    expect(await h.dlqMessages()).toBe(0);
  }, 30_000);

  it('logs a failed deferred redaction as such, not as a failed attempt: the event stays DONE', async () => {
    h = await pipeline({ faultPoints: 'compliance.afterDone:1' });
    const key = await deliverOrder('w-log', 910005, true);
    await redactErin();
    const body = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    const { log, lines } = recordingLog();

    await expect(processMessage(body, 1, { ...h.processorDeps, log })).rejects.toBeInstanceOf(
      DeferredRedactionError,
    );
    expect(lines.filter((line) => line.level !== 'info')).toEqual([
      {
        level: 'error',
        message: 'the event is applied, but its deferred redaction failed; SQS will redeliver',
        details: {
          key,
          eventId: 'w-log',
          receiveCount: 1,
          error: expect.stringMatching(
            /^DeferredRedactionError: event .* is applied \(DONE\), but removing .*InjectedFaultError: injected fault at compliance\.afterDone/,
          ),
        },
      },
    ]);
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Done,
      redactionPendingBy: `shopify:${SHOP}:redact-erin`,
    });
  }, 30_000);

  it('is finished by the sweeper when that crash was on the last receive (the message is in the DLQ)', async () => {
    h = await pipeline({ maxReceiveCount: 1, faultPoints: 'compliance.afterDone:1' });
    const key = await deliverOrder('w-last', 910005, true);
    await redactErin();
    await h.drainQueue();
    const held = await h.receiver.claim(key);
    expect(held).toMatchObject({
      status: ClaimStatus.Done,
      redactionPendingBy: `shopify:${SHOP}:redact-erin`,
    });
    expect(held?.sweepShard).toBeDefined();
    expect(await holding(key)).toHaveLength(1);

    const settings = {
      receivedGraceMs: 60_000,
      processingGraceMs: 300_000,
      enqueuedStaleMs: 3_600_000,
      maxRequeues: 3,
      maxClaimsPerRun: 100,
    };
    const sweeper = (aheadMs: number) => ({
      claims: new SweepStore(h.receiver.dynamo, h.receiver.tableName),
      queue: h.receiver.queue,
      archive: h.receiver.archive,
      settings,
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
      clock: () => Date.now() + aheadMs,
    });
    // While the worker's hold lasts (its lease), the sweeper leaves it alone.
    expect(await sweep(sweeper(0))).toMatchObject({ due: 0, redactions: [] });
    expect(await sweep(sweeper(60_000))).toMatchObject({ due: 1, redactions: [key], requeued: [] });
    await h.drainQueue();
    await expectRedacted(key);
    expect(await h.receiver.claim(key)).toMatchObject({ sweeps: 1, processingAttempts: 1 });
  }, 30_000);

  it('reports to `webhooks stuck` a deferred redaction the sweeper sent again too often, still DONE', async () => {
    h = await pipeline({ maxReceiveCount: 1, faultPoints: 'compliance.afterDone:1' });
    const key = await deliverOrder('w-stuck', 910006, true);
    await redactErin();
    await h.drainQueue();
    const report = await sweep({
      claims: new SweepStore(h.receiver.dynamo, h.receiver.tableName),
      queue: h.receiver.queue,
      settings: {
        receivedGraceMs: 0,
        processingGraceMs: 0,
        enqueuedStaleMs: 0,
        maxRequeues: 0,
        maxClaimsPerRun: 100,
      },
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
      clock: () => Date.now() + 60_000,
    });
    expect(report.reported).toEqual([
      expect.objectContaining({
        key,
        status: ClaimStatus.Done,
        reason: expect.stringContaining('deferred redaction'),
      }),
    ]);
    expect((await h.receiver.claim(key))?.sweepShard).toBe(STUCK_SHARD);
  }, 30_000);
});

describe('a Shopify order that no redaction waits for', () => {
  it('costs a duplicate of the DONE order one claim write and no redaction read', async () => {
    h = await pipeline();
    const key = await deliverOrder('w-plain', 910009, false);
    const body = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    await h.drainQueue();
    const log = { info: () => {}, warn: () => {}, error: () => {} };

    const commands: string[] = [];
    const result = await withEachCommand(
      h.receiver.dynamo,
      (name) => commands.push(name),
      () => processMessage(body, 1, { ...h.processorDeps, log }),
    );
    expect(result).toMatchObject({ kind: 'already-done', key });
    // The processing claim's conditional write answers DONE with the claim, which says no
    // redaction is pending: nothing more is read.
    expect(commands).toEqual(['UpdateItemCommand']);
  }, 30_000);
});

describe('the redaction lookup after DONE', () => {
  /** The claims-table reads while `body` is processed from its first receive. */
  async function claimReads(body: string, deps = h.processorDeps): Promise<number> {
    let reads = 0;
    const log = { info: () => {}, warn: () => {}, error: () => {} };
    const result = await withEachCommand(
      h.receiver.dynamo,
      (name, input) => {
        if (name === 'GetItemCommand' && input.TableName === h.receiver.tableName) reads++;
      },
      () => processMessage(body, 1, { ...deps, log }),
    );
    expect(result).toMatchObject({ kind: 'done', outcome: 'applied' });
    return reads;
  }

  it('reads the claim once for a Shopify event, never for another provider or when the stack serves no compliance topics', async () => {
    h = await pipeline();
    await deliverOrder('w-lookup', 910020, false);
    expect(await claimReads(await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl))).toBe(1);
    await h.drainQueue();

    await deliverOrder('w-lookup-off', 910021, false);
    const { compliance: _compliance, ...noCompliance } = h.processorDeps;
    expect(await claimReads(await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl), noCompliance)).toBe(
      0,
    );
    await h.drainQueue();

    const payment = JSON.stringify(stripePaymentIntentEvent({ intentId: 'pi_lookup' }));
    expect(await h.receiver.deliver('stripe', payment, stripeHeaders(payment))).toMatchObject({
      statusCode: 200,
    });
    expect(await claimReads(await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl))).toBe(0);
  }, 30_000);
});

describe('a redaction delivered through the pipeline', () => {
  async function deliverRedaction(id: string) {
    const body = JSON.stringify({ shop_id: 1, shop_domain: SHOP, customer: erin, orders_to_redact: [] });
    const headers = shopifyHeaders(body, {
      shop: SHOP,
      webhookId: id,
      eventId: id,
      topic: 'customers/redact',
    });
    const result = await h.receiver.deliver('shopify', body, headers);
    expect(result).toMatchObject({ statusCode: 200, outcome: 'accepted' });
    return result.key ?? '';
  }

  it("removes the customer's applied orders from the archive and completes as applied", async () => {
    h = await pipeline();
    const key = await deliverOrder('w-applied', 910010, false);
    await h.drainQueue();
    expect(await holding(key)).toHaveLength(1);

    const redaction = await deliverRedaction('redact-applied');
    await h.drainQueue();
    expect(await holding(key)).toEqual([]);
    expect(await h.receiver.claim(redaction)).toMatchObject({ status: ClaimStatus.Done, outcome: 'applied' });
  }, 30_000);

  it('answers applied (not unhandled) and passes each object through compliance.afterObject', async () => {
    h = await pipeline();
    const key = await deliverOrder('w-fault', 910011, false);
    await h.drainQueue();
    const redaction = await deliverRedaction('redact-fault');
    const body = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    const points: string[] = [];
    const log = { info: () => {}, warn: () => {}, error: () => {} };

    const result = await processMessage(body, 1, {
      ...h.processorDeps,
      log,
      faultPoint: (point, eventId) => points.push(`${point}@${eventId}`),
    });
    // No applier handles customers/redact: the request itself is the business fact applied.
    expect(result).toMatchObject({ kind: 'done', outcome: 'applied', key: redaction });
    expect(points).toContain('compliance.afterObject@redact-fault');
    expect(await holding(key)).toEqual([]);
  }, 30_000);

  it('fails a compliance request whose scan does not fit in the invocation, saying so on its claim', async () => {
    h = await pipeline();
    const key = await deliverOrder('w-late', 910012, false);
    await h.drainQueue();
    const redaction = await deliverRedaction('redact-late');
    const body = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    const { log, lines } = recordingLog();
    await expect(
      processMessage(body, 1, { ...h.processorDeps, log }, { remainingTimeMs: () => 900 }),
    ).rejects.toThrow('the compliance scan ran out of time after 0 archive objects');
    // Released (its lease ends now) with the reason, for the retry.
    const released = await h.receiver.claim(redaction);
    expect(released).toMatchObject({
      status: ClaimStatus.Processing,
      lastError: expect.stringContaining('ComplianceDeadlineError: the compliance scan ran out of time'),
    });
    expect(released?.leaseExpiresAt).toBeLessThanOrEqual(Date.now());
    expect(lines.map((l) => l.message)).toContain('processing failed; SQS will redeliver');
    // Nothing was removed; with time, the retry applies it.
    expect(await holding(key)).not.toEqual([]);
    await expect(processMessage(body, 2, { ...h.processorDeps, log })).resolves.toMatchObject({
      kind: 'done',
    });
    expect(await holding(key)).toEqual([]);
  }, 30_000);

  it('applies a compliance request once: a retry after its state step does not apply it again', async () => {
    h = await pipeline({ faultPoints: 'processor.afterState:1' });
    const redaction = await deliverRedaction('redact-resumed');
    const body = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    const { log, lines } = recordingLog();
    const { compliance: _compliance, archive: _archive, ...withoutArchive } = h.processorDeps;
    // An app that also acts on the request: one repeat-safe effect after the state step.
    const notified: string[] = [];
    const appliers = {
      shopify: {
        'customers/redact': {
          plan: async () => ({ effects: ['notify'] }),
          effects: {
            notify: {
              adapter: 'ledger',
              run: async (event: { eventId: string }) => {
                notified.push(event.eventId);
              },
            },
          },
        },
      },
    };
    const deps = { ...withoutArchive, appliers, log };

    await expect(processMessage(body, 1, deps)).rejects.toThrow(/processor.afterState/);
    expect(await h.receiver.claim(redaction)).toMatchObject({ lastCompletedStep: 'state' });
    await processMessage(body, 2, deps);
    expect(lines.filter((line) => line.message === 'compliance request applied')).toHaveLength(1);
    expect(notified).toHaveLength(1);
    expect(await h.receiver.claim(redaction)).toMatchObject({ status: ClaimStatus.Done, outcome: 'applied' });
  }, 30_000);

  it('completes as applied, and logs that nothing is stored, when the stack keeps no archive', async () => {
    h = await pipeline();
    const redaction = await deliverRedaction('redact-no-archive');
    const body = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    const { log, lines } = recordingLog();
    const { compliance: _compliance, archive: _archive, ...withoutArchive } = h.processorDeps;

    await processMessage(body, 1, { ...withoutArchive, log });
    expect(lines).toContainEqual({
      level: 'info',
      message: 'compliance request applied',
      details: {
        provider: 'shopify',
        topic: 'customers/redact',
        shop: SHOP,
        key: redaction,
        archive: 'off: nothing stored to redact or export',
      },
    });
    expect(await h.receiver.claim(redaction)).toMatchObject({ status: ClaimStatus.Done, outcome: 'applied' });
  }, 30_000);
});
