/**
 * Effects that may act twice (the example's mailer ignores Idempotency-Key, like most mailers) are
 * called at most once: an attempt records the call on the claim before making it, and a call whose
 * outcome is unknown (a timeout, a 5xx, a stop between the call and its marker) is recorded as in
 * doubt and never made again. A call that certainly did not act (refused) is made again. The lease
 * is renewed by that record and runs from its write. On DynamoDB Local, the SQS emulator and the
 * effects sink, through the real receiver and processor.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EffectDeadlineError, processMessage } from '../../lambdas/processor/core.js';
import { HttpEffect } from '../../lambdas/processor/effects.js';
import { createProcessorHandler } from '../../lambdas/processor/runtime.js';
import type { Applier, EffectAdapter } from '../../lambdas/processor/types.js';
import { METRIC_NAMESPACE } from '../../lambdas/shared/metric-names.js';
import { ClaimStatus } from '../../lambdas/store/claim.js';
import { freePort } from '../../local/emulators.js';
import { toSqsRecord } from '../../local/sqs-poller.js';
import { peekMessageBody, receiveAll } from '../helpers/aws.js';
import { stripePaymentIntentEvent } from '../helpers/events.js';
import { recordingLog } from '../helpers/log.js';
import { createPipelineHarness, type PipelineHarness } from '../helpers/pipeline-harness.js';
import { capturePowertoolsOutput } from '../helpers/powertools-output.js';
import { stripeHeaders } from '../helpers/signing.js';

const log = { info: () => {}, warn: () => {}, error: () => {} };

let h: PipelineHarness;
afterEach(async () => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  await h?.stop();
});

const receipts = () => h.sink.entries().filter((e) => e.service === 'mailer');
const ledgerCalls = () => h.sink.entries().filter((e) => e.service === 'ledger');

async function deliverPayment(intentId: string): Promise<string> {
  const body = JSON.stringify(stripePaymentIntentEvent({ intentId }));
  const accepted = await h.receiver.deliver('stripe', body, stripeHeaders(body));
  expect(accepted.statusCode).toBe(200);
  return accepted.key ?? '';
}

describe('processor: a receipt whose call may have happened is not sent again', () => {
  it('sends one receipt when the mailer acts but answers after the adapter gave up', async () => {
    h = await createPipelineHarness({ effectTimeoutMs: 400 });
    h.sink.fault('mailer', { kind: 'slow', delayMs: 1_500 });
    const key = await deliverPayment('pi_slow_mailer');
    await h.drainQueue();
    // Let any redelivery of the message (1 s visibility) come and go.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await h.drainQueue();

    expect(receipts()).toHaveLength(1);
    const claim = await h.receiver.claim(key);
    expect(claim).toMatchObject({
      status: ClaimStatus.Done,
      outcome: 'applied',
      lastCompletedStep: 'receipt',
      unresumedEffects: ['receipt'],
    });
    expect(claim?.unresumedReason).toMatch(/mailer did not answer within 400 ms: it may have acted/);
    expect(claim?.effectAttempt).toBeUndefined();
    expect(claim?.processingAttempts).toBe(1);
  });

  it('sends one receipt when the mailer acts and then answers 500', async () => {
    h = await createPipelineHarness();
    h.sink.fault('mailer', { kind: 'actThenFail', status: 500 });
    const key = await deliverPayment('pi_mailer_500');
    await h.drainQueue();

    expect(receipts()).toHaveLength(1);
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Done,
      unresumedEffects: ['receipt'],
      unresumedReason: expect.stringContaining('mailer answered 500 (it may have acted)'),
    });
  });

  it('warns with the event, the effect and the reason when it records a receipt in doubt', async () => {
    h = await createPipelineHarness();
    h.sink.fault('mailer', { kind: 'actThenFail', status: 500 });
    const key = await deliverPayment('pi_mailer_500_log');
    const message = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    const { log: recording, lines } = recordingLog();

    const result = await processMessage(message, 1, { ...h.processorDeps, log: recording });
    expect(result).toMatchObject({ kind: 'done', outcome: 'applied', unresumed: ['receipt'] });
    const { eventId } = JSON.parse(message) as { eventId: string };
    expect(lines.filter((line) => line.level !== 'info')).toEqual([
      {
        level: 'warn',
        message: 'effect in doubt: it may have acted, so it is not called again; check it by hand',
        details: {
          key,
          eventId,
          effect: 'receipt',
          reason: expect.stringMatching(/^receipt: .*mailer answered 500 \(it may have acted\)/),
        },
      },
    ]);
  });

  it('sends one receipt when the mailer acts and then drops the connection', async () => {
    h = await createPipelineHarness();
    h.sink.fault('mailer', { kind: 'hangUp' });
    const key = await deliverPayment('pi_mailer_reset');
    await h.drainQueue();

    expect(receipts()).toHaveLength(1);
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Done,
      unresumedEffects: ['receipt'],
    });
  });

  // Guards the attempt record (ProcessingClaims.beginEffect): without it the retry sends a second receipt.
  it('does not send the receipt again after an attempt stopped between its call and its marker', async () => {
    h = await createPipelineHarness({ faultPoints: 'processor.beforeReceiptMarker:1' });
    const key = await deliverPayment('pi_crash_receipt');
    await h.poller.pollOnce();
    const stopped = await h.receiver.claim(key);
    expect(stopped).toMatchObject({ status: ClaimStatus.Processing, effectAttempt: 'receipt' });
    expect(receipts()).toHaveLength(1);

    await h.drainQueue();
    expect(receipts()).toHaveLength(1);
    const claim = await h.receiver.claim(key);
    expect(claim).toMatchObject({
      status: ClaimStatus.Done,
      outcome: 'applied',
      unresumedEffects: ['receipt'],
      processingAttempts: 2,
    });
    expect(claim?.unresumedReason).toContain(
      `receipt was called at ${stopped?.effectAttemptAt} by an attempt that stopped before recording how the call ended`,
    );
    expect(claim?.effectAttempt).toBeUndefined();
  });

  // Found by the soak (docs/soak.md, seed clean-1): the retry runs the ledger again (repeat-safe, no
  // marker of its own before the receipt's), and a ledger refusal released the claim as "the call
  // certainly did not act", which dropped the record of the *receipt's* call: the next attempt sent
  // a second receipt.
  it('keeps the record of a receipt call when a later attempt fails on a refused ledger call', async () => {
    h = await createPipelineHarness({ faultPoints: 'processor.beforeReceiptMarker:1' });
    const key = await deliverPayment('pi_receipt_then_ledger_refused');
    await h.poller.pollOnce();
    const stopped = await h.receiver.claim(key);
    expect(stopped).toMatchObject({ status: ClaimStatus.Processing, effectAttempt: 'receipt' });
    expect(receipts()).toHaveLength(1);

    // The retry's ledger call is refused (a 4xx: certainly not acted, so retried).
    h.sink.fault('ledger', { kind: 'refuse', status: 409 });
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the 1 s visibility timeout
    await h.poller.pollOnce();
    const refused = await h.receiver.claim(key);
    expect(refused?.lastError).toContain('ledger answered 409');
    expect(refused).toMatchObject({ status: ClaimStatus.Processing, effectAttempt: 'receipt' });

    await h.drainQueue();
    expect(receipts()).toHaveLength(1);
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Done,
      unresumedEffects: ['receipt'],
      processingAttempts: 3,
    });
  });

  // Guards the removal of the record on a refusal (FailureOptions.effectNotPerformed): without it
  // the retry would call the receipt in doubt and never send it.
  it('sends the receipt on the retry when the mailer refused the call with a 4xx', async () => {
    h = await createPipelineHarness();
    h.sink.fault('mailer', { kind: 'refuse', status: 429 });
    const key = await deliverPayment('pi_mailer_429');
    await h.poller.pollOnce();
    const released = await h.receiver.claim(key);
    expect(released).toMatchObject({ status: ClaimStatus.Processing, lastCompletedStep: 'state' });
    expect(released?.effectAttempt).toBeUndefined();
    expect(released?.lastError).toContain('mailer answered 429');

    await h.drainQueue();
    expect(receipts()).toHaveLength(1);
    const claim = await h.receiver.claim(key);
    expect(claim).toMatchObject({ status: ClaimStatus.Done, lastCompletedStep: 'receipt' });
    expect(claim?.unresumedEffects).toBeUndefined();
  });

  it('sends the receipt on the retry when the mailer refused the connection', async () => {
    h = await createPipelineHarness();
    const closed = `http://127.0.0.1:${await freePort()}/mailer`;
    const real = h.processorDeps.effects?.mailer as EffectAdapter;
    let calls = 0;
    // The first call goes to a port nobody listens on (ECONNREFUSED), the next ones to the mailer.
    const flaky: EffectAdapter = {
      honoursIdempotencyKey: false,
      timeoutMs: 5_000,
      call: (body, key, options) =>
        ++calls === 1
          ? new HttpEffect({ name: 'mailer', url: closed }).call(body, key, options)
          : real.call(body, key, options),
    };
    const deps = { ...h.processorDeps, effects: { ...h.processorDeps.effects, mailer: flaky }, log };
    const key = await deliverPayment('pi_mailer_refused');
    const message = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);

    await expect(processMessage(message, 1, deps)).rejects.toThrow(/ECONNREFUSED.*the call was not made/);
    expect((await h.receiver.claim(key))?.effectAttempt).toBeUndefined();
    await expect(processMessage(message, 2, deps)).resolves.toMatchObject({ kind: 'done', unresumed: [] });
    expect(receipts()).toHaveLength(1);
  });

  it('still posts the ledger after a receipt in doubt when the receipt comes first', async () => {
    const receiptFirst = receiptThenLedger();
    h = await createPipelineHarness({ appliers: { stripe: { 'payment_intent.succeeded': receiptFirst } } });
    h.sink.fault('mailer', { kind: 'actThenFail' });
    const key = await deliverPayment('pi_receipt_first');
    await h.drainQueue();
    expect(receipts()).toHaveLength(1);
    expect(ledgerCalls()).toHaveLength(1);
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Done,
      lastCompletedStep: 'ledger',
      unresumedEffects: ['receipt'],
    });
  });
});

/** A plan with the effect that may act twice first: receipt, then ledger. */
function receiptThenLedger(): Applier {
  return {
    plan: async () => ({ effects: ['receipt', 'ledger'] }),
    effects: {
      receipt: {
        adapter: 'mailer',
        run: async (event, context) =>
          context.adapters.mailer?.call({ event: event.eventId }, context.idempotencyKey, {
            signal: context.signal,
          }),
      },
      ledger: {
        adapter: 'ledger',
        run: async (event, context) =>
          context.adapters.ledger?.call({ event: event.eventId }, context.idempotencyKey, {
            signal: context.signal,
          }),
      },
    },
  };
}

describe('processor: the step marker after an effect that may act twice', () => {
  // Guards the marker after a non-repeat-safe effect that is not the last (core.ts): without it
  // the retry finds the receipt's call record with no marker, and reports a receipt that was sent
  // as in doubt (and, before call records existed, sent it again).
  it('records the receipt done when a fault stops the attempt before the ledger', async () => {
    h = await createPipelineHarness({
      faultPoints: 'processor.beforeLedger:1',
      appliers: { stripe: { 'payment_intent.succeeded': receiptThenLedger() } },
    });
    const key = await deliverPayment('pi_marker_between');
    await h.poller.pollOnce();
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Processing,
      lastCompletedStep: 'receipt',
    });
    await h.drainQueue();

    expect(receipts()).toHaveLength(1);
    expect(ledgerCalls()).toHaveLength(1);
    const claim = await h.receiver.claim(key);
    expect(claim).toMatchObject({ status: ClaimStatus.Done, lastCompletedStep: 'ledger' });
    expect(claim?.unresumedEffects).toBeUndefined();
  });
});

/** Worker B takes the processing lease on `key` at `clock()`, as a redelivered copy's worker would. */
function takeOverAsWorkerB(key: string, clock: () => number) {
  const ttl = Math.floor(clock() / 1000) + 3600;
  return h.processorDeps.claims.beginProcessing(
    { pk: key, provider: 'stripe', account: 'platform', eventId: 'x', eventType: 'x', expiresAt: ttl },
    { token: 'worker-b', expiresAt: clock() + 10_000, owner: 'processor' },
    clock(),
    ttl,
  );
}

describe('processor: effects inside the lease', () => {
  // Guards the lease renewal in ProcessingClaims.beginEffect: without it, another worker takes the
  // claim over while the receipt is being sent.
  it('renews the lease with the record written before the receipt, so no one takes the claim over during the call', async () => {
    h = await createPipelineHarness({ leaseSeconds: 10 });
    let offset = 0;
    const clock = () => Date.now() + offset;
    let takeover: Awaited<ReturnType<typeof takeOverAsWorkerB>> | undefined;
    let leaseDuringCall: number | undefined;
    const key = await deliverPayment('pi_lease_renewed');
    const slowPlan: Applier = {
      // A plan that takes 8 of the lease's 10 s.
      plan: async () => {
        offset += 8_000;
        return { effects: ['receipt'] };
      },
      effects: {
        receipt: async () => {
          leaseDuringCall = (await h.receiver.claim(key))?.leaseExpiresAt;
          // 12 s after the lease write: the first lease has run out, the renewed one has not.
          offset += 4_000;
          takeover = await takeOverAsWorkerB(key, clock);
        },
      },
    };
    const deps = {
      ...h.processorDeps,
      appliers: { stripe: { 'payment_intent.succeeded': slowPlan } },
      clock,
      log,
    };
    const started = Date.now();
    const message = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    await expect(processMessage(message, 1, deps)).resolves.toMatchObject({ kind: 'done' });
    expect(takeover?.kind).toBe('busy');
    expect(leaseDuringCall).toBeGreaterThanOrEqual(started + 8_000 + 10_000);
  });

  // Guards the fence of ProcessingClaims.beginEffect (leaseToken = mine): without it, a worker whose
  // claim was taken over after its state commit still sends the receipt the new holder will send.
  it('does not call the receipt when another worker took the claim over after the state commit', async () => {
    h = await createPipelineHarness({ leaseSeconds: 10 });
    let offset = 0;
    const clock = () => Date.now() + offset;
    const key = await deliverPayment('pi_taken_before_call');
    const message = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    const claims = h.processorDeps.claims;
    let takeover: Awaited<ReturnType<typeof takeOverAsWorkerB>> | undefined;
    // Between A's state commit and its receipt, A stalls past its lease and B takes the claim.
    const stallThenTakeOver = async () => {
      offset += 11_000;
      takeover = await takeOverAsWorkerB(key, clock);
    };
    const workerA = Object.create(claims) as typeof claims;
    workerA.beginEffect = async (...args) => {
      await stallThenTakeOver();
      return claims.beginEffect(...args);
    };
    const error = await processMessage(message, 1, { ...h.processorDeps, claims: workerA, clock, log }).catch(
      (e: unknown) => e,
    );
    expect(takeover?.kind).toBe('claimed');
    expect((error as Error).name).toBe('LeaseLostError');
    expect(receipts()).toHaveLength(0);
    expect(await h.receiver.claim(key)).toMatchObject({ leaseToken: 'worker-b', lastCompletedStep: 'state' });
  });

  it('starts the lease at its write, after waiting for the batch archive', async () => {
    h = await createPipelineHarness({ leaseSeconds: 10 });
    let offset = 0;
    const clock = () => Date.now() + offset;
    const key = await deliverPayment('pi_lease_start');
    const message = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    let leaseAtWrite: number | undefined;
    const batchArchive = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      offset += 7_000; // the batch's upload takes 7 s
      return 'events/stripe/batch-slow.json';
    })();
    const watching: Applier = {
      plan: async () => {
        leaseAtWrite = (await h.receiver.claim(key))?.leaseExpiresAt;
        return {};
      },
    };
    const before = Date.now();
    await processMessage(
      message,
      1,
      { ...h.processorDeps, appliers: { stripe: { '*': watching } }, clock, log },
      { batchArchive },
    );
    expect(leaseAtWrite).toBeGreaterThanOrEqual(before + 7_000 + 10_000);
  });

  it('aborts an effect that may be repeated a second before the invocation ends, and sets no deadline when that end is unknown', async () => {
    h = await createPipelineHarness();
    await deliverPayment('pi_repeatable_deadline');
    const message = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    const seen: { signal: AbortSignal | undefined; abortedAfterMs?: number }[] = [];
    const posting: Applier = {
      plan: async () => ({ effects: ['ledger'] }),
      effects: {
        ledger: {
          adapter: 'ledger', // honours Idempotency-Key: no call record, the invocation's end only
          run: async (_event, { signal }) => {
            const started = Date.now();
            const call: { signal: AbortSignal | undefined; abortedAfterMs?: number } = { signal };
            seen.push(call);
            if (signal === undefined) return;
            await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
            call.abortedAfterMs = Date.now() - started;
            throw signal.reason;
          },
        },
      },
    };
    const deps = { ...h.processorDeps, appliers: { stripe: { '*': posting } }, log };

    // 1.6 s left: the call is aborted 0.6 s in, a second before the end.
    await expect(processMessage(message, 1, deps, { remainingTimeMs: () => 1_600 })).rejects.toThrow();
    // Less than the margin left: aborted at once.
    await expect(processMessage(message, 2, deps, { remainingTimeMs: () => 300 })).rejects.toThrow();
    // No invocation end known (the local runner): no deadline.
    await expect(processMessage(message, 3, deps)).resolves.toMatchObject({ kind: 'done' });

    expect(seen[0]?.abortedAfterMs).toBeGreaterThanOrEqual(500);
    expect(seen[0]?.abortedAfterMs).toBeLessThan(1_500);
    expect(seen[1]?.abortedAfterMs).toBeLessThan(200);
    expect(seen[2]?.signal).toBeUndefined();
  });

  it('aborts a call that may act twice at the end of the lease or of the invocation, whichever is first', async () => {
    h = await createPipelineHarness({ leaseSeconds: 3 });
    const calls: { abortedAfterMs?: number }[] = [];
    // A CRM that may act twice and gives up after 200 ms of its own.
    const crm: EffectAdapter = { honoursIdempotencyKey: false, timeoutMs: 200, call: async () => {} };
    const notifying: Applier = {
      plan: async () => ({ effects: ['notify'] }),
      effects: {
        notify: {
          adapter: 'crm',
          run: async (_event, { signal }) => {
            const started = Date.now();
            const call: { abortedAfterMs?: number } = {};
            calls.push(call);
            // Waits for the processor's deadline (4 s at most: no deadline fails the test).
            await new Promise((resolve) => {
              signal?.addEventListener('abort', resolve, { once: true });
              setTimeout(resolve, 4_000);
            });
            if (signal?.aborted) call.abortedAfterMs = Date.now() - started;
            throw new Error('the CRM call was aborted');
          },
        },
      },
    };
    const deps = {
      ...h.processorDeps,
      appliers: { stripe: { '*': notifying } },
      effects: { ...h.processorDeps.effects, crm },
      log,
    };
    const process = async (intentId: string, remainingTimeMs: number) => {
      await deliverPayment(intentId);
      const [message] = await receiveAll(h.receiver.sqs, h.receiver.queueUrl);
      return processMessage(message?.Body ?? '', 1, deps, { remainingTimeMs: () => remainingTimeMs });
    };

    // The invocation ends first (1.7 s left of it, 3 s of the lease): aborted 0.7 s in.
    await expect(process('pi_crm_invocation', 1_700)).resolves.toMatchObject({ unresumed: ['notify'] });
    // The lease ends first (60 s left of the invocation): aborted 2 s in.
    await expect(process('pi_crm_lease', 60_000)).resolves.toMatchObject({ unresumed: ['notify'] });
    expect(calls[0]?.abortedAfterMs).toBeGreaterThanOrEqual(600);
    expect(calls[0]?.abortedAfterMs).toBeLessThan(1_400);
    expect(calls[1]?.abortedAfterMs).toBeGreaterThanOrEqual(1_800);
    expect(calls[1]?.abortedAfterMs).toBeLessThan(2_800);

    // Exactly the call's 200 ms left after the margin: not enough, not called.
    await expect(process('pi_crm_exact', 1_200)).rejects.toThrow(
      'effect notify was not called: it may take 200 ms and only 200 ms are left',
    );
    expect(calls).toHaveLength(2);
  }, 30_000);

  it('does not call the receipt with less time left in the invocation than its call may take, and calls it on the retry', async () => {
    h = await createPipelineHarness();
    const key = await deliverPayment('pi_short_invocation');
    const message = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    const deps = { ...h.processorDeps, log };

    // The mailer may take 5 s; 4 s are left.
    const error = await processMessage(message, 1, deps, { remainingTimeMs: () => 4_000 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EffectDeadlineError);
    expect(receipts()).toHaveLength(0);
    const released = await h.receiver.claim(key);
    expect(released?.effectAttempt).toBeUndefined();
    expect(released?.lastError).toBe(
      'EffectDeadlineError: effect receipt was not called: it may take 5000 ms and only 3000 ms are left before the processing lease or the invocation ends',
    );

    // The ledger's call leaves less than the margin for the receipt: no time at all, still not called.
    let calls = 0;
    const none = await processMessage(message, 2, deps, {
      remainingTimeMs: () => (calls++ === 0 ? 25_000 : 500),
    }).catch((e: unknown) => e);
    expect(String(none)).toContain('it may take 5000 ms and only 0 ms are left');
    expect(receipts()).toHaveLength(0);

    await processMessage(message, 3, deps, { remainingTimeMs: () => 25_000 });
    expect(receipts()).toHaveLength(1);
    expect((await h.receiver.claim(key))?.unresumedEffects).toBeUndefined();
  });
});

describe('processor runtime: effects in doubt are counted', () => {
  it('emits EffectsInDoubt and names the effects on the event log line', async () => {
    h = await createPipelineHarness();
    h.sink.fault('mailer', { kind: 'actThenFail' });
    await deliverPayment('pi_metric_in_doubt');
    const output = capturePowertoolsOutput();
    const handler = createProcessorHandler({
      deps: () => h.processorDeps,
      logger: new Logger({ serviceName: 'webhook-processor' }),
      metrics: new Metrics({ namespace: METRIC_NAMESPACE, serviceName: 'webhook-processor' }),
    });
    const body = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    const event = {
      Records: [toSqsRecord({ MessageId: 'm1', Body: body, ReceiptHandle: 'r1' }, '', 'us-east-1')],
    } as SQSEvent;
    const result = await handler(event, {
      getRemainingTimeInMillis: () => 25_000,
      awsRequestId: 'req-1',
      functionName: 'processor',
    } as never);
    vi.restoreAllMocks();
    expect(result.batchItemFailures).toEqual([]);
    const lines = output
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const metrics = lines.filter((line) => line.EffectsInDoubt !== undefined);
    // Per provider, and summed over providers (no provider dimension): what the alarm reads.
    expect(metrics).toEqual([
      expect.objectContaining({ EffectsInDoubt: 1, provider: 'stripe' }),
      expect.not.objectContaining({ provider: expect.anything() }),
    ]);
    expect(metrics[1]).toMatchObject({ EffectsInDoubt: 1, service: 'webhook-processor' });
    expect(lines.find((line) => line.message === 'event')).toMatchObject({ effectsInDoubt: ['receipt'] });
  });
});
