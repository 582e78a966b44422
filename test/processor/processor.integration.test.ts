/**
 * The processor on DynamoDB Local and the SQS emulator: real visibility timeouts (1 s here), a real
 * redrive policy to a DLQ, the Lambda handler with Powertools batch, fed by the event-source stand-in.
 * Events enter through the real receiver core, signed with the providers' official libraries.
 */
import { CreateBucketCommand, DeleteBucketCommand } from '@aws-sdk/client-s3';
import { DeleteMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { itemSizeBytes } from '../../bench/capacity.js';
import { EXAMPLE_APPLIERS } from '../../examples/payments/appliers/index.js';
import { paymentRowKey } from '../../examples/payments/appliers/stripe.js';
import { processMessage } from '../../lambdas/processor/core.js';
import { joinKey, planRowWrite } from '../../lambdas/processor/sdk/index.js';
import type { Applier, ApplierRegistry } from '../../lambdas/processor/types.js';
import { CLAIM_ERROR_MAX_BYTES, ClaimStatus } from '../../lambdas/store/claim.js';
import { parseArchive } from '../../lambdas/store/payload-archive.js';
import { LeaseLostError } from '../../lambdas/store/processing-claims.js';
import { toSqsRecord } from '../../local/sqs-poller.js';
import { bucketKeys, getObjectText, peekMessageBody, receiveAll } from '../helpers/aws.js';
import {
  asaasPaymentEvent,
  githubPushEvent,
  shopifyOrder,
  standardEvent,
  stripeCustomerEvent,
  stripePaymentIntentEvent,
} from '../helpers/events.js';
import { recordingLog } from '../helpers/log.js';
import { createPipelineHarness, type PipelineHarness } from '../helpers/pipeline-harness.js';
import {
  asaasHeaders,
  githubHeaders,
  shopifyHeaders,
  standardHeaders,
  stripeHeaders,
} from '../helpers/signing.js';

let h: PipelineHarness;
afterEach(async () => {
  await h?.stop();
});

async function deliverStripe(event: object) {
  const body = JSON.stringify(event);
  const result = await h.receiver.deliver('stripe', body, stripeHeaders(body));
  expect(result.statusCode).toBe(200);
  return result;
}

const ledgerCalls = () => h.sink.entries().filter((e) => e.service === 'ledger');
const receipts = () => h.sink.entries().filter((e) => e.service === 'mailer');

describe('processor: a payment that succeeds', () => {
  it('writes the Payments row, posts the ledger with an Idempotency-Key, then sends one receipt', async () => {
    h = await createPipelineHarness();
    const event = stripePaymentIntentEvent({ account: 'acct_1', intentId: 'pi_ok' });
    const accepted = await deliverStripe(event);
    await h.drainQueue();

    expect(await h.row('payments', paymentRowKey('acct_1', 'pi_ok'))).toMatchObject({
      provider: 'stripe',
      objectId: 'pi_ok',
      status: 'succeeded',
      amount: 2000,
      amountReceived: 2000,
      currency: 'usd',
      lastEventId: event.id,
      lastEventCreated: event.created,
    });
    expect(await h.receiver.claim(accepted.key ?? '')).toMatchObject({
      status: ClaimStatus.Done,
      outcome: 'applied',
      plannedEffects: ['ledger', 'receipt'],
      lastCompletedStep: 'receipt',
    });
    expect(ledgerCalls()).toEqual([
      expect.objectContaining({ idempotencyKey: `${accepted.key}:ledger`, replay: false }),
    ]);
    expect(ledgerCalls()[0]?.body).toMatchObject({ paymentIntent: 'pi_ok', amount: 2000, currency: 'usd' });
    expect(receipts()).toHaveLength(1);
    // Ledger before receipt: the irreversible effect is last.
    expect(h.sink.entries().map((e) => e.service)).toEqual(['ledger', 'mailer']);
  });

  it('archives the payload and headers without signature values, and records where on the claim', async () => {
    h = await createPipelineHarness();
    const event = stripePaymentIntentEvent({ intentId: 'pi_archive' });
    const body = JSON.stringify(event);
    const headers = stripeHeaders(body);
    const accepted = await h.receiver.deliver('stripe', body, headers);
    await h.drainQueue();

    const claim = await h.receiver.claim(accepted.key ?? '');
    const day = new Date().toISOString().slice(0, 10);
    expect(claim?.archiveKey).toMatch(new RegExp(`^events/stripe/${day}/batch-[0-9TZ]+-[0-9a-f-]+\\.json$`));
    expect(claim?.writtenRows).toEqual([`payments:${paymentRowKey('platform', 'pi_archive')}`]);
    const archived = await getObjectText(h.s3, h.archiveBucket, claim?.archiveKey ?? '');
    const [only, ...others] = parseArchive(archived, 'the object');
    expect(others).toEqual([]);
    expect(only).toMatchObject({
      key: accepted.key,
      eventId: event.id,
      body,
      bodyEncoding: 'utf8',
    });
    expect(only?.headers).toEqual({ 'content-type': 'application/json' });
    const signature = headers['stripe-signature'];
    expect(archived).not.toContain(signature.split('v1=')[1] ?? 'unreachable');
    expect(archived).not.toContain('stripe-signature');
  });

  it('applies nothing twice when SQS delivers the message again after the event is done', async () => {
    h = await createPipelineHarness();
    const accepted = await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_again' }));
    const body = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    // Two copies of the same message: SQS's at-least-once delivery.
    await h.receiver.sqs.send(new SendMessageCommand({ QueueUrl: h.receiver.queueUrl, MessageBody: body }));
    await h.receiver.sqs.send(new SendMessageCommand({ QueueUrl: h.receiver.queueUrl, MessageBody: body }));
    await h.drainQueue();
    const row = await h.row('payments', paymentRowKey('platform', 'pi_again'));
    expect(row?.status).toBe('succeeded');

    await h.receiver.sqs.send(new SendMessageCommand({ QueueUrl: h.receiver.queueUrl, MessageBody: body }));
    await h.drainQueue();
    expect(await h.row('payments', paymentRowKey('platform', 'pi_again'))).toEqual(row);
    expect(ledgerCalls()).toHaveLength(1);
    expect(receipts()).toHaveLength(1);
    expect(await h.receiver.claim(accepted.key ?? '')).toMatchObject({
      status: ClaimStatus.Done,
      processingAttempts: 1,
    });
    expect(await h.dlqMessages()).toBe(0);
  });
});

describe('processor: crashes and retries', () => {
  it('completes an event once after a failure between the processing claim and any effect', async () => {
    h = await createPipelineHarness({ faultPoints: 'processor.afterClaim:1' });
    const accepted = await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_crash1' }));

    const first = await h.poller.pollOnce();
    expect(first).toEqual({ received: 1, failed: 1 });
    const stalled = await h.receiver.claim(accepted.key ?? '');
    expect(stalled).toMatchObject({ status: ClaimStatus.Processing });
    expect(stalled?.lastError).toContain('injected fault at processor.afterClaim');
    expect(stalled?.lastCompletedStep).toBeUndefined();
    expect(h.sink.entries()).toEqual([]);

    await h.drainQueue(); // SQS redelivers after the 1 s visibility timeout
    expect(await h.receiver.claim(accepted.key ?? '')).toMatchObject({
      status: ClaimStatus.Done,
      processingAttempts: 2,
    });
    expect(ledgerCalls()).toHaveLength(1);
    expect(receipts()).toHaveLength(1);
    expect((await h.row('payments', paymentRowKey('platform', 'pi_crash1')))?.status).toBe('succeeded');
  });

  it('leaves the claim untouched after a failure before the processing claim, and completes the event on the retry', async () => {
    h = await createPipelineHarness({ faultPoints: 'processor.beforeClaim:1' });
    const accepted = await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_before_claim' }));
    const enqueued = await h.receiver.claim(accepted.key ?? '');

    expect(await h.poller.pollOnce()).toEqual({ received: 1, failed: 1 });
    expect(await h.receiver.claim(accepted.key ?? '')).toEqual(enqueued);

    await h.drainQueue();
    expect(await h.receiver.claim(accepted.key ?? '')).toMatchObject({
      status: ClaimStatus.Done,
      processingAttempts: 1,
    });
    expect(ledgerCalls()).toHaveLength(1);
    expect(receipts()).toHaveLength(1);
  });

  it('logs a failure before the processing claim, naming the event, since nothing is written on its claim', async () => {
    // Found by the soak (docs/soak.md): a failure here was only a ProcessingFailed metric.
    h = await createPipelineHarness({ faultPoints: 'processor.beforeClaim:2' });
    const accepted = await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_before_claim_log' }));
    const body = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    const { log, lines } = recordingLog();
    const expected = (message: string, receiveCount: number) => ({
      level: 'error',
      message,
      details: {
        key: accepted.key,
        eventId: accepted.eventId,
        eventType: 'payment_intent.succeeded',
        receiveCount,
        maxReceiveCount: 3,
        error: 'InjectedFaultError: injected fault at processor.beforeClaim',
      },
    });
    await expect(processMessage(body, 1, { ...h.processorDeps, log })).rejects.toThrow(
      'injected fault at processor.beforeClaim',
    );
    await expect(processMessage(body, 3, { ...h.processorDeps, log })).rejects.toThrow(
      'injected fault at processor.beforeClaim',
    );
    expect(lines).toEqual([
      expected('processing failed before taking the claim; SQS will redeliver', 1),
      expected(
        'processing failed before taking the claim, for the last time: the message goes to the DLQ and the claim stays as it was, for the sweeper',
        3,
      ),
    ]);
    // A DynamoDB failure taking the claim (a real server does not throttle on demand: a stub here).
    const failing = {
      ...h.processorDeps,
      log,
      claims: Object.assign(Object.create(h.processorDeps.claims), {
        beginProcessing: () => Promise.reject(new Error('ProvisionedThroughputExceededException: slow down')),
      }),
    };
    await expect(processMessage(body, 2, failing)).rejects.toThrow('slow down');
    expect(lines.at(-1)).toMatchObject({
      message: 'processing failed before taking the claim; SQS will redeliver',
      details: {
        key: accepted.key,
        receiveCount: 2,
        error: 'Error: ProvisionedThroughputExceededException: slow down',
      },
    });
  });

  it('ends the process at processor.crashAfterClaim, holding the claim, before any business write', async () => {
    h = await createPipelineHarness({ faultPoints: 'processor.crashAfterClaim:1' });
    const accepted = await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_crash_after_claim' }));
    const body = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    const log = { info: () => {}, warn: () => {}, error: () => {} };
    const exit = vi.spyOn(process, 'exit').mockImplementation(() => {
      throw new Error('the process would exit here');
    });
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    let exitCodes: unknown[][];
    try {
      await expect(processMessage(body, 1, { ...h.processorDeps, log })).rejects.toThrow(
        'the process would exit here',
      );
      exitCodes = [...exit.mock.calls];
    } finally {
      vi.restoreAllMocks();
    }
    expect(exitCodes).toEqual([[137]]);
    expect((await h.receiver.claim(accepted.key ?? ''))?.processingAttempts).toBe(1);
    expect(await h.row('payments', paymentRowKey('platform', 'pi_crash_after_claim'))).toBeUndefined();
    expect(ledgerCalls()).toHaveLength(0);
  });

  it('resumes after the ledger step: the ledger is posted once and one receipt is sent', async () => {
    h = await createPipelineHarness({ faultPoints: 'processor.afterLedger:1' });
    const accepted = await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_crash2' }));

    expect(await h.poller.pollOnce()).toEqual({ received: 1, failed: 1 });
    // The ledger honours Idempotency-Key, so it gets no marker of its own (one write unit saved on
    // every event): the claim still says `state`.
    expect(await h.receiver.claim(accepted.key ?? '')).toMatchObject({
      status: ClaimStatus.Processing,
      lastCompletedStep: 'state',
    });
    expect(ledgerCalls()).toHaveLength(1);
    expect(receipts()).toHaveLength(0);

    await h.drainQueue();
    // Called again with the same key: the ledger answered with its first posting, nothing new.
    expect(ledgerCalls().map((e) => [e.idempotencyKey, e.replay])).toEqual([
      [`${accepted.key}:ledger`, false],
      [`${accepted.key}:ledger`, true],
    ]);
    expect(receipts()).toHaveLength(1);
    expect(await h.receiver.claim(accepted.key ?? '')).toMatchObject({
      status: ClaimStatus.Done,
      lastCompletedStep: 'receipt',
    });
  });

  it("still sends an event's own effects after its state committed, though a newer event has overwritten the row since", async () => {
    h = await createPipelineHarness();
    const t = Math.floor(Date.now() / 1000);
    const accepted = await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_overtaken', created: t }));
    // The message is taken out of the queue (this test redelivers it), and this attempt stops
    // right after the state write, as a crash at processor.afterState would.
    const [held] = await receiveAll(h.receiver.sqs, h.receiver.queueUrl);
    await h.receiver.sqs.send(
      new DeleteMessageCommand({ QueueUrl: h.receiver.queueUrl, ReceiptHandle: held?.ReceiptHandle }),
    );
    const log = { info: () => {}, warn: () => {}, error: () => {} };
    const crashAfterState = (point: string) => {
      if (point === 'processor.afterState') throw new Error('stopped after the state write');
    };
    await expect(
      processMessage(held?.Body ?? '', 1, { ...h.processorDeps, log, faultPoint: crashAfterState }),
    ).rejects.toThrow('stopped after the state write');
    expect(ledgerCalls()).toHaveLength(0);

    // A later event of the same payment is applied in between.
    await deliverStripe(
      stripePaymentIntentEvent({
        intentId: 'pi_overtaken',
        type: 'payment_intent.processing',
        status: 'processing',
        created: t + 10,
      }),
    );
    await h.drainQueue();
    expect(await h.row('payments', paymentRowKey('platform', 'pi_overtaken'))).toMatchObject({
      status: 'processing',
    });

    // The retry does not plan again (it would find itself stale): its state is committed, its
    // ledger posting and receipt are still owed.
    const retried = await processMessage(held?.Body ?? '', 2, { ...h.processorDeps, log });
    expect(retried).toMatchObject({ kind: 'done', outcome: 'applied' });
    expect(ledgerCalls().map((e) => e.idempotencyKey)).toEqual([`${accepted.key}:ledger`]);
    expect(receipts()).toHaveLength(1);
    expect(await h.receiver.claim(accepted.key ?? '')).toMatchObject({
      status: ClaimStatus.Done,
      outcome: 'applied',
    });
  });

  it('relies on the ledger Idempotency-Key when the crash falls between the ledger call and its marker', async () => {
    h = await createPipelineHarness({ faultPoints: 'processor.beforeLedgerMarker:1' });
    const accepted = await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_crash3' }));
    await h.poller.pollOnce();
    await h.drainQueue();

    // Called twice with one key: the ledger applied it once and answered the repeat as a replay.
    expect(ledgerCalls().map((e) => [e.idempotencyKey, e.replay])).toEqual([
      [`${accepted.key}:ledger`, false],
      [`${accepted.key}:ledger`, true],
    ]);
    expect(receipts()).toHaveLength(1);
  });

  it('retries an effect the service refused without repeating the committed state write', async () => {
    h = await createPipelineHarness();
    // A 4xx: the mailer refused the call without acting, so calling it again is safe.
    h.sink.fault('mailer', { kind: 'refuse', status: 429 });
    const accepted = await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_mailer' }));
    await h.poller.pollOnce();
    const afterFailure = await h.row('payments', paymentRowKey('platform', 'pi_mailer'));
    expect(await h.receiver.claim(accepted.key ?? '')).toMatchObject({ lastCompletedStep: 'state' });
    await h.drainQueue();
    expect(await h.row('payments', paymentRowKey('platform', 'pi_mailer'))).toEqual(afterFailure);
    // The ledger's repeat is answered from its first posting: one posting, one receipt.
    expect(ledgerCalls().map((e) => e.replay)).toEqual([false, true]);
    expect(receipts()).toHaveLength(1);
  });

  it('sends a permanently failing event to the DLQ after maxReceiveCount with its claim FAILED', async () => {
    const broken: Applier = {
      plan: async () => {
        throw new Error('handler bug: cannot read property total');
      },
    };
    const appliers: ApplierRegistry = { ...EXAMPLE_APPLIERS, stripe: { 'customer.*': broken } };
    h = await createPipelineHarness({ maxReceiveCount: 3, appliers });
    const accepted = await deliverStripe(stripeCustomerEvent());

    await h.drainQueue(20_000);
    const claim = await h.receiver.claim(accepted.key ?? '');
    expect(claim).toMatchObject({ status: ClaimStatus.Failed, processingAttempts: 3 });
    expect(claim?.lastError).toContain('handler bug');
    expect(claim?.leaseToken).toBeUndefined();
    expect(await h.dlqMessages()).toBe(1);
  });

  it("names the table and the key's size when an applier keys a row past DynamoDB's 2,048-byte limit", async () => {
    // A signed id can be long (Stripe's `data.object.id` here); the applier puts it in a row key as is.
    const longId: Applier = {
      plan: (event, context) =>
        planRowWrite(context, {
          table: 'resources',
          pk: joinKey(['stripe', event.account, 'customer', `cus_${'x'.repeat(2100)}`]),
          order: { at: 0, rank: 0, eventId: event.eventId },
          attributes: { provider: 'stripe' },
        }),
    };
    h = await createPipelineHarness({ maxReceiveCount: 2, appliers: { stripe: { 'customer.*': longId } } });
    const accepted = await deliverStripe(stripeCustomerEvent());
    await h.drainQueue(20_000);
    const claim = await h.receiver.claim(accepted.key ?? '');
    expect(claim).toMatchObject({ status: ClaimStatus.Failed });
    expect(String(claim?.lastError)).toMatch(
      /^RowKeyError: resources row key is 2129 bytes, over DynamoDB's 2,048-byte limit/,
    );
  });

  it('keeps a claim under 1 KB (one write unit) when an attempt fails with a long error', async () => {
    let failures = 0;
    const verbose: Applier = {
      plan: async () => {
        failures++;
        // A downstream's whole HTML error page in the message: about 5 KB, with multi-byte characters.
        throw new Error(`upstream said: ${'<p>Wartung läuft — später erneut versuchen</p>'.repeat(100)}`);
      },
    };
    const appliers: ApplierRegistry = { ...EXAMPLE_APPLIERS, stripe: { 'customer.*': verbose } };
    h = await createPipelineHarness({ maxReceiveCount: 3, appliers });
    const accepted = await deliverStripe(stripeCustomerEvent());
    await h.poller.pollOnce();
    expect(failures).toBe(1);

    const claim = await h.receiver.claim(accepted.key ?? '');
    expect(claim).toMatchObject({ status: ClaimStatus.Processing });
    const error = String(claim?.lastError);
    expect(error.startsWith('Error: upstream said: <p>Wartung läuft')).toBe(true);
    expect(error.endsWith('…')).toBe(true);
    expect(Buffer.byteLength(error)).toBeLessThanOrEqual(CLAIM_ERROR_MAX_BYTES);
    // DynamoDB's own size rule: under 1,024 bytes, every later write of this claim is one unit.
    expect(itemSizeBytes(marshall(claim, { removeUndefinedValues: true }))).toBeLessThan(1_024);
  });

  it('lets a provider retry of a FAILED event queue it again and complete it once the bug is fixed', async () => {
    let broken = true;
    const flaky: Applier = {
      plan: async (event) => {
        if (broken) throw new Error('temporary bug');
        return EXAMPLE_APPLIERS.stripe?.['payment_intent.*']?.plan(event, {
          read: async () => ({ row: undefined, newer: true, writtenByThisEvent: false }),
          has: () => false,
        }) as never;
      },
    };
    h = await createPipelineHarness({ maxReceiveCount: 2, appliers: { stripe: { 'customer.*': flaky } } });
    const event = stripeCustomerEvent();
    const accepted = await deliverStripe(event);
    await h.drainQueue(20_000);
    expect((await h.receiver.claim(accepted.key ?? ''))?.status).toBe(ClaimStatus.Failed);

    broken = false;
    const retry = await deliverStripe(event);
    expect(retry).toMatchObject({ outcome: 'accepted', tookOver: true });
    await h.drainQueue();
    expect(await h.receiver.claim(accepted.key ?? '')).toMatchObject({
      status: ClaimStatus.Done,
      deliveries: 2,
    });
  });

  it('finishes, without repeating any step, an event set back from DONE whose markers are all done', async () => {
    h = await createPipelineHarness();
    const accepted = await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_setback' }));
    const body = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    await h.drainQueue();
    const row = await h.row('payments', paymentRowKey('platform', 'pi_setback'));
    await h.receiver.doc.send(
      new UpdateCommand({
        TableName: h.receiver.tableName,
        Key: { pk: accepted.key },
        UpdateExpression: 'SET #status = :enqueued',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':enqueued': ClaimStatus.Enqueued },
      }),
    );
    await h.receiver.sqs.send(new SendMessageCommand({ QueueUrl: h.receiver.queueUrl, MessageBody: body }));
    await h.drainQueue();
    expect(await h.receiver.claim(accepted.key ?? '')).toMatchObject({
      status: ClaimStatus.Done,
      lastCompletedStep: 'receipt',
    });
    expect(await h.row('payments', paymentRowKey('platform', 'pi_setback'))).toEqual(row);
    expect(ledgerCalls()).toHaveLength(1);
    expect(receipts()).toHaveLength(1);
  });

  it('completes an event with no registered handler as unhandled instead of failing it', async () => {
    h = await createPipelineHarness();
    const accepted = await deliverStripe(stripeCustomerEvent());
    await h.drainQueue();
    expect(await h.receiver.claim(accepted.key ?? '')).toMatchObject({
      status: ClaimStatus.Done,
      outcome: 'unhandled',
    });
    expect(await h.dlqMessages()).toBe(0);
  });

  it("records where an unhandled event's payload is archived, with its completion", async () => {
    h = await createPipelineHarness();
    const accepted = await deliverStripe(stripeCustomerEvent());
    const body = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    const { log, lines } = recordingLog();
    // Without the runtime's batch object, the attempt archives the event in an object of its own.
    const result = await processMessage(body, 1, { ...h.processorDeps, log });

    // The outcome is what the runtime counts as Unhandled; the log says why nothing was applied.
    expect(result).toMatchObject({ kind: 'done', outcome: 'unhandled', unresumed: [] });
    expect(lines).toEqual([
      {
        level: 'warn',
        message: 'no business applier for this event type; completing it as unhandled',
        details: { key: accepted.key, provider: 'stripe', eventType: 'customer.created' },
      },
    ]);
    const claim = await h.receiver.claim(accepted.key ?? '');
    expect(claim).toMatchObject({
      status: ClaimStatus.Done,
      outcome: 'unhandled',
      lastCompletedStep: 'state',
    });
    expect(await bucketKeys(h.s3, h.archiveBucket)).toEqual([claim?.archiveKey]);
  });
});

describe('processor: stale ordering', () => {
  it('keeps requires_payment_method when payment_failed is followed by an older processing event', async () => {
    h = await createPipelineHarness();
    const t = Math.floor(Date.now() / 1000);
    await deliverStripe(
      stripePaymentIntentEvent({
        intentId: 'pi_order',
        type: 'payment_intent.payment_failed',
        status: 'requires_payment_method',
        created: t,
      }),
    );
    await h.drainQueue();
    const stale = await deliverStripe(
      stripePaymentIntentEvent({
        intentId: 'pi_order',
        type: 'payment_intent.processing',
        status: 'processing',
        created: t - 30,
      }),
    );
    await h.drainQueue();

    expect(await h.row('payments', paymentRowKey('platform', 'pi_order'))).toMatchObject({
      status: 'requires_payment_method',
      lastEventCreated: t,
    });
    expect(await h.receiver.claim(stale.key ?? '')).toMatchObject({
      status: ClaimStatus.Done,
      outcome: 'stale',
    });
  });

  it('resolves two events in the same second by status precedence, whatever order they arrive in', async () => {
    h = await createPipelineHarness();
    const t = Math.floor(Date.now() / 1000);
    const failed = (intentId: string) =>
      stripePaymentIntentEvent({
        intentId,
        type: 'payment_intent.payment_failed',
        status: 'requires_payment_method',
        created: t,
      });
    const processing = (intentId: string) =>
      stripePaymentIntentEvent({
        intentId,
        type: 'payment_intent.processing',
        status: 'processing',
        created: t,
      });

    await deliverStripe(failed('pi_tie_a'));
    await h.drainQueue();
    await deliverStripe(processing('pi_tie_a'));
    await h.drainQueue();

    await deliverStripe(processing('pi_tie_b'));
    await h.drainQueue();
    await deliverStripe(failed('pi_tie_b'));
    await h.drainQueue();

    expect((await h.row('payments', paymentRowKey('platform', 'pi_tie_a')))?.status).toBe(
      'requires_payment_method',
    );
    expect((await h.row('payments', paymentRowKey('platform', 'pi_tie_b')))?.status).toBe(
      'requires_payment_method',
    );
  });

  it('keeps a refund under its own guard, so an older status event cannot undo it', async () => {
    h = await createPipelineHarness();
    const t = Math.floor(Date.now() / 1000);
    await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_refund', created: t - 100 }));
    await h.drainQueue();
    const refund = {
      id: 'evt_refund_1',
      object: 'event',
      type: 'charge.refunded',
      created: t,
      data: {
        object: {
          id: 'ch_1',
          object: 'charge',
          payment_intent: 'pi_refund',
          amount_refunded: 500,
          refunded: false,
          currency: 'usd',
        },
      },
    };
    await deliverStripe(refund);
    await h.drainQueue();
    expect(await h.row('payments', paymentRowKey('platform', 'pi_refund'))).toMatchObject({
      status: 'succeeded',
      amountRefunded: 500,
      refundEventId: 'evt_refund_1',
    });
  });

  it('collapses a re-created Shopify order into one row and ignores an older update', async () => {
    h = await createPipelineHarness();
    // Shopify's own samples use ids beyond 2^53: the body carries the number as text, exactly.
    const order = { ...shopifyOrder(1), admin_graphql_api_id: 'gid://shopify/Order/820982911946154508' };
    const bodyOf = (fields: object) =>
      JSON.stringify({ ...order, ...fields }).replace('"id":1,', '"id":820982911946154508,');
    const created = bodyOf({});
    await h.receiver.deliver('shopify', created, shopifyHeaders(created, { topic: 'orders/create' }));
    const newer = bodyOf({ financial_status: 'refunded', updated_at: '2026-11-30T12:00:00-05:00' });
    await h.receiver.deliver('shopify', newer, shopifyHeaders(newer, { topic: 'orders/updated' }));
    await h.drainQueue();
    // A retry of an older update (Shopify retries carry the payload as it was), and a re-created order.
    const older = bodyOf({ financial_status: 'pending', updated_at: '2026-11-30T11:00:00-05:00' });
    await h.receiver.deliver('shopify', older, shopifyHeaders(older, { topic: 'orders/updated' }));
    await h.receiver.deliver('shopify', created, shopifyHeaders(created, { topic: 'orders/create' }));
    await h.drainQueue();

    expect(await h.receiver.claims()).toHaveLength(4); // four distinct deliveries, four claims...
    expect(await h.row('orders', 'shopify:order:820982911946154508')).toMatchObject({
      objectId: '820982911946154508', // ...one order row, exact id, with the newest state
      financialStatus: 'refunded',
      orderUpdatedAt: '2026-11-30T12:00:00-05:00',
    });
  });
});

describe('processor: the other providers', () => {
  it('writes GitHub push heads, Asaas payments and Standard Webhooks invoices as absolute state', async () => {
    h = await createPipelineHarness();
    const push = {
      ...githubPushEvent(),
      repository: { id: 17273051, full_name: 'octo-org/octo-repo', pushed_at: 1_764_500_000 },
    };
    const pushBody = JSON.stringify(push);
    expect((await h.receiver.deliver('github', pushBody, await githubHeaders(pushBody))).statusCode).toBe(
      200,
    );
    const asaas = asaasPaymentEvent();
    const asaasBody = JSON.stringify(asaas);
    expect((await h.receiver.deliver('asaas', asaasBody, asaasHeaders())).statusCode).toBe(200);
    const invoice = standardEvent();
    const invoiceBody = JSON.stringify(invoice);
    expect((await h.receiver.deliver('standard', invoiceBody, standardHeaders(invoiceBody))).statusCode).toBe(
      200,
    );
    await h.drainQueue();

    expect(await h.row('resources', 'github:17273051:ref:17273051:refs%2Fheads%2Fmain')).toMatchObject({
      repository: 'octo-org/octo-repo',
      headSha: push.after,
      lastEventCreated: 1_764_500_000,
    });
    expect(await h.row('payments', `asaas:acc_0a1b2c3d:${asaas.payment.id}`)).toMatchObject({
      status: 'RECEIVED',
      amount: 100,
      currency: 'BRL',
      lastEventId: asaas.id,
    });
    expect(await h.row('resources', `standard:default:invoice:${invoice.data.id}`)).toMatchObject({
      status: 'paid',
      amount: 4200,
    });
  });
});

describe('processor: batches and leases', () => {
  it('reports only the poison record of a batch as failed', async () => {
    h = await createPipelineHarness();
    await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_b1' }));
    await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_b2' }));
    const messages = await receiveAll(h.receiver.sqs, h.receiver.queueUrl);
    expect(messages).toHaveLength(2);
    const records = messages.map((m) =>
      toSqsRecord(m, 'arn:aws:sqs:us-east-1:000000000000:events', 'us-east-1'),
    );
    const poison = {
      ...records[0],
      messageId: 'poison-1',
      body: '{"not":"an event"',
    } as (typeof records)[number];
    const event: SQSEvent = { Records: [records[0], poison, records[1]] as SQSEvent['Records'] };

    const response = await h.processor(event, {} as never);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'poison-1' }]);
    expect((await h.row('payments', paymentRowKey('platform', 'pi_b1')))?.status).toBe('succeeded');
    expect((await h.row('payments', paymentRowKey('platform', 'pi_b2')))?.status).toBe('succeeded');
  });

  it('archives a batch in one object per provider, and each claim names the object holding its event', async () => {
    h = await createPipelineHarness();
    const stripeKeys = [];
    for (const id of ['pi_a1', 'pi_a2', 'pi_a3'])
      stripeKeys.push((await deliverStripe(stripePaymentIntentEvent({ intentId: id }))).key ?? '');
    const push = JSON.stringify(githubPushEvent());
    const github = await h.receiver.deliver('github', push, await githubHeaders(push, { delivery: 'ga-1' }));
    expect(github.statusCode).toBe(200);
    const messages = await receiveAll(h.receiver.sqs, h.receiver.queueUrl);
    expect(messages).toHaveLength(4);
    const records = messages.map((m) =>
      toSqsRecord(m, 'arn:aws:sqs:us-east-1:000000000000:events', 'us-east-1'),
    );
    const event = { Records: records } as SQSEvent;

    const response = await h.processor(event, {} as never);
    expect(response.batchItemFailures).toEqual([]);
    const objects = await bucketKeys(h.s3, h.archiveBucket);
    expect(objects).toHaveLength(2);
    const day = new Date().toISOString().slice(0, 10);
    for (const key of [...stripeKeys, github.key ?? '']) {
      const claim = await h.receiver.claim(key);
      expect(claim).toMatchObject({ status: ClaimStatus.Done, outcome: 'applied' });
      expect(objects).toContain(claim?.archiveKey);
      const events = parseArchive(await getObjectText(h.s3, h.archiveBucket, claim?.archiveKey ?? ''), 'it');
      expect(events.map((e) => e.key)).toContain(key);
      expect(claim?.archiveKey?.startsWith(`events/${claim?.provider}/${day}/batch-`)).toBe(true);
    }
    const stripeObject = (await h.receiver.claim(stripeKeys[0] ?? ''))?.archiveKey ?? '';
    const stored = parseArchive(await getObjectText(h.s3, h.archiveBucket, stripeObject), 'it');
    expect(stored.map((e) => e.key).sort()).toEqual([...stripeKeys].sort());
    expect(ledgerCalls()).toHaveLength(3);
  });

  it('fails the records of a batch whose archive cannot be written, and SQS delivers them again', async () => {
    h = await createPipelineHarness({ maxReceiveCount: 5 });
    const { key } = await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_s3_down' }));
    await h.s3.send(new DeleteBucketCommand({ Bucket: h.archiveBucket }));
    const [message] = await receiveAll(h.receiver.sqs, h.receiver.queueUrl);
    if (!message) throw new Error('no message');
    const record = toSqsRecord(message, 'arn:aws:sqs:us-east-1:000000000000:events', 'us-east-1');
    const response = await h.processor({ Records: [record] } as SQSEvent, {} as never);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    const claim = await h.receiver.claim(key ?? '');
    expect(claim?.status).not.toBe(ClaimStatus.Done);
    expect(String(claim?.lastError)).toMatch(/NoSuchBucket|does not exist/i);
    expect(ledgerCalls()).toHaveLength(0);

    await h.s3.send(new CreateBucketCommand({ Bucket: h.archiveBucket }));
    await h.processor({ Records: [record] } as SQSEvent, {} as never);
    expect(await h.receiver.claim(key ?? '')).toMatchObject({ status: ClaimStatus.Done });
    expect(ledgerCalls()).toHaveLength(1);
  });

  it("fails an attempt whose batch archive was not written, though the event's own object could be", async () => {
    h = await createPipelineHarness();
    const { key } = await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_batch_put_lost' }));
    const body = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    const log = { info: () => {}, warn: () => {}, error: () => {} };
    const batchArchive = Promise.reject(new Error('the batch PUT timed out'));
    batchArchive.catch(() => undefined);

    const failed = processMessage(body, 1, { ...h.processorDeps, log }, { batchArchive });
    await expect(failed).rejects.toThrow('the batch PUT timed out');
    const claim = await h.receiver.claim(key ?? '');
    expect(claim).toMatchObject({
      status: ClaimStatus.Processing,
      leaseOwner: 'processor',
      lastError: 'Error: the batch PUT timed out',
    });
    expect(claim?.archiveKey).toBeUndefined();
    expect(await bucketKeys(h.s3, h.archiveBucket)).toEqual([]);
    expect(ledgerCalls()).toHaveLength(0);
  });

  it('lets no worker whose lease was taken over mark the event DONE or FAILED or write its rows', async () => {
    h = await createPipelineHarness({ leaseSeconds: 30 });
    const accepted = await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_lease' }));
    const [message] = await receiveAll(h.receiver.sqs, h.receiver.queueUrl);
    const body = message?.Body ?? '';
    const log = { info: () => {}, warn: () => {}, error: () => {} };

    // Worker A plans, then stalls past its lease before committing.
    let resume!: () => void;
    const stalledUntil = new Promise<void>((resolve) => {
      resume = resolve;
    });
    const stalling: Applier = {
      async plan(event, context) {
        const plan = await EXAMPLE_APPLIERS.stripe?.['payment_intent.*']?.plan(event, context);
        await stalledUntil;
        return {
          ...plan,
          writes: plan?.writes?.map((w) => ({
            ...w,
            attributes: { ...w.attributes, status: 'written-by-A' },
          })),
        };
      },
    };
    const a = processMessage(body, 1, {
      ...h.processorDeps,
      appliers: { stripe: { 'payment_intent.*': stalling } },
      log,
    });
    await expect
      .poll(async () => (await h.receiver.claim(accepted.key ?? ''))?.status)
      .toBe(ClaimStatus.Processing);
    const tokenA = (await h.receiver.claim(accepted.key ?? ''))?.leaseToken ?? '';

    // Worker B gets the redelivered message after A's lease ran out, takes the claim and finishes.
    const later = () => Date.now() + 31_000;
    const b = await processMessage(body, 2, { ...h.processorDeps, clock: later, log });
    expect(b).toMatchObject({ kind: 'done', outcome: 'applied' });
    const afterB = await h.receiver.claim(accepted.key ?? '');
    expect(afterB).toMatchObject({ status: ClaimStatus.Done });

    // A wakes up: its transaction is fenced by its token, so neither its row write nor DONE lands.
    resume();
    await expect(a).rejects.toBeInstanceOf(LeaseLostError);
    expect((await h.row('payments', paymentRowKey('platform', 'pi_lease')))?.status).toBe('succeeded');
    await expect(
      h.processorDeps.claims.failProcessing(accepted.key ?? '', tokenA, 'late', Date.now(), 0),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(
      h.processorDeps.claims.markStep(
        accepted.key ?? '',
        tokenA,
        { step: 'state', done: 'applied' },
        Date.now(),
      ),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await h.receiver.claim(accepted.key ?? '')).toEqual(afterB);
    expect(ledgerCalls()).toHaveLength(1);
    expect(receipts()).toHaveLength(1);
  });

  it('retries, not drops, a message whose event another worker holds a live lease on', async () => {
    h = await createPipelineHarness();
    const accepted = await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_busy' }));
    const [message] = await receiveAll(h.receiver.sqs, h.receiver.queueUrl);
    const log = { info: () => {}, warn: () => {}, error: () => {} };
    const claimed = await h.holdProcessingLease(accepted.key ?? '', 'other-worker');
    expect(claimed.kind).toBe('claimed');
    const busy = await processMessage(message?.Body ?? '', 1, { ...h.processorDeps, log }).catch(
      (e: unknown) => e,
    );
    // The runtime logs and counts it by its name and key (error: "ClaimBusyError: ...").
    expect(busy).toMatchObject({ name: 'ClaimBusyError', key: accepted.key });
    expect(String(busy)).toBe(`ClaimBusyError: event ${accepted.key} is being processed by another worker`);
    expect((await h.receiver.claim(accepted.key ?? ''))?.leaseToken).toBe('other-worker');
  });
});

describe('processor: what an applier can ask', () => {
  it('answers has() for the configured adapters only, never for names every object has', async () => {
    h = await createPipelineHarness();
    const { key } = await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_has' }));
    const body = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    const log = { info: () => {}, warn: () => {}, error: () => {} };
    const answers: boolean[][] = [];
    const asking: ApplierRegistry = {
      stripe: {
        '*': {
          plan: async (_event, context) => {
            answers.push(
              ['ledger', 'mailer', 'crm', 'constructor', 'toString'].map((name) => context.has(name)),
            );
            return { outcome: 'noop' };
          },
        },
      },
    };

    await processMessage(body, 1, { ...h.processorDeps, appliers: asking, log });
    expect(answers).toEqual([[true, true, false, false, false]]);
    // Without any adapter configured, it has none.
    await h.receiver.doc.send(new DeleteCommand({ TableName: h.receiver.tableName, Key: { pk: key } }));
    await processMessage(body, 2, { ...h.processorDeps, appliers: asking, effects: undefined, log });
    expect(answers[1]).toEqual([false, false, false, false, false]);
  });

  it('completes a plan that names no outcome as noop when it writes nothing, as applied when it writes', async () => {
    const plans: Applier = {
      plan: async (event) =>
        event.objectId === 'cus_writes'
          ? {
              writes: [
                {
                  table: 'resources',
                  pk: 'stripe#cus_writes',
                  order: { at: 1, rank: 0, eventId: event.eventId },
                  attributes: { provider: 'stripe' },
                },
              ],
            }
          : {},
    };
    h = await createPipelineHarness({ appliers: { stripe: { 'customer.*': plans } } });
    const customer = (id: string) => ({
      ...stripeCustomerEvent(),
      data: { object: { id, object: 'customer', email: 'jenny.rosen@example.com' } },
    });
    const quiet = await deliverStripe(customer('cus_quiet'));
    const writes = await deliverStripe(customer('cus_writes'));
    await h.drainQueue();

    expect(await h.receiver.claim(quiet.key ?? '')).toMatchObject({
      status: ClaimStatus.Done,
      outcome: 'noop',
    });
    expect(await h.receiver.claim(writes.key ?? '')).toMatchObject({
      status: ClaimStatus.Done,
      outcome: 'applied',
    });
    expect(await h.row('resources', 'stripe#cus_writes')).toMatchObject({ provider: 'stripe' });
  });

  it('runs an effect whose adapter is not configured as one that may act twice, with no adapter to call', async () => {
    const seen: unknown[] = [];
    const crm: ApplierRegistry = {
      stripe: {
        '*': {
          plan: async () => ({ effects: ['notify', 'ledger'] }),
          effects: {
            notify: { adapter: 'crm', run: async (_event, context) => void seen.push(context.adapters.crm) },
            ledger: { adapter: 'ledger', run: async () => undefined },
          },
        },
      },
    };
    h = await createPipelineHarness({ appliers: crm, faultPoints: 'processor.beforeLedger:1' });
    const { key } = await deliverStripe(stripePaymentIntentEvent({ intentId: 'pi_unconfigured' }));
    const body = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    const log = { info: () => {}, warn: () => {}, error: () => {} };

    await expect(processMessage(body, 1, { ...h.processorDeps, log })).rejects.toThrow(
      'injected fault at processor.beforeLedger',
    );
    expect(seen).toEqual([undefined]);
    // Its step marker is written (a repeat-safe effect before the last gets none).
    expect(await h.receiver.claim(key ?? '')).toMatchObject({ lastCompletedStep: 'notify' });
  });

  it.each(['state', 'claim'])(
    'refuses a plan with an effect named %s, a step name of its own',
    async (name) => {
      const reserved: ApplierRegistry = { stripe: { '*': { plan: async () => ({ effects: [name] }) } } };
      h = await createPipelineHarness({ appliers: reserved });
      const { key } = await deliverStripe(stripePaymentIntentEvent({ intentId: `pi_reserved_${name}` }));
      const body = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
      const log = { info: () => {}, warn: () => {}, error: () => {} };

      const expected = `applier for payment_intent.succeeded planned an effect named "${name}": state and claim are the processor's own step names`;
      await expect(processMessage(body, 1, { ...h.processorDeps, log })).rejects.toThrow(expected);
      expect((await h.receiver.claim(key ?? ''))?.lastError).toBe(`Error: ${expected}`);
    },
  );
});
