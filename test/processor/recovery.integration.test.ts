/**
 * Recovery after the claim's own record of progress is gone or out of date, on DynamoDB Local and
 * the SQS emulator: a redrive after the claim's TTL, a claim expired but not yet deleted, a claim
 * deleted by TTL, a receiver taking over an expired claim while a processor worked on it, a forced
 * replay, unreadable payloads, and a processor that cannot initialise.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { DeleteMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { paymentRowKey } from '../../examples/payments/appliers/stripe.js';
import { processMessage } from '../../lambdas/processor/core.js';
import type { ProcessorHandler } from '../../lambdas/processor/runtime.js';
import { createProcessorHandler, initFailureRecorder } from '../../lambdas/processor/runtime.js';
import type { Applier } from '../../lambdas/processor/types.js';
import type { EventMessage } from '../../lambdas/queue/event-message.js';
import { CLAIM_RETENTION_DEFAULT_SECONDS } from '../../lambdas/shared/claim-retention.js';
import { ClaimStatus } from '../../lambdas/store/claim.js';
import { toSqsRecord } from '../../local/sqs-poller.js';
import { peekMessageBody, receiveAll } from '../helpers/aws.js';
import { githubPushEvent, stripePaymentIntentEvent } from '../helpers/events.js';
import { recordingLog } from '../helpers/log.js';
import { createPipelineHarness, type PipelineHarness } from '../helpers/pipeline-harness.js';
import { githubHeaders, stripeHeaders } from '../helpers/signing.js';

const DAY_MS = 24 * 3600 * 1000;
const log = { info: () => {}, warn: () => {}, error: () => {} };

let h: PipelineHarness;
afterEach(async () => {
  await h?.stop();
});

/**
 * A clock a minute past the claim's TTL: the item is expired to every condition and still stored,
 * as DynamoDB leaves it until its lazy deletion. (Moving `expiresAt` into the past instead races
 * DynamoDB Local, which deletes expired items within seconds.)
 */
async function clockPastTtl(key: string): Promise<() => number> {
  const stored = await h.receiver.claim(key);
  const offset = (stored?.expiresAt ?? 0) * 1000 + 60_000 - Date.now();
  return () => Date.now() + offset;
}
/** What `webhooks replay --force` writes (cli/claims.ts, `reopenDoneClaim`), minus the sweeper's index. */
async function reopenForReplay(key: string): Promise<void> {
  await h.receiver.doc.send(
    new UpdateCommand({
      TableName: h.receiver.tableName,
      Key: { pk: key },
      UpdateExpression: 'SET #status = :enqueued, replan = :true',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':enqueued': ClaimStatus.Enqueued, ':true': true },
    }),
  );
}
const ledgerCalls = () => h.sink.entries().filter((e) => e.service === 'ledger');
const receipts = () => h.sink.entries().filter((e) => e.service === 'mailer');

/**
 * A payment whose state step committed while the ledger was down on every attempt: the claim is
 * FAILED at `state` and the message is in the DLQ, as the review reproduced it.
 */
async function paymentStuckInDlq(intentId: string) {
  h = await createPipelineHarness({ maxReceiveCount: 2 });
  h.sink.failNext('ledger', 2);
  const body = JSON.stringify(stripePaymentIntentEvent({ intentId }));
  const accepted = await h.receiver.deliver('stripe', body, stripeHeaders(body));
  expect(accepted.statusCode).toBe(200);
  await h.drainQueue(20_000);
  const key = accepted.key ?? '';
  const failed = await h.receiver.claim(key);
  expect(failed).toMatchObject({ status: ClaimStatus.Failed, lastCompletedStep: 'state' });
  expect((await h.row('payments', paymentRowKey('platform', intentId)))?.lastEventId).toEqual(
    JSON.parse(body).id,
  );
  const [dead] = await receiveAll(h.receiver.sqs, h.dlqUrl);
  expect(dead?.Body).toBeDefined();
  expect(ledgerCalls()).toEqual([]);
  return { key, message: dead?.Body ?? '', failed };
}

describe('processor: a redrive after the claim TTL finishes the event', () => {
  it('keeps a FAILED claim for the DLQ retention plus a margin, so a redrive 8 days later posts the ledger and sends the receipt', async () => {
    const before = Date.now();
    const { key, message, failed } = await paymentStuckInDlq('pi_redrive_late');
    // Stripe's window is 7 days; the claim must outlive the DLQ's 14 days and the redrive.
    expect(failed?.expiresAt).toBeGreaterThanOrEqual(
      Math.floor(before / 1000) + CLAIM_RETENTION_DEFAULT_SECONDS,
    );

    // The operator fixes the ledger and redrives, 8 days after the event.
    const eightDaysLater = () => Date.now() + 8 * DAY_MS;
    const result = await processMessage(message, 1, { ...h.processorDeps, clock: eightDaysLater, log });
    expect(result).toMatchObject({ kind: 'done', outcome: 'applied' });
    expect(ledgerCalls().map((e) => [e.idempotencyKey, e.replay])).toEqual([[`${key}:ledger`, false]]);
    expect(receipts()).toHaveLength(1);
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Done,
      lastCompletedStep: 'receipt',
    });
  });

  it('re-creates a claim found expired but not yet deleted with its step markers, and resumes at the ledger', async () => {
    const { key, message } = await paymentStuckInDlq('pi_redrive_expired');
    // DynamoDB deletes expired items lazily: the item is past its TTL and still there.
    const clock = await clockPastTtl(key);

    await processMessage(message, 1, { ...h.processorDeps, clock, log });
    expect(ledgerCalls()).toHaveLength(1);
    expect(receipts()).toHaveLength(1);
    const claim = await h.receiver.claim(key);
    expect(claim).toMatchObject({
      status: ClaimStatus.Done,
      lastCompletedStep: 'receipt',
      plannedEffects: ['ledger', 'receipt'],
      processingAttempts: 1,
    });
    expect(claim?.expiresAt).toBeGreaterThan(
      Math.floor(clock() / 1000) + CLAIM_RETENTION_DEFAULT_SECONDS - 60,
    );
  });

  it('resumes from the business row when the claim is gone: the ledger (idempotent) runs, the receipt is reported, not sent blind', async () => {
    const { key, message } = await paymentStuckInDlq('pi_redrive_deleted');
    await h.receiver.doc.send(new DeleteCommand({ TableName: h.receiver.tableName, Key: { pk: key } }));

    const { log: recording, lines } = recordingLog();
    const result = await processMessage(message, 1, { ...h.processorDeps, log: recording });
    expect(result).toMatchObject({ kind: 'done', outcome: 'applied', unresumed: ['receipt'] });
    expect(ledgerCalls().map((e) => e.idempotencyKey)).toEqual([`${key}:ledger`]);
    expect(receipts()).toEqual([]);
    const queued = JSON.parse(message) as EventMessage;
    expect(lines.filter((line) => line.level === 'warn')).toEqual([
      {
        level: 'warn',
        message: 'resuming an event from its business row: effects that may act twice were not run again',
        details: {
          key,
          eventId: queued.eventId,
          row: `payments:${paymentRowKey('platform', 'pi_redrive_deleted')}`,
          resumed: ['ledger'],
          unresumed: ['receipt'],
        },
      },
    ]);
    expect(await h.receiver.claim(key)).toMatchObject({
      // The processor re-created the claim from its message.
      provider: 'stripe',
      account: queued.account,
      eventId: queued.eventId,
      eventType: queued.eventType,
      objectId: 'pi_redrive_deleted',
      status: ClaimStatus.Done,
      outcome: 'applied',
      recoveredFrom: 'business-row',
      plannedEffects: ['ledger'],
      unresumedEffects: ['receipt'],
      lastCompletedStep: 'ledger',
      writtenRows: [`payments:${paymentRowKey('platform', 'pi_redrive_deleted')}`],
      // The re-created claim names the archive object this attempt wrote.
      archiveKey: expect.stringMatching(/^events\/stripe\//),
    });
  });

  it('runs no effect again, and says which are unknown, when the business row does not record its planned effects', async () => {
    const { key, message } = await paymentStuckInDlq('pi_redrive_unrecorded');
    await h.receiver.doc.send(new DeleteCommand({ TableName: h.receiver.tableName, Key: { pk: key } }));
    // A row written without the list (by a version before it, or by hand).
    const rowKey = paymentRowKey('platform', 'pi_redrive_unrecorded');
    await h.receiver.doc.send(
      new UpdateCommand({
        TableName: h.tables.payments,
        Key: { pk: rowKey },
        UpdateExpression: 'REMOVE lastEventEffects',
      }),
    );
    const { log: recording, lines } = recordingLog();
    const points: string[] = [];

    const result = await processMessage(message, 1, {
      ...h.processorDeps,
      log: recording,
      faultPoint: (point) => points.push(point),
    });
    expect(result).toMatchObject({ kind: 'done', outcome: 'applied', unresumed: ['unknown'] });
    // DONE with the recovery's own write: no step after the state is left to stop at.
    expect(points).toEqual(['processor.beforeClaim', 'processor.afterClaim', 'processor.crashAfterClaim']);
    expect(h.sink.entries()).toEqual([]);
    expect(lines.filter((line) => line.level === 'warn')).toEqual([
      {
        level: 'warn',
        message:
          'resuming an event from its business row, which does not record its planned effects: none was run again',
        details: expect.objectContaining({
          key,
          row: `payments:${rowKey}`,
          resumed: [],
          unresumed: ['unknown'],
        }),
      },
    ]);
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Done,
      outcome: 'applied',
      recoveredFrom: 'business-row',
      plannedEffects: [],
      unresumedEffects: ['unknown'],
      lastCompletedStep: 'state',
    });
  });

  it('reports, not runs, a recorded effect the applier no longer defines (renamed since)', async () => {
    const { key, message } = await paymentStuckInDlq('pi_redrive_renamed');
    await h.receiver.doc.send(new DeleteCommand({ TableName: h.receiver.tableName, Key: { pk: key } }));
    const example = h.processorDeps.appliers.stripe?.['payment_intent.*'];
    if (!example?.effects?.receipt) throw new Error('the example has a payment applier with a receipt');
    // The ledger effect is gone from this version of the applier; the row still records it.
    const renamed = { ...example, effects: { receipt: example.effects.receipt } };

    const result = await processMessage(message, 1, {
      ...h.processorDeps,
      appliers: { stripe: { 'payment_intent.*': renamed } },
      log,
    });
    expect(result).toMatchObject({ kind: 'done', unresumed: ['ledger', 'receipt'] });
    expect(h.sink.entries()).toEqual([]);
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Done,
      unresumedEffects: ['ledger', 'receipt'],
      archiveKey: expect.stringMatching(/^events\/stripe\//),
    });
  });

  it('runs every planned effect again when each adapter honours Idempotency-Key', async () => {
    const { key, message } = await paymentStuckInDlq('pi_redrive_idempotent');
    await h.receiver.doc.send(new DeleteCommand({ TableName: h.receiver.tableName, Key: { pk: key } }));
    const mailer = h.processorDeps.effects?.mailer;
    if (!mailer) throw new Error('the harness has a mailer');
    const idempotentMailer = { honoursIdempotencyKey: true, call: mailer.call.bind(mailer) };
    const { log: recording, lines } = recordingLog();

    await processMessage(message, 1, {
      ...h.processorDeps,
      effects: { ...h.processorDeps.effects, mailer: idempotentMailer },
      log: recording,
    });
    // Nothing was left out, so nothing to warn about.
    expect(lines.filter((line) => line.level !== 'info')).toEqual([]);
    expect(ledgerCalls()).toHaveLength(1);
    expect(receipts()).toHaveLength(1);
    const claim = await h.receiver.claim(key);
    expect(claim).toMatchObject({ status: ClaimStatus.Done, lastCompletedStep: 'receipt' });
    expect(claim?.unresumedEffects).toBeUndefined();
  });

  it('lets a receiver that takes over an expired claim keep its markers, so the retry finishes the effects', async () => {
    h = await createPipelineHarness({ maxReceiveCount: 5 });
    h.sink.failNext('ledger', 1);
    const body = JSON.stringify(stripePaymentIntentEvent({ intentId: 'pi_takeover_expired' }));
    const first = await h.receiver.deliver('stripe', body, stripeHeaders(body));
    const key = first.key ?? '';
    expect(await h.poller.pollOnce()).toEqual({ received: 1, failed: 1 });
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Processing,
      lastCompletedStep: 'state',
    });
    // The claim expires while the event is still being worked on; the provider then retries.
    const clock = await clockPastTtl(key);
    const retryHeaders = stripeHeaders(body, undefined, Math.floor(clock() / 1000));
    const retry = await h.receiver.deliver('stripe', body, retryHeaders, { deps: { clock } });
    expect(retry).toMatchObject({ statusCode: 200, outcome: 'accepted', deliveries: 1 });
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Enqueued,
      lastCompletedStep: 'state',
      plannedEffects: ['ledger', 'receipt'],
    });

    await h.drainQueue();
    expect(ledgerCalls()).toHaveLength(1);
    expect(receipts()).toHaveLength(1);
    expect(await h.receiver.claim(key)).toMatchObject({ status: ClaimStatus.Done, outcome: 'applied' });
  });

  it('re-writes a lost row on a forced replay and runs no effect its markers say is done', async () => {
    h = await createPipelineHarness();
    const body = JSON.stringify(stripePaymentIntentEvent({ intentId: 'pi_replan' }));
    const accepted = await h.receiver.deliver('stripe', body, stripeHeaders(body));
    const key = accepted.key ?? '';
    const message = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    await h.drainQueue();
    const row = await h.row('payments', paymentRowKey('platform', 'pi_replan'));
    // The row is lost (a table restored to an earlier point); `webhooks replay --force` reopens.
    await h.receiver.doc.send(
      new DeleteCommand({
        TableName: h.tables.payments,
        Key: { pk: paymentRowKey('platform', 'pi_replan') },
      }),
    );
    await reopenForReplay(key);
    await processMessage(message, 1, { ...h.processorDeps, log });

    const { updatedAt: _a, ...restored } =
      (await h.row('payments', paymentRowKey('platform', 'pi_replan'))) ?? {};
    const { updatedAt: _b, ...original } = row ?? {};
    expect(restored).toEqual(original);
    expect(ledgerCalls()).toHaveLength(1);
    expect(receipts()).toHaveLength(1);
    const claim = await h.receiver.claim(key);
    expect(claim).toMatchObject({ status: ClaimStatus.Done, lastCompletedStep: 'receipt' });
    expect(claim?.replan).toBeUndefined();
  });

  it('keeps the state marker of an event with no effects on a forced replay whose row is still there', async () => {
    h = await createPipelineHarness();
    const intentId = 'pi_replay_no_effects';
    const event = stripePaymentIntentEvent({
      intentId,
      type: 'payment_intent.processing',
      status: 'processing',
    });
    const body = JSON.stringify(event);
    const key = (await h.receiver.deliver('stripe', body, stripeHeaders(body))).key ?? '';
    const [message] = await receiveAll(h.receiver.sqs, h.receiver.queueUrl);
    const deps = { ...h.processorDeps, log };
    await processMessage(message?.Body ?? '', 1, deps);
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Done,
      lastCompletedStep: 'state',
    });
    await reopenForReplay(key);

    await expect(processMessage(message?.Body ?? '', 1, deps)).resolves.toMatchObject({ kind: 'done' });
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Done,
      outcome: 'applied',
      lastCompletedStep: 'state',
      plannedEffects: [],
    });
    expect(h.sink.entries()).toEqual([]);
  });

  // With two effects the first and the last marker are both `effects[1]`: three tell them apart.
  it.each([
    ['lost', true],
    ['still there', false],
  ])(
    'keeps the last marker of a three-effect event on a forced replay when its row is %s',
    async (_, lose) => {
      h = await createPipelineHarness();
      const example = h.processorDeps.appliers.stripe?.['payment_intent.*'];
      if (!example?.effects) throw new Error('the example has a payment applier with effects');
      let audits = 0;
      const audited: Applier = {
        plan: async (event, context) => ({
          ...(await example.plan(event, context)),
          effects: ['ledger', 'receipt', 'audit'],
        }),
        effects: { ...example.effects, audit: { adapter: 'ledger', run: async () => void audits++ } },
      };
      const deps = { ...h.processorDeps, appliers: { stripe: { 'payment_intent.*': audited } }, log };
      const intentId = `pi_replay_three_${lose}`;
      const body = JSON.stringify(stripePaymentIntentEvent({ intentId }));
      const key = (await h.receiver.deliver('stripe', body, stripeHeaders(body))).key ?? '';
      const [message] = await receiveAll(h.receiver.sqs, h.receiver.queueUrl);
      await processMessage(message?.Body ?? '', 1, deps);
      expect(await h.receiver.claim(key)).toMatchObject({
        status: ClaimStatus.Done,
        lastCompletedStep: 'audit',
      });

      if (lose) {
        await h.receiver.doc.send(
          new DeleteCommand({
            TableName: h.tables.payments,
            Key: { pk: paymentRowKey('platform', intentId) },
          }),
        );
      }
      await reopenForReplay(key);
      await expect(processMessage(message?.Body ?? '', 1, deps)).resolves.toMatchObject({
        kind: 'done',
        outcome: 'applied',
      });

      expect(await h.receiver.claim(key)).toMatchObject({
        status: ClaimStatus.Done,
        outcome: 'applied',
        lastCompletedStep: 'audit',
        plannedEffects: ['ledger', 'receipt', 'audit'],
      });
      expect([ledgerCalls().length, receipts().length, audits]).toEqual([1, 1, 1]);
      expect((await h.row('payments', paymentRowKey('platform', intentId)))?.status).toBe('succeeded');
    },
  );
});

describe('processor: what the receiver accepted, the processor can read', () => {
  it('applies a Stripe event whose body starts with a UTF-8 byte-order mark', async () => {
    h = await createPipelineHarness();
    const event = stripePaymentIntentEvent({ intentId: 'pi_bom' });
    const body = `\uFEFF${JSON.stringify(event)}`;
    const accepted = await h.receiver.deliver('stripe', body, stripeHeaders(body));
    expect(accepted).toMatchObject({ statusCode: 200, outcome: 'accepted' });
    await h.drainQueue();
    expect(await h.receiver.claim(accepted.key ?? '')).toMatchObject({
      status: ClaimStatus.Done,
      outcome: 'applied',
    });
    expect(await h.row('payments', paymentRowKey('platform', 'pi_bom'))).toMatchObject({
      status: 'succeeded',
      lastEventId: event.id,
    });
  });

  it('applies a form-encoded GitHub push whose content type is in capitals with a charset', async () => {
    h = await createPipelineHarness();
    const push = githubPushEvent();
    const body = `payload=${encodeURIComponent(JSON.stringify(push))}`;
    const headers = {
      ...(await githubHeaders(body, { event: 'push' })),
      'content-type': 'Application/X-WWW-Form-Urlencoded; charset=UTF-8',
    };
    const accepted = await h.receiver.deliver('github', body, headers);
    expect(accepted).toMatchObject({ statusCode: 200, outcome: 'accepted' });
    await h.drainQueue();
    expect(await h.receiver.claim(accepted.key ?? '')).toMatchObject({ outcome: 'applied' });
  });

  it('fails an unreadable payload as poison: claim FAILED with the reason, message in the DLQ, never DONE', async () => {
    h = await createPipelineHarness({ maxReceiveCount: 2 });
    const body = JSON.stringify(stripePaymentIntentEvent({ intentId: 'pi_unreadable' }));
    const accepted = await h.receiver.deliver('stripe', body, stripeHeaders(body));
    const [message] = await receiveAll(h.receiver.sqs, h.receiver.queueUrl);
    await h.receiver.sqs.send(
      new DeleteMessageCommand({ QueueUrl: h.receiver.queueUrl, ReceiptHandle: message?.ReceiptHandle }),
    );
    // A message whose body no longer parses (a corrupted copy, a hand-edited replay).
    const corrupted = { ...JSON.parse(message?.Body ?? '{}'), body: '{"id": "evt_1", ' };
    await h.receiver.sqs.send(
      new SendMessageCommand({ QueueUrl: h.receiver.queueUrl, MessageBody: JSON.stringify(corrupted) }),
    );
    await h.drainQueue(20_000);
    const claim = await h.receiver.claim(accepted.key ?? '');
    expect(claim?.status).toBe(ClaimStatus.Failed);
    expect(claim?.lastError).toContain('PoisonMessageError');
    expect(claim?.lastError).toContain('not a JSON object');
    expect(await h.dlqMessages()).toBe(1);
    expect(h.sink.entries()).toEqual([]);
  });
});

describe('processor: claims that no one would finish', () => {
  const record = (body: string, receiveCount: number): SQSEvent => ({
    Records: [
      {
        ...toSqsRecord(
          { MessageId: `m-${receiveCount}`, Body: body },
          'arn:aws:sqs:us-east-1:0:q',
          'us-east-1',
        ),
        attributes: {
          ApproximateReceiveCount: String(receiveCount),
          SentTimestamp: String(Date.now()),
          SenderId: 'x',
          ApproximateFirstReceiveTimestamp: String(Date.now()),
        },
      },
    ],
  });

  it('marks the claim FAILED when the processor cannot initialise on the last attempt', async () => {
    h = await createPipelineHarness({ maxReceiveCount: 3 });
    const body = JSON.stringify(stripePaymentIntentEvent({ intentId: 'pi_init' }));
    const accepted = await h.receiver.deliver('stripe', body, stripeHeaders(body));
    const [message] = await receiveAll(h.receiver.sqs, h.receiver.queueUrl);
    const env = { CLAIMS_TABLE_NAME: h.receiver.tableName, MAX_RECEIVE_COUNT: '3' };
    const broken: ProcessorHandler = createProcessorHandler({
      deps: () => {
        throw new Error('environment variable PAYMENTS_TABLE_NAME is required');
      },
      onInitFailure: initFailureRecorder(env, h.receiver.dynamo),
      logger: new Logger({ logLevel: 'SILENT' }),
    });
    const context = {} as Parameters<ProcessorHandler>[1];

    expect(await broken(record(message?.Body ?? '', 2), context)).toEqual({
      batchItemFailures: [{ itemIdentifier: 'm-2' }],
    });
    expect((await h.receiver.claim(accepted.key ?? ''))?.status).toBe(ClaimStatus.Enqueued);

    await broken(record(message?.Body ?? '', 3), context);
    const claim = await h.receiver.claim(accepted.key ?? '');
    expect(claim?.status).toBe(ClaimStatus.Failed);
    expect(claim?.lastError).toContain('processor initialisation failed');
    expect(claim?.lastError).toContain('PAYMENTS_TABLE_NAME');
  });

  it('never fails a claim another worker holds a live lease on', async () => {
    h = await createPipelineHarness({ maxReceiveCount: 1 });
    const body = JSON.stringify(stripePaymentIntentEvent({ intentId: 'pi_init_held' }));
    const accepted = await h.receiver.deliver('stripe', body, stripeHeaders(body));
    await h.holdProcessingLease(accepted.key ?? '', 'healthy-worker');
    const recorder = initFailureRecorder({ CLAIMS_TABLE_NAME: h.receiver.tableName }, h.receiver.dynamo);
    const [message] = await receiveAll(h.receiver.sqs, h.receiver.queueUrl);
    expect(await recorder?.(message?.Body ?? '', 5, new Error('boom'))).toBe(false);
    expect(await h.receiver.claim(accepted.key ?? '')).toMatchObject({
      status: ClaimStatus.Processing,
      leaseToken: 'healthy-worker',
    });
  });
});
