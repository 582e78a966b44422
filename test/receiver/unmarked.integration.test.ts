/**
 * `markEnqueued: false` (MARK_ENQUEUED=false): a new event is its claim write and its send, with no
 * ENQUEUED mark after. The claim stays RECEIVED, flagged `unmarked`, until a processor takes it; a
 * duplicate that finds it so sends a copy of its own, and the processor absorbs the copies. On
 * DynamoDB Local and the SQS emulator, through the real receiver core and processor.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { paymentRowKey } from '../../examples/payments/appliers/stripe.js';
import { isClaimCheck } from '../../lambdas/queue/event-message.js';
import type { ReceiverDeps } from '../../lambdas/receiver/core.js';
import { type ClaimRecord, ClaimStatus } from '../../lambdas/store/claim.js';
import { judge, stuckReason } from '../../lambdas/sweeper/core.js';
import { sampleDelivery } from '../../local/samples.js';
import { stripePaymentIntentEvent } from '../helpers/events.js';
import { createPipelineHarness, type PipelineHarness } from '../helpers/pipeline-harness.js';
import { githubHeaders, stripeHeaders, TEST_SECRETS } from '../helpers/signing.js';

let h: PipelineHarness;
afterEach(async () => {
  await h?.stop();
});

const unmarked = (deps: Partial<ReceiverDeps> = {}) => ({
  deps: { settings: { ...h.receiver.settings, markEnqueued: false }, ...deps },
});
const failingQueue = { send: async () => Promise.reject(new Error('SQS is unavailable')) };

/** The DynamoDB commands `fn` makes, by name. */
async function dynamoCommands(fn: () => Promise<unknown>): Promise<string[]> {
  const commands: string[] = [];
  const name = 'count-unmarked-requests';
  h.receiver.dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      commands.push(context.commandName ?? '?');
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    await fn();
  } finally {
    h.receiver.dynamo.middlewareStack.remove(name);
  }
  return commands;
}

describe('receiver with markEnqueued: false', () => {
  it('accepts a new event with one DynamoDB request and leaves the claim RECEIVED, flagged unmarked', async () => {
    h = await createPipelineHarness();
    const body = JSON.stringify(stripePaymentIntentEvent({ intentId: 'pi_unmarked_new' }));
    let accepted: Awaited<ReturnType<typeof h.receiver.deliver>> | undefined;
    const commands = await dynamoCommands(async () => {
      accepted = await h.receiver.deliver('stripe', body, stripeHeaders(body), unmarked());
    });
    expect(accepted).toMatchObject({ statusCode: 200, outcome: 'accepted', enqueued: 1 });
    expect(commands).toHaveLength(1); // the claim write; no ENQUEUED mark after the send
    expect(await h.receiver.claim(accepted?.key ?? '')).toMatchObject({
      status: ClaimStatus.Received,
      unmarked: true,
    });
    expect(await h.receiver.depth()).toBe(1);
  });

  it('answers each duplicate of a queued, unmarked claim with a copy of its own, and the event is applied once', async () => {
    h = await createPipelineHarness({ maxReceiveCount: 5 });
    const body = JSON.stringify(stripePaymentIntentEvent({ intentId: 'pi_unmarked_storm' }));
    const headers = stripeHeaders(body);
    const first = await h.receiver.deliver('stripe', body, headers, unmarked());
    expect(first).toMatchObject({ statusCode: 200, outcome: 'accepted' });

    // A storm: five concurrent copies while no processor has taken the event yet.
    const copies = await Promise.all(
      Array.from({ length: 5 }, () => h.receiver.deliver('stripe', body, headers, unmarked())),
    );
    for (const copy of copies)
      expect(copy).toMatchObject({
        statusCode: 200,
        outcome: 'duplicate',
        message:
          'Already received (RECEIVED, not yet taken by a processor); a copy was queued, which the processor absorbs.',
        enqueued: 1,
        key: first.key,
      });
    expect(await h.receiver.depth()).toBe(6);
    expect(await h.receiver.claim(first.key ?? '')).toMatchObject({
      status: ClaimStatus.Received,
      deliveries: 6,
    });

    await h.drainQueue(30_000);
    expect(h.sink.entries().filter((e) => e.service === 'ledger' && !e.replay)).toHaveLength(1);
    expect(h.sink.entries().filter((e) => e.service === 'mailer')).toHaveLength(1);
    expect((await h.row('payments', paymentRowKey('platform', 'pi_unmarked_storm')))?.status).toBe(
      'succeeded',
    );
    expect(await h.receiver.claim(first.key ?? '')).toMatchObject({ status: ClaimStatus.Done });
    expect(await h.dlqMessages()).toBe(0);

    // Once a processor has it, a duplicate sends nothing.
    const late = await h.receiver.deliver('stripe', body, headers, unmarked());
    expect(late).toMatchObject({ statusCode: 200, outcome: 'duplicate', enqueued: 0 });
    expect(await h.receiver.depth()).toBe(0);
  }, 45_000);

  it('sends a claim-checked copy pointing at the same archive object as the first delivery', async () => {
    h = await createPipelineHarness();
    const delivery = 'unmarked-large-push';
    const { body } = sampleDelivery('github', {
      secret: TEST_SECRETS.github,
      eventId: delivery,
      bytes: 500_000,
    });
    const headers = await githubHeaders(body, { delivery });
    const first = await h.receiver.deliver('github', body, headers, unmarked());
    const copy = await h.receiver.deliver('github', body, headers, unmarked());
    expect(first).toMatchObject({ statusCode: 200, outcome: 'accepted' });
    expect(copy).toMatchObject({ statusCode: 200, outcome: 'duplicate', enqueued: 1 });
    const messages = await h.receiver.drain();
    expect(messages).toHaveLength(2);
    const keys = messages.map((m) => (isClaimCheck(m) ? m.payloadKey : 'inline'));
    expect(keys[0]).not.toBe('inline');
    expect(keys[1]).toBe(keys[0]);
  });

  it('answers 500 when a copy cannot be sent, and leaves the claim as it was', async () => {
    h = await createPipelineHarness();
    const body = JSON.stringify(stripePaymentIntentEvent({ intentId: 'pi_unmarked_copy_fails' }));
    const headers = stripeHeaders(body);
    const first = await h.receiver.deliver('stripe', body, headers, unmarked());
    const before = await h.receiver.claim(first.key ?? '');
    const copy = await h.receiver.deliver('stripe', body, headers, unmarked({ queue: failingQueue }));
    expect(copy).toEqual({
      statusCode: 500,
      outcome: 'enqueue_failed',
      message: 'The event could not be queued; please retry.',
      provider: 'stripe',
      key: first.key,
      eventId: first.eventId,
      eventType: first.eventType,
      deliveries: 2,
      enqueued: 0,
    });
    expect(h.receiver.logs).toEqual([
      {
        level: 'error',
        message: 'could not send a copy of an unmarked claim; answering 500 so the provider retries',
        details: { key: first.key, error: 'Error: SQS is unavailable' },
      },
    ]);
    const after = await h.receiver.claim(first.key ?? '');
    expect(after).toMatchObject({
      status: ClaimStatus.Received,
      unmarked: true,
      leaseToken: before?.leaseToken,
    });
    expect(await h.receiver.depth()).toBe(1);
  });

  it('releases a claim whose own send failed without the flag, so the retry takes it over rather than copying', async () => {
    h = await createPipelineHarness();
    const body = JSON.stringify(stripePaymentIntentEvent({ intentId: 'pi_unmarked_send_fails' }));
    const headers = stripeHeaders(body);
    const failed = await h.receiver.deliver('stripe', body, headers, unmarked({ queue: failingQueue }));
    expect(failed).toMatchObject({ statusCode: 500, outcome: 'enqueue_failed' });
    const released = await h.receiver.claim(failed.key ?? '');
    expect(released?.status).toBe(ClaimStatus.Received);
    expect(released).not.toHaveProperty('unmarked');
    expect(released?.lastError).toMatch(/enqueue failed: .*SQS is unavailable/);

    const retry = await h.receiver.deliver('stripe', body, headers, unmarked());
    expect(retry).toMatchObject({ statusCode: 200, outcome: 'accepted', tookOver: true, enqueued: 1 });
    expect(await h.receiver.claim(failed.key ?? '')).toMatchObject({
      status: ClaimStatus.Received,
      unmarked: true,
    });
    expect(await h.receiver.depth()).toBe(1);
  });

  it('a receiver that marks claims treats an unmarked one as queued by copying it, not waiting on it', async () => {
    // A stack switching the setting on: claims written before still say `unmarked`.
    h = await createPipelineHarness();
    const body = JSON.stringify(stripePaymentIntentEvent({ intentId: 'pi_unmarked_switch' }));
    const headers = stripeHeaders(body);
    await h.receiver.deliver('stripe', body, headers, unmarked());
    const duplicate = await h.receiver.deliver('stripe', body, headers);
    expect(duplicate).toMatchObject({ statusCode: 200, outcome: 'duplicate', enqueued: 1 });
  });
});

describe('sweeper and unmarked claims', () => {
  const settings = {
    receivedGraceMs: 60_000,
    processingGraceMs: 300_000,
    enqueuedStaleMs: 3_600_000,
    maxRequeues: 3,
    maxClaimsPerRun: 100,
  };
  const leaseEnd = Date.parse('2026-12-04T12:00:15Z');
  const claim = (extra: Partial<ClaimRecord>): ClaimRecord => ({
    pk: 'stripe:platform:evt_1',
    provider: 'stripe',
    account: 'platform',
    eventId: 'evt_1',
    eventType: 'payment_intent.succeeded',
    status: ClaimStatus.Received,
    deliveries: 1,
    firstSeenAt: '2026-12-04T12:00:00.000Z',
    lastSeenAt: '2026-12-04T12:00:00.000Z',
    expiresAt: Math.floor(leaseEnd / 1000) + 86_400,
    leaseToken: 't',
    leaseExpiresAt: leaseEnd,
    leaseOwner: 'receiver',
    sweepShard: 'p#01',
    sweepAt: leaseEnd,
    ...extra,
  });

  it('gives an unmarked RECEIVED claim the ENQUEUED staleness, not the receiver grace', () => {
    const twoMinutesLater = leaseEnd + 120_000;
    expect(judge(claim({}), twoMinutesLater, settings)).toEqual({ kind: 'recover' });
    // Looked at again within a processing grace (a processor may take it and die holding it), and
    // still deferred then, up to the ENQUEUED staleness.
    expect(judge(claim({ unmarked: true }), twoMinutesLater, settings)).toEqual({
      kind: 'defer',
      until: twoMinutesLater + settings.processingGraceMs,
    });
    const nearlyStale = leaseEnd + settings.enqueuedStaleMs - 60_000;
    expect(judge(claim({ unmarked: true }), nearlyStale, settings)).toEqual({
      kind: 'defer',
      until: leaseEnd + settings.enqueuedStaleMs,
    });
    expect(judge(claim({ unmarked: true }), leaseEnd + settings.enqueuedStaleMs + 1, settings)).toEqual({
      kind: 'recover',
    });
  });

  it('says in its stuck report that the event was sent without a mark', () => {
    expect(stuckReason(claim({ unmarked: true }), 'no-body')).toMatch(
      /sent without an ENQUEUED mark \(markEnqueued: false\)/,
    );
    expect(stuckReason(claim({}), 'no-body')).toMatch(/^Accepted but never queued/);
  });
});
