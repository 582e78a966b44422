/**
 * The receiver core against DynamoDB Local and the SQS emulator: every claim rule of
 * docs/rules.md, exercised over the wire.
 */
import { createHmac } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { PROVIDER_IDS, requireProvider } from '../../lambdas/providers/index.js';
import type { EventQueue } from '../../lambdas/queue/event-queue.js';
import { receiveDelivery } from '../../lambdas/receiver/core.js';
import { parseProviderSettings } from '../../lambdas/receiver/settings.js';
import { faultInjector } from '../../lambdas/shared/faults.js';
import { SQS_MAX_MESSAGE_BYTES } from '../../lambdas/shared/payload-limits.js';
import { StaticSecretSource } from '../../lambdas/shared/secrets.js';
import { ClaimStatus } from '../../lambdas/store/claim.js';
import { sampleDelivery } from '../../local/samples.js';
import { putItem } from '../helpers/aws.js';
import {
  asaasPaymentEvent,
  githubPushEvent,
  stripeCustomerEvent,
  stripePaymentIntentEvent,
} from '../helpers/events.js';
import { createReceiverHarness, type ReceiverHarness } from '../helpers/receiver-harness.js';
import { asaasHeaders, githubHeaders, stripeHeaders, TEST_SECRETS } from '../helpers/signing.js';

const nowSeconds = () => Math.floor(Date.now() / 1000);
const DAY = 24 * 3600;

/** A queue whose sends fail a given number of times before going through to the real queue. */
function failingQueue(real: EventQueue, failures: number): EventQueue & { attempts: number } {
  const queue = {
    attempts: 0,
    async send(body: string) {
      queue.attempts += 1;
      if (queue.attempts <= failures) throw new Error('SQS is unavailable (injected)');
      return real.send(body);
    },
  };
  return queue;
}

/** A queue whose first send waits until released. */
function gatedQueue(real: EventQueue) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let entered!: () => void;
  const sending = new Promise<void>((resolve) => {
    entered = resolve;
  });
  let first = true;
  const queue: EventQueue = {
    async send(body) {
      if (first) {
        first = false;
        entered();
        await gate;
      }
      return real.send(body);
    },
  };
  return { queue, open, sending };
}

describe('receiver core on DynamoDB Local and the SQS emulator', () => {
  let h: ReceiverHarness;
  beforeEach(async () => {
    h = await createReceiverHarness();
  });

  /** A claim's delivery fields after one delivery seen just now. */
  const seenOnce = () => ({
    deliveries: 1,
    firstSeenAt: new Date().toISOString(),
    lastSeenAt: new Date().toISOString(),
    expiresAt: nowSeconds() + DAY,
  });

  /** Writes a claim for a platform-account Stripe event as an earlier delivery would have left it. */
  const seedClaim = (event: { id: string; type: string }, fields: Record<string, unknown>) =>
    putItem(h.doc, h.tableName, {
      pk: `stripe:platform:${event.id}`,
      provider: 'stripe',
      account: 'platform',
      eventId: event.id,
      eventType: event.type,
      ...fields,
    });

  it('claims a new event, queues one message and answers 200 accepted', async () => {
    const event = stripeCustomerEvent({ account: 'acct_123' });
    const body = JSON.stringify(event);
    const before = nowSeconds();
    const result = await h.deliver('stripe', body, stripeHeaders(body));

    expect(result).toEqual({
      statusCode: 200,
      outcome: 'accepted',
      message: 'Accepted.',
      provider: 'stripe',
      key: `stripe:acct_123:${event.id}`,
      eventId: event.id,
      eventType: 'customer.created',
      deliveries: 1,
      enqueued: 1,
      tookOver: false,
    });
    const claim = await h.claim(`stripe:acct_123:${event.id}`);
    expect(claim).toMatchObject({
      provider: 'stripe',
      account: 'acct_123',
      eventId: event.id,
      eventType: 'customer.created',
      status: ClaimStatus.Enqueued,
      deliveries: 1,
    });
    expect(claim?.leaseToken).toBeUndefined();
    expect(claim?.messageId).toEqual(expect.any(String));
    // Stripe's retry window is 7 days, but a claim never lives less than the DLQ's retention plus a
    // redrive margin (15 days): its message could still come back from the DLQ until then.
    expect(claim?.expiresAt).toBeGreaterThanOrEqual(before + 15 * DAY);
    expect(claim?.expiresAt).toBeLessThanOrEqual(nowSeconds() + 15 * DAY);

    const messages = await h.drain();
    expect(messages).toHaveLength(1);
    expect(messages[0]).toEqual({
      v: 1,
      key: `stripe:acct_123:${event.id}`,
      provider: 'stripe',
      eventId: event.id,
      eventType: 'customer.created',
      account: 'acct_123',
      objectId: event.data.object.id,
      objectKind: 'customer',
      occurredAt: event.created,
      receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      claimExpiresAt: claim?.expiresAt,
      headers: { 'content-type': 'application/json' },
      body,
      bodyEncoding: 'utf8',
    });
    // The signature never leaves the receiver.
    expect(JSON.stringify(messages[0])).not.toContain('v1=');
    expect(messages[0]?.headers).not.toHaveProperty('stripe-signature');
    expect(h.logs).toEqual([]);
  });

  it('uses the composite key for Stripe payment_intent events', async () => {
    const event = stripePaymentIntentEvent({ account: 'acct_123', intentId: 'pi_1' });
    const body = JSON.stringify(event);
    const result = await h.deliver('stripe', body, stripeHeaders(body));
    expect(result.key).toBe('stripe:acct_123:pi_1:payment_intent.succeeded');
    expect(await h.claim('stripe:acct_123:pi_1:payment_intent.succeeded')).toMatchObject({
      objectId: 'pi_1',
    });
  });

  it('answers a sequential duplicate 200 with deliveries = 2 and queues nothing more', async () => {
    const body = JSON.stringify(stripeCustomerEvent());
    const first = await h.deliver('stripe', body, stripeHeaders(body));
    // A real retry is signed again, with a new timestamp: the key must not change.
    const second = await h.deliver(
      'stripe',
      body,
      stripeHeaders(body, TEST_SECRETS.stripe, nowSeconds() - 5),
    );

    expect(first.outcome).toBe('accepted');
    expect(second).toMatchObject({ statusCode: 200, outcome: 'duplicate', deliveries: 2, enqueued: 0 });
    expect(second.key).toBe(first.key);
    expect(await h.claim(first.key ?? '')).toMatchObject({ deliveries: 2, status: ClaimStatus.Enqueued });
    expect(await h.drain()).toHaveLength(1);
  });

  describe('with the duplicate counter off (COUNT_DUPLICATES=false)', () => {
    const uncounted = () => ({ deps: { settings: { ...h.settings, countDuplicates: false } } });

    it('answers a duplicate from the failed claim write alone: one request, no deliveries in the answer', async () => {
      const body = JSON.stringify(stripeCustomerEvent());
      const first = await h.deliver('stripe', body, stripeHeaders(body), uncounted());
      expect(first).toMatchObject({ outcome: 'accepted', deliveries: 1 });

      const commands: string[] = [];
      const name = 'count-duplicate-requests';
      h.dynamo.middlewareStack.add(
        (next, context) => async (args) => {
          commands.push(context.commandName ?? '?');
          return next(args);
        },
        { step: 'initialize', name },
      );
      let second: Awaited<ReturnType<typeof h.deliver>>;
      try {
        second = await h.deliver('stripe', body, stripeHeaders(body), uncounted());
      } finally {
        h.dynamo.middlewareStack.remove(name);
      }
      expect(second).toMatchObject({ statusCode: 200, outcome: 'duplicate', enqueued: 0, key: first.key });
      expect(second).not.toHaveProperty('deliveries');
      expect(commands).toEqual(['UpdateItemCommand']); // the claim write that failed its condition
      expect(await h.claim(first.key ?? '')).toMatchObject({ deliveries: 1, status: ClaimStatus.Enqueued });
      expect(await h.drain()).toHaveLength(1);
    });

    it('still queues one message for 20 concurrent copies', async () => {
      const body = JSON.stringify(stripeCustomerEvent());
      const headers = stripeHeaders(body);
      const results = await Promise.all(
        Array.from({ length: 20 }, () => h.deliver('stripe', body, headers, uncounted())),
      );
      expect(results.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
      expect(results.filter((r) => r.outcome === 'accepted')).toHaveLength(1);
      expect(results.filter((r) => r.outcome === 'duplicate')).toHaveLength(19);
      expect(results.filter((r) => r.outcome === 'duplicate' && 'deliveries' in r)).toEqual([]);
      const claims = await h.claims();
      expect(claims).toHaveLength(1);
      expect(claims[0]).toMatchObject({ deliveries: 1, status: ClaimStatus.Enqueued });
      expect(await h.drain()).toHaveLength(1);
    });
  });

  it('queues nothing for a duplicate of a processed (DONE) event', async () => {
    const event = stripeCustomerEvent();
    const pk = `stripe:platform:${event.id}`;
    await seedClaim(event, {
      status: ClaimStatus.Done,
      ...seenOnce(),
    });
    const body = JSON.stringify(event);
    const result = await h.deliver('stripe', body, stripeHeaders(body));
    expect(result).toMatchObject({ statusCode: 200, outcome: 'duplicate', deliveries: 2, enqueued: 0 });
    expect(await h.claim(pk)).toMatchObject({ status: ClaimStatus.Done, deliveries: 2 });
    expect(await h.depth()).toBe(0);
  });

  it('answers 20 concurrent copies of one delivery 200, with one claim counted 20 times and one message', async () => {
    const body = JSON.stringify(stripeCustomerEvent());
    const headers = stripeHeaders(body);
    const results = await Promise.all(Array.from({ length: 20 }, () => h.deliver('stripe', body, headers)));

    expect(results.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    // Exactly one delivery won the conditional write and queued; the other 19 waited for its
    // ENQUEUED mark and answered duplicate without queueing.
    expect(results.filter((r) => r.outcome === 'accepted')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'duplicate')).toHaveLength(19);
    expect(results.reduce((sum, r) => sum + r.enqueued, 0)).toBe(1);
    const claims = await h.claims();
    expect(claims).toHaveLength(1);
    expect(claims[0]).toMatchObject({ deliveries: 20, status: ClaimStatus.Enqueued });
    expect(await h.drain()).toHaveLength(1);
  });

  it('releases the claim and answers 500 when enqueueing fails, and the retry then succeeds', async () => {
    const body = JSON.stringify(stripeCustomerEvent());
    const queue = failingQueue(h.queue, 1);

    const failed = await h.deliver('stripe', body, stripeHeaders(body), { deps: { queue } });
    expect(failed).toMatchObject({ statusCode: 500, outcome: 'enqueue_failed', enqueued: 0 });
    const released = await h.claim(failed.key ?? '');
    expect(released?.status).toBe(ClaimStatus.Received);
    expect(released?.leaseExpiresAt).toBeLessThanOrEqual(Date.now());
    expect(released?.lastError).toBe('enqueue failed: Error: SQS is unavailable (injected)');
    expect(await h.depth()).toBe(0);

    const retry = await h.deliver('stripe', body, stripeHeaders(body), { deps: { queue } });
    expect(retry).toMatchObject({
      statusCode: 200,
      outcome: 'accepted',
      message: 'Accepted (an earlier delivery had not completed).',
      tookOver: true,
      deliveries: 2,
      enqueued: 1,
    });
    const claim = await h.claim(failed.key ?? '');
    expect(claim).toMatchObject({ status: ClaimStatus.Enqueued, deliveries: 2 });
    expect(claim?.lastError).toBeUndefined();
    expect(await h.drain()).toHaveLength(1);
  });

  it('answers 500 when neither the send nor the release goes through, and says both in the log', async () => {
    const event = stripeCustomerEvent();
    const pk = `stripe:platform:${event.id}`;
    const store = Object.assign(Object.create(h.store), {
      releaseClaim: async () => {
        throw new Error('DynamoDB is unavailable (injected)');
      },
    });
    const body = JSON.stringify(event);
    const result = await h.deliver('stripe', body, stripeHeaders(body), {
      deps: { store, queue: failingQueue(h.queue, 1) },
    });
    expect(result).toEqual({
      statusCode: 500,
      outcome: 'enqueue_failed',
      message: 'The event could not be queued; please retry.',
      provider: 'stripe',
      key: pk,
      eventId: event.id,
      eventType: event.type,
      deliveries: 1,
      enqueued: 0,
    });
    expect(h.logs).toEqual([
      {
        level: 'error',
        message: 'could not release the claim after a failed enqueue; it frees itself when the lease ends',
        details: { key: pk, error: 'Error: DynamoDB is unavailable (injected)' },
      },
      {
        level: 'error',
        message:
          'enqueue failed; answering 500 so the provider retries (released: the claim was given back for the retry)',
        details: { key: pk, released: false, error: 'Error: SQS is unavailable (injected)' },
      },
    ]);
    // Still held by the failed delivery's lease, which frees it when it ends.
    expect(await h.claim(pk)).toMatchObject({ status: ClaimStatus.Received, leaseOwner: 'receiver' });
  });

  it('recovers from a crash between the claim and the enqueue (fault point receiver.afterClaim)', async () => {
    const event = stripeCustomerEvent({ eventId: 'evt_crash_after_claim' });
    const body = JSON.stringify(event);
    const faultPoint = faultInjector('receiver.afterClaim@crash_after_claim:1');
    const crashed = await h.deliver('stripe', body, stripeHeaders(body), { deps: { faultPoint } });
    expect(crashed).toMatchObject({ statusCode: 500, outcome: 'enqueue_failed' });
    expect(await h.depth()).toBe(0);
    const retry = await h.deliver('stripe', body, stripeHeaders(body), { deps: { faultPoint } });
    expect(retry).toMatchObject({ statusCode: 200, outcome: 'accepted', tookOver: true });
    expect(await h.drain()).toHaveLength(1);
  });

  it('treats a claim past its expiresAt as absent even though DynamoDB has not deleted it yet', async () => {
    const event = stripeCustomerEvent();
    const pk = `stripe:platform:${event.id}`;
    // Seeded and used at once: DynamoDB Local deletes expired items within seconds.
    await seedClaim(event, {
      status: ClaimStatus.Done,
      deliveries: 3,
      firstSeenAt: '2026-01-01T00:00:00.000Z',
      lastSeenAt: '2026-01-01T00:00:00.000Z',
      expiresAt: nowSeconds() - 60,
    });
    const body = JSON.stringify(event);
    const result = await h.deliver('stripe', body, stripeHeaders(body));
    expect(result).toMatchObject({ statusCode: 200, outcome: 'accepted', deliveries: 1, enqueued: 1 });
    const claim = await h.claim(pk);
    expect(claim).toMatchObject({ status: ClaimStatus.Enqueued, deliveries: 1 });
    expect(claim?.expiresAt).toBeGreaterThan(nowSeconds());
    expect(await h.drain()).toHaveLength(1);
  });

  it('takes over a claim whose receiver died after claiming (lease run out) and queues the event', async () => {
    const event = stripeCustomerEvent();
    const pk = `stripe:platform:${event.id}`;
    await seedClaim(event, {
      status: ClaimStatus.Received,
      ...seenOnce(),
      leaseToken: 'dead-receiver',
      leaseExpiresAt: Date.now() - 1_000,
      leaseOwner: 'receiver',
    });
    const body = JSON.stringify(event);
    const result = await h.deliver('stripe', body, stripeHeaders(body));
    expect(result).toMatchObject({
      statusCode: 200,
      outcome: 'accepted',
      tookOver: true,
      deliveries: 2,
      enqueued: 1,
    });
    expect(await h.claim(pk)).toMatchObject({ status: ClaimStatus.Enqueued, deliveries: 2 });
    expect(await h.drain()).toHaveLength(1);
  });

  it('queues a FAILED event again when the provider retries it, so it can still complete', async () => {
    const event = stripeCustomerEvent();
    const pk = `stripe:platform:${event.id}`;
    await seedClaim(event, {
      status: ClaimStatus.Failed,
      ...seenOnce(),
      lastError: 'handler threw',
    });
    const body = JSON.stringify(event);
    const result = await h.deliver('stripe', body, stripeHeaders(body));
    expect(result).toMatchObject({ statusCode: 200, outcome: 'accepted', tookOver: true, enqueued: 1 });
    expect(await h.claim(pk)).toMatchObject({ status: ClaimStatus.Enqueued, deliveries: 2 });
    expect(await h.drain()).toHaveLength(1);
  });

  it('takes over a FAILED claim that kept its unmarked flag, with or without marks, rather than copying it', async () => {
    // The processor does not clear `unmarked`: a claim accepted with MARK_ENQUEUED=false fails with it.
    for (const markEnqueued of [true, false]) {
      const event = stripeCustomerEvent();
      const pk = `stripe:platform:${event.id}`;
      await seedClaim(event, {
        status: ClaimStatus.Failed,
        unmarked: true,
        ...seenOnce(),
        lastError: 'handler threw',
      });
      const body = JSON.stringify(event);
      const result = await h.deliver('stripe', body, stripeHeaders(body), {
        deps: { settings: { ...h.settings, markEnqueued } },
      });
      expect({ markEnqueued, result }).toMatchObject({
        markEnqueued,
        result: { statusCode: 200, outcome: 'accepted', tookOver: true, enqueued: 1 },
      });
      const claim = await h.claim(pk);
      expect(claim?.status).toBe(markEnqueued ? ClaimStatus.Enqueued : ClaimStatus.Received);
      expect(claim?.unmarked).toBe(markEnqueued ? undefined : true);
      // Unmarked, the claim keeps the receiver's lease until a processor takes it.
      expect(claim?.leaseOwner).toBe(markEnqueued ? undefined : 'receiver');
      expect(claim?.deliveries).toBe(2);
    }
    expect(await h.drain()).toHaveLength(2);
  });

  it('claims again when the claim vanished before its duplicate was counted, and counts the delivery once', async () => {
    const event = stripeCustomerEvent();
    const pk = `stripe:platform:${event.id}`;
    await seedClaim(event, {
      status: ClaimStatus.Enqueued,
      ...seenOnce(),
    });
    // The first count finds no live claim (as if it expired in between); the claim is written again.
    let counts = 0;
    const store = Object.assign(Object.create(h.store), {
      recordDuplicate: (...args: Parameters<typeof h.store.recordDuplicate>) => {
        counts += 1;
        return counts === 1 ? Promise.resolve(undefined) : h.store.recordDuplicate(...args);
      },
    });
    const body = JSON.stringify(event);
    const result = await h.deliver('stripe', body, stripeHeaders(body), { deps: { store } });
    expect(result).toEqual({
      statusCode: 200,
      outcome: 'duplicate',
      message: 'Already received (ENQUEUED); nothing new was queued.',
      provider: 'stripe',
      key: pk,
      eventId: event.id,
      eventType: event.type,
      deliveries: 2,
      enqueued: 0,
    });
    expect(counts).toBe(2);
    expect((await h.claim(pk))?.deliveries).toBe(2);
  });

  it('counts a delivery once when the claim vanished after a lost take-over and was written again', async () => {
    const event = stripeCustomerEvent();
    const pk = `stripe:platform:${event.id}`;
    await seedClaim(event, {
      status: ClaimStatus.Failed,
      ...seenOnce(),
    });
    // The first take-over loses the race and the look after it finds nothing; the next round's
    // claim write fails on the claim that is there, which is taken over without a second count.
    let takeOvers = 0;
    let reads = 0;
    const store = Object.assign(Object.create(h.store), {
      takeOver: (...args: Parameters<typeof h.store.takeOver>) => {
        takeOvers += 1;
        return takeOvers === 1 ? Promise.resolve(undefined) : h.store.takeOver(...args);
      },
      getClaim: (...args: Parameters<typeof h.store.getClaim>) => {
        reads += 1;
        return reads === 1 ? Promise.resolve(undefined) : h.store.getClaim(...args);
      },
    });
    const body = JSON.stringify(event);
    const result = await h.deliver('stripe', body, stripeHeaders(body), { deps: { store } });
    expect(result).toMatchObject({ statusCode: 200, outcome: 'accepted', tookOver: true, deliveries: 2 });
    expect(takeOvers).toBe(2);
    expect((await h.claim(pk))?.deliveries).toBe(2);
    expect(await h.drain()).toHaveLength(1);
  });

  it('waits DUPLICATE_WAIT_MS in steps of DUPLICATE_POLL_MS, and answers 503 once another step would pass it', async () => {
    const body = JSON.stringify(stripeCustomerEvent());
    const headers = stripeHeaders(body);
    const gated = gatedQueue(h.queue);
    const first = h.deliver('stripe', body, headers, { deps: { queue: gated.queue } });
    await gated.sending;
    const [held] = await h.claims();
    // 3.5 s left on the first delivery's lease by the time the wait (100 ms) is over.
    let now = (held?.leaseExpiresAt ?? 0) - 3_600;
    const sleeps: number[] = [];
    const second = await h.deliver('stripe', body, headers, {
      deps: {
        clock: () => now,
        sleep: async (ms) => {
          sleeps.push(ms);
          now += ms;
        },
        settings: { ...h.settings, duplicateWaitMs: 100, duplicatePollMs: 50 },
      },
    });
    // Retry-After: the seconds left on the holder's lease, rounded up.
    expect(second).toMatchObject({ statusCode: 503, outcome: 'in_flight', headers: { 'retry-after': '4' } });
    // At 0 and 50 ms another 50 ms step ends within the 100 ms; at 100 ms it would not.
    expect(sleeps).toEqual([50, 50]);
    gated.open();
    await first;
  });

  it('gives up after 200 claim rounds that never settle: 503, Retry-After 1, logged', async () => {
    const event = stripeCustomerEvent();
    await seedClaim(event, {
      status: ClaimStatus.Failed,
      ...seenOnce(),
    });
    // Every take-over loses the race (as if another delivery always moved the claim first).
    let takeOvers = 0;
    const store = Object.assign(Object.create(h.store), {
      takeOver: async () => {
        takeOvers += 1;
        return undefined;
      },
    });
    const body = JSON.stringify(event);
    const result = await h.deliver('stripe', body, stripeHeaders(body), { deps: { store } });
    expect(result).toEqual({
      statusCode: 503,
      outcome: 'in_flight',
      message: 'The claim did not settle; retry shortly.',
      headers: { 'retry-after': '1' },
      provider: 'stripe',
      key: `stripe:platform:${event.id}`,
      eventId: event.id,
      eventType: event.type,
      enqueued: 0,
    });
    expect(takeOvers).toBe(200);
    expect(h.logs).toEqual([
      {
        level: 'error',
        message: 'claim did not settle; answering 503',
        details: { key: `stripe:platform:${event.id}` },
      },
    ]);
    expect(await h.depth()).toBe(0);
  });

  it('makes a duplicate wait for the in-flight first delivery and answer 200 once it has queued', async () => {
    const body = JSON.stringify(stripeCustomerEvent());
    const headers = stripeHeaders(body);
    const gated = gatedQueue(h.queue);
    const first = h.deliver('stripe', body, headers, { deps: { queue: gated.queue } });
    await gated.sending; // the first delivery holds the claim and is inside SendMessage
    const second = h.deliver('stripe', body, headers, { deps: { queue: gated.queue } });
    setTimeout(gated.open, 200);

    const [a, b] = await Promise.all([first, second]);
    expect(a).toMatchObject({ statusCode: 200, outcome: 'accepted' });
    expect(b).toMatchObject({ statusCode: 200, outcome: 'duplicate', deliveries: 2, enqueued: 0 });
    expect(await h.drain()).toHaveLength(1);
  });

  it('polls the claim once per DUPLICATE_POLL_MS while a duplicate waits, not in a busy loop', async () => {
    const body = JSON.stringify(stripeCustomerEvent());
    const headers = stripeHeaders(body);
    const gated = gatedQueue(h.queue);
    const first = h.deliver('stripe', body, headers, { deps: { queue: gated.queue } });
    await gated.sending;
    let reads = 0;
    let writes = 0;
    const store = Object.assign(Object.create(h.store), {
      getClaim: (...args: Parameters<typeof h.store.getClaim>) => {
        reads += 1;
        return h.store.getClaim(...args);
      },
      createClaim: (...args: Parameters<typeof h.store.createClaim>) => {
        writes += 1;
        return h.store.createClaim(...args);
      },
    });
    const second = h.deliver('stripe', body, headers, {
      deps: { queue: gated.queue, store, settings: { ...h.settings, duplicatePollMs: 100 } },
    });
    setTimeout(gated.open, 350);
    expect(await second).toMatchObject({ statusCode: 200, outcome: 'duplicate' });
    await first;
    // About 350 ms of waiting at one read per 100 ms (a busy loop reads the claim hundreds of times).
    expect(reads).toBeGreaterThanOrEqual(3);
    expect(reads).toBeLessThanOrEqual(6);
    // One claim write; the rounds after it only read.
    expect(writes).toBe(1);
  });

  it('answers 503 with Retry-After when the first delivery is still in flight after the wait', async () => {
    const body = JSON.stringify(stripeCustomerEvent());
    const headers = stripeHeaders(body);
    const gated = gatedQueue(h.queue);
    const first = h.deliver('stripe', body, headers, { deps: { queue: gated.queue } });
    await gated.sending;
    const second = await h.deliver('stripe', body, headers, {
      deps: { queue: gated.queue, settings: { ...h.settings, duplicateWaitMs: 150 } },
    });
    expect(second).toEqual({
      statusCode: 503,
      outcome: 'in_flight',
      message: 'An earlier delivery of this event is still being accepted; retry shortly.',
      headers: { 'retry-after': expect.any(String) },
      provider: 'stripe',
      key: expect.stringMatching(/^stripe:platform:evt_/),
      eventId: expect.any(String),
      eventType: 'customer.created',
      deliveries: 2,
      enqueued: 0,
    });
    // The seconds left on the first delivery's lease (the harness's 10 s, less the 150 ms waited).
    expect(second.headers?.['retry-after']).toBe(String(h.settings.leaseSeconds));
    expect(h.logs).toEqual([]);
    expect(await h.depth()).toBe(0); // nothing was queued on the strength of the unfinished claim

    gated.open();
    expect(await first).toMatchObject({ statusCode: 200, outcome: 'accepted' });
    const third = await h.deliver('stripe', body, headers);
    expect(third).toMatchObject({ statusCode: 200, outcome: 'duplicate', deliveries: 3 });
    expect(await h.drain()).toHaveLength(1);
  });

  it('lets no stale receiver release or overwrite a claim that another delivery has taken over', async () => {
    const body = JSON.stringify(stripeCustomerEvent());
    const headers = stripeHeaders(body);
    // Receiver A claims, then stalls inside SendMessage past its lease...
    let clockOffset = 0;
    const clock = () => Date.now() + clockOffset;
    let releaseA: () => void = () => {};
    const stalled: EventQueue = {
      send: () =>
        new Promise((_, reject) => {
          releaseA = () => reject(new Error('A finally timed out'));
        }),
    };
    const a = h.deliver('stripe', body, headers, { deps: { queue: stalled, clock } });
    await expect.poll(async () => (await h.claims())[0]?.status).toBe(ClaimStatus.Received);
    const pk = (await h.claims())[0]?.pk ?? '';
    const tokenA = (await h.claim(pk))?.leaseToken;

    // ...so receiver B, a retry arriving after A's lease, takes the claim over and queues the event.
    clockOffset = (h.settings.leaseSeconds + 1) * 1000;
    const b = await h.deliver('stripe', body, headers, { deps: { clock } });
    expect(b).toMatchObject({ statusCode: 200, outcome: 'accepted', tookOver: true });
    const afterB = await h.claim(pk);
    expect(afterB?.status).toBe(ClaimStatus.Enqueued);

    // A's send now fails: its release is fenced by its own lease token and changes nothing.
    releaseA();
    expect(await a).toMatchObject({ statusCode: 500, outcome: 'enqueue_failed' });
    expect(await h.claim(pk)).toEqual(afterB);
    // Nor can A mark ENQUEUED or release under B through the store directly.
    expect(await h.store.releaseClaim(pk, tokenA ?? '', 'late', clock())).toBe(false);
    expect(await h.store.markEnqueued(pk, tokenA ?? '', 'late-message', clock())).toBe(false);
    expect(await h.claim(pk)).toEqual(afterB);
    expect(await h.drain()).toHaveLength(1);
  });

  it('answers 200 to a send that went through after its lease was taken over, with a warning and the extra message', async () => {
    const event = stripeCustomerEvent();
    const pk = `stripe:platform:${event.id}`;
    const body = JSON.stringify(event);
    const headers = stripeHeaders(body);
    // A's SendMessage goes through only after B, arriving after A's lease, has taken the claim over.
    let clockOffset = 0;
    const clock = () => Date.now() + clockOffset;
    const gated = gatedQueue(h.queue);
    const a = h.deliver('stripe', body, headers, { deps: { queue: gated.queue, clock } });
    await gated.sending;
    clockOffset = (h.settings.leaseSeconds + 1) * 1000;
    expect(await h.deliver('stripe', body, headers, { deps: { clock } })).toMatchObject({
      outcome: 'accepted',
      tookOver: true,
    });
    const afterB = await h.claim(pk);
    gated.open();
    // A's message is queued, so its answer is 200; its mark is refused and changes nothing.
    expect(await a).toMatchObject({ statusCode: 200, outcome: 'accepted', enqueued: 1 });
    expect(await h.claim(pk)).toEqual(afterB);
    expect(h.logs).toEqual([
      {
        level: 'warn',
        message:
          'lease was taken over before the ENQUEUED mark; the extra message is absorbed by the processor',
        details: { key: pk },
      },
    ]);
    expect(await h.drain()).toHaveLength(2);
  });

  it('answers 200 when the ENQUEUED mark fails after the send: the message is queued, the claim recovers by lease', async () => {
    const event = stripeCustomerEvent();
    const pk = `stripe:platform:${event.id}`;
    const store = Object.assign(Object.create(h.store), {
      markEnqueued: async () => {
        throw new Error('DynamoDB is unavailable (injected)');
      },
    });
    const body = JSON.stringify(event);
    expect(await h.deliver('stripe', body, stripeHeaders(body), { deps: { store } })).toMatchObject({
      statusCode: 200,
      outcome: 'accepted',
      enqueued: 1,
    });
    expect(h.logs).toEqual([
      {
        level: 'warn',
        message: 'could not mark the claim ENQUEUED; the message is queued and the claim recovers by lease',
        details: { key: pk, error: 'Error: DynamoDB is unavailable (injected)' },
      },
    ]);
    expect(await h.claim(pk)).toMatchObject({ status: ClaimStatus.Received, leaseOwner: 'receiver' });
    expect(await h.drain()).toHaveLength(1);
  });

  it('accepts the same event id from two providers and from two accounts as different events', async () => {
    const sharedId = 'evt_shared_0001';
    const platform = JSON.stringify(stripeCustomerEvent({ eventId: sharedId }));
    const connected = JSON.stringify(stripeCustomerEvent({ eventId: sharedId, account: 'acct_other' }));
    const asaas = JSON.stringify(asaasPaymentEvent({ eventId: sharedId }));

    const results = [
      await h.deliver('stripe', platform, stripeHeaders(platform)),
      await h.deliver('stripe', connected, stripeHeaders(connected)),
      await h.deliver('asaas', asaas, asaasHeaders()),
    ];
    expect(results.map((r) => r.outcome)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(results.map((r) => r.key).sort()).toEqual([
      'asaas:acc_0a1b2c3d:evt_shared_0001',
      'stripe:acct_other:evt_shared_0001',
      'stripe:platform:evt_shared_0001',
    ]);
    expect(await h.drain()).toHaveLength(3);
  });

  it('verifies a base64-encoded body (API Gateway isBase64Encoded) over the decoded bytes', async () => {
    const body = JSON.stringify(stripeCustomerEvent());
    const result = await h.deliver('stripe', body, stripeHeaders(body), { isBase64Encoded: true });
    expect(result).toMatchObject({ statusCode: 200, outcome: 'accepted' });
    const [message] = await h.drain();
    expect(message && 'body' in message ? message.body : undefined).toBe(body);
  });

  it('keeps an Asaas event id with an & intact in the message and escapes it in the key', async () => {
    const event = asaasPaymentEvent({ eventId: 'evt_05b708f961d739ea7eba7e4db318f621&368604920' });
    const body = JSON.stringify(event);
    const result = await h.deliver('asaas', body, asaasHeaders());
    expect(result.key).toBe('asaas:acc_0a1b2c3d:evt_05b708f961d739ea7eba7e4db318f621%26368604920');
    const [message] = await h.drain();
    expect(message?.eventId).toBe('evt_05b708f961d739ea7eba7e4db318f621&368604920');
  });

  describe('rejections write nothing', () => {
    const expectNothingWritten = async () => {
      expect(await h.claims()).toEqual([]);
      expect(await h.depth()).toBe(0);
    };

    it.each([
      {
        reason: 'signature_mismatch',
        message: 'The signature does not match any configured secret.',
        headers: (body: string) => stripeHeaders(body, 'whsec_not_the_secret'),
      },
      {
        reason: 'missing_signature',
        message: 'The signature header is missing.',
        headers: () => ({ 'content-type': 'application/json' }),
      },
      {
        reason: 'timestamp_outside_tolerance',
        message: 'The signed timestamp is outside the accepted tolerance.',
        headers: (body: string) => stripeHeaders(body, TEST_SECRETS.stripe, nowSeconds() - 301),
      },
      {
        // A Stripe signature header with no timestamp.
        reason: 'malformed_signature',
        message: 'The signature header is malformed.',
        headers: () => ({ 'stripe-signature': 'v1=abc' }),
      },
    ])('answers 401 $reason with its message, writing nothing', async ({ reason, message, headers }) => {
      const body = JSON.stringify(stripeCustomerEvent());
      expect(await h.deliver('stripe', body, headers(body))).toEqual({
        statusCode: 401,
        outcome: 'invalid_signature',
        reason,
        message,
        provider: 'stripe',
        enqueued: 0,
      });
      await expectNothingWritten();
    });

    it("enforces a provider's configured tolerance, not its default", async () => {
      const settings = {
        ...h.settings,
        providers: parseProviderSettings(JSON.stringify({ stripe: { toleranceSeconds: 60 } })),
      };
      const body = JSON.stringify(stripeCustomerEvent());
      // 120 s old: within Stripe's default 300 s, outside the configured 60 s.
      const result = await h.deliver('stripe', body, stripeHeaders(body, undefined, nowSeconds() - 120), {
        deps: { settings },
      });
      expect(result).toMatchObject({ statusCode: 401, reason: 'timestamp_outside_tolerance' });
      expect(
        await h.deliver('stripe', body, stripeHeaders(body, undefined, nowSeconds() - 120)),
      ).toMatchObject({
        statusCode: 200,
        outcome: 'accepted',
      });
    });

    it("answers 500 internal_error, logged, when the receiver's settings miss a provider", async () => {
      const body = JSON.stringify(stripeCustomerEvent());
      const result = await h.deliver('stripe', body, stripeHeaders(body), {
        deps: {
          settings: { ...h.settings, providers: { ...h.settings.providers, stripe: undefined } as never },
        },
      });
      expect(result).toMatchObject({ statusCode: 500, outcome: 'internal_error' });
      expect(h.logs).toEqual([
        {
          level: 'error',
          message: 'delivery failed with an unexpected error',
          details: { error: "Error: the receiver's settings have no entry for provider stripe" },
        },
      ]);
      await expectNothingWritten();
    });

    it('answers 401 when the body was changed after signing', async () => {
      const body = JSON.stringify(stripeCustomerEvent());
      const result = await h.deliver('stripe', body.replace('customer', 'cUstomer'), stripeHeaders(body));
      expect(result).toMatchObject({ statusCode: 401, reason: 'signature_mismatch' });
      await expectNothingWritten();
    });

    it("answers 400 to GitHub's published vector: authentic, but the body is not JSON", async () => {
      const body = 'Hello, World!';
      const headers = {
        'x-github-event': 'push',
        'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
        'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
      };
      const result = await h.deliver('github', body, headers, {
        deps: { secrets: { getSecrets: async () => ["It's a Secret to Everybody"] } },
      });
      expect(result).toMatchObject({ statusCode: 400, outcome: 'malformed', reason: 'invalid_json' });
      await expectNothingWritten();
    });

    it('answers 400 to an authentic Stripe payload with no event id', async () => {
      const { id: _id, ...event } = stripeCustomerEvent();
      const body = JSON.stringify(event);
      const result = await h.deliver('stripe', body, stripeHeaders(body));
      expect(result).toEqual({
        statusCode: 400,
        outcome: 'malformed',
        reason: 'missing_event_id',
        message: 'The payload is authentic but unusable: missing_event_id.',
        provider: 'stripe',
        enqueued: 0,
      });
      await expectNothingWritten();
    });

    it('answers 400 to an authentic Stripe payload that is not JSON', async () => {
      const body = '{"id": "evt_1", "type": ';
      const result = await h.deliver('stripe', body, stripeHeaders(body));
      expect(result).toMatchObject({ statusCode: 400, outcome: 'malformed', reason: 'invalid_json' });
      await expectNothingWritten();
    });

    it('answers 400 when the composite key rule finds no object id', async () => {
      const event = stripePaymentIntentEvent();
      const body = JSON.stringify({
        ...event,
        data: { object: { object: 'payment_intent', status: 'succeeded' } },
      });
      const result = await h.deliver('stripe', body, stripeHeaders(body));
      expect(result).toEqual({
        statusCode: 400,
        outcome: 'malformed',
        reason: 'missing_object_id',
        message: 'The composite key rule needs an object id and the payload has none.',
        provider: 'stripe',
        eventId: event.id,
        eventType: event.type,
        enqueued: 0,
      });
      await expectNothingWritten();
    });

    it('answers 400 key_too_long to a signed event whose key would pass the limit, the same on every delivery', async () => {
      // Signed by Stripe's own library: the id is authentic, and no retry will ever make it shorter.
      const body = JSON.stringify({ ...stripeCustomerEvent(), id: `evt_${'x'.repeat(2100)}` });
      for (const attempt of [1, 2]) {
        const result = await h.deliver('stripe', body, stripeHeaders(body));
        expect({ attempt, result }).toMatchObject({
          attempt,
          result: { statusCode: 400, outcome: 'malformed', reason: 'key_too_long', enqueued: 0 },
        });
        expect(result.message).toBe(
          "The event's idempotency key would be 2120 bytes, over the 512-byte limit: no provider issues ids that long.",
        );
        // The answer does not echo the id that is too long.
        expect(result).not.toHaveProperty('eventId');
        expect(result).not.toHaveProperty('key');
      }
      await expectNothingWritten();
      expect(h.logs).toContainEqual({
        level: 'warn',
        message: 'refused an event whose idempotency key would be too long to store',
        details: {
          provider: 'stripe',
          keyBytes: 2120,
          maxKeyBytes: 512,
          eventIdBytes: 2104,
          eventIdStart: `evt_${'x'.repeat(96)}`,
          accountStart: 'platform',
        },
      });
      // An account too long is cut short in the log the same way.
      const account = `acct_${'y'.repeat(600)}`;
      const long = JSON.stringify(stripeCustomerEvent({ eventId: 'evt_short', account }));
      expect(await h.deliver('stripe', long, stripeHeaders(long))).toMatchObject({ reason: 'key_too_long' });
      expect(h.logs.at(-1)?.details).toMatchObject({
        eventIdStart: 'evt_short',
        accountStart: account.slice(0, 100),
      });
      await expectNothingWritten();
    });

    it('answers 404 to an unknown provider', async () => {
      const result = await h.deliver('paypal', '{}', {});
      expect(result).toEqual({
        statusCode: 404,
        outcome: 'unknown_provider',
        message: 'No webhook provider is configured at this path.',
        enqueued: 0,
      });
      const proto = await h.deliver('__proto__', '{}', {});
      expect(proto).toMatchObject({ statusCode: 404, outcome: 'unknown_provider' });
      await expectNothingWritten();
    });

    it('answers 413 to a body over a configured MAX_BODY_BYTES, before verifying it', async () => {
      const settings = { ...h.settings, maxBodyBytes: 100_000 };
      const body = JSON.stringify({ ...stripeCustomerEvent(), padding: 'x'.repeat(settings.maxBodyBytes) });
      const result = await h.deliver('stripe', body, stripeHeaders(body), { deps: { settings } });
      expect(result).toMatchObject({ statusCode: 413, outcome: 'payload_too_large' });
      const encoded = await h.deliver('stripe', body, stripeHeaders(body), {
        isBase64Encoded: true,
        deps: { settings },
      });
      expect(encoded).toMatchObject({ statusCode: 413, outcome: 'payload_too_large' });
      await expectNothingWritten();
    });

    it('accepts a body of exactly MAX_BODY_BYTES, plain or base64, and refuses one byte more', async () => {
      const settings = { ...h.settings, maxBodyBytes: 1000 }; // 1000 = 3 x 333 + 1: base64 pads it
      const sized = (bytes: number) => {
        const event = { ...stripeCustomerEvent(), padding: '' };
        const padding = 'x'.repeat(bytes - Buffer.byteLength(JSON.stringify(event)));
        return JSON.stringify({ ...event, padding });
      };
      for (const isBase64Encoded of [false, true]) {
        const exact = sized(1000);
        expect(
          await h.deliver('stripe', exact, stripeHeaders(exact), { isBase64Encoded, deps: { settings } }),
        ).toMatchObject({ statusCode: 200, outcome: 'accepted' });
        const over = sized(1001);
        expect(
          await h.deliver('stripe', over, stripeHeaders(over), { isBase64Encoded, deps: { settings } }),
        ).toEqual({
          statusCode: 413,
          outcome: 'payload_too_large',
          reason: 'body_too_large',
          message: 'The body is larger than the receiver accepts (1000 bytes).',
          provider: 'stripe',
          enqueued: 0,
        });
      }
      expect(await h.drain()).toHaveLength(2);
    });

    it('refuses a base64 body on its encoded length, before decoding it', async () => {
      const settings = { ...h.settings, maxBodyBytes: 1000 };
      // 1,340 characters that are not base64 decode to nothing; their length alone says "too large".
      const result = await receiveDelivery(
        { providerId: 'stripe', method: 'POST', headers: {}, body: '!'.repeat(1340), isBase64Encoded: true },
        { ...h.deps, settings },
      );
      expect(result).toMatchObject({ statusCode: 413, reason: 'body_too_large' });
      await expectNothingWritten();
    });

    it('checks a delivery with no body (API Gateway sends null) as the empty body', async () => {
      const result = await receiveDelivery(
        {
          providerId: 'stripe',
          method: 'POST',
          headers: stripeHeaders(''),
          body: undefined,
          isBase64Encoded: false,
        },
        h.deps,
      );
      // Authentic (the signature covers the empty body), and not an event.
      expect(result).toMatchObject({ statusCode: 400, outcome: 'malformed', reason: 'invalid_json' });
      await expectNothingWritten();
    });

    it('without an archive bucket, queues a message over the claim-check threshold inline while SQS takes it', async () => {
      const { archive: _archive, ...withoutArchive } = h.deps;
      const deps = { ...withoutArchive, settings: { ...h.settings, claimCheckThresholdBytes: 2000 } };
      const event = { ...stripeCustomerEvent(), note: 'x'.repeat(5000) };
      const body = JSON.stringify(event);
      const result = await receiveDelivery(
        { providerId: 'stripe', method: 'POST', headers: stripeHeaders(body), body, isBase64Encoded: false },
        deps,
      );
      expect(result).toMatchObject({ statusCode: 200, outcome: 'accepted', enqueued: 1 });
      const [message] = await h.drain();
      expect(message).toMatchObject({ eventId: event.id, body });
      expect(message).not.toHaveProperty('archiveKey');
    });

    it('without an archive bucket, answers 413 when JSON escaping would push the message past SQS’s limit', async () => {
      const event = { ...stripeCustomerEvent(), note: '"'.repeat(600_000) };
      const body = JSON.stringify(event); // ~1.2 MB once escaped in the envelope
      const { archive: _archive, ...withoutArchive } = h.deps;
      const result = await receiveDelivery(
        { providerId: 'stripe', method: 'POST', headers: stripeHeaders(body), body, isBase64Encoded: false },
        withoutArchive,
      );
      expect(result).toMatchObject({ statusCode: 413, reason: 'message_too_large' });
      await expectNothingWritten();
    });

    it('without an archive bucket, queues a message of exactly SQS’s limit inline and refuses one a byte larger', async () => {
      const { archive: _archive, ...withoutArchive } = h.deps;
      const startedAt = Date.now();
      const sent: number[] = [];
      const deps = {
        ...withoutArchive,
        clock: () => startedAt,
        queue: {
          send: (message: string) => {
            sent.push(Buffer.byteLength(message));
            return h.queue.send(message);
          },
        },
      };
      const event = stripeCustomerEvent();
      const deliver = (padding: number) => {
        const body = JSON.stringify({
          ...event,
          id: `${event.id}_${String(padding).padStart(8, '0')}`,
          note: 'x'.repeat(padding),
        });
        const headers = stripeHeaders(body, TEST_SECRETS.stripe, nowSeconds());
        return receiveDelivery(
          { providerId: 'stripe', method: 'POST', headers, body, isBase64Encoded: false },
          deps,
        );
      };
      // Measure one message, then pad the next to exactly the limit (each padding byte is one message byte).
      await deliver(1000);
      const exact = 1000 + SQS_MAX_MESSAGE_BYTES - (sent[0] ?? 0);
      expect(await deliver(exact)).toMatchObject({ statusCode: 200, outcome: 'accepted' });
      expect(sent[1]).toBe(SQS_MAX_MESSAGE_BYTES);
      expect(await deliver(exact + 1)).toMatchObject({ statusCode: 413, reason: 'message_too_large' });
      expect(sent).toHaveLength(2);
      expect(await h.drain()).toHaveLength(2);
    });

    it('answers 405 to a GET', async () => {
      const result = await h.deliver('stripe', '', {}, { method: 'GET' });
      expect(result).toEqual({
        statusCode: 405,
        outcome: 'method_not_allowed',
        message: 'Webhooks must be sent with POST.',
        provider: 'stripe',
        headers: { allow: 'POST' },
        enqueued: 0,
      });
      await expectNothingWritten();
    });

    it('answers 500 not_configured, not 401, when the provider has no secret', async () => {
      const body = JSON.stringify(githubPushEvent());
      const result = await h.deliver('github', body, await githubHeaders(body), {
        deps: { secrets: { getSecrets: async () => [] } },
      });
      expect(result).toEqual({
        statusCode: 500,
        outcome: 'not_configured',
        reason: 'no_secret_configured',
        message: 'The receiver has no usable secret for this provider.',
        provider: 'github',
        enqueued: 0,
      });
      expect(h.logs).toEqual([
        {
          level: 'error',
          message: expect.stringContaining('no usable signing secret is configured for the provider'),
          details: { provider: 'github', reason: 'no_secret_configured' },
        },
      ]);
      await expectNothingWritten();
    });

    it('answers 500 not_configured for every provider that has no secret', async () => {
      for (const provider of PROVIDER_IDS) {
        const delivery = sampleDelivery(provider, {
          secret: requireProvider(provider).secret.devSecret,
          nowSeconds: nowSeconds(),
          url: 'https://hooks.example.com/webhooks/x',
        });
        const result = await h.deliver(provider, delivery.body, delivery.headers, {
          deps: {
            secrets: new StaticSecretSource({}),
            settings: { ...h.settings, publicBaseUrl: 'https://hooks.example.com/' },
          },
        });
        expect({ provider, ...result }).toMatchObject({
          provider,
          statusCode: 500,
          outcome: 'not_configured',
          reason: 'no_secret_configured',
        });
      }
      await expectNothingWritten();
    });

    it('answers 500 not_configured, not 401, when the configured secret is in no format the scheme reads', async () => {
      // A Standard Webhooks secret that is not base64, a Discord public key that is not 32 bytes of hex:
      // the operator's mistake, retried by the provider until it is fixed, and said in the log.
      for (const [provider, unusable] of [
        ['standard', 'whsec_!!!'],
        ['discord', 'not-a-key'],
      ] as const) {
        const delivery = sampleDelivery(provider, {
          secret: TEST_SECRETS[provider],
          nowSeconds: nowSeconds(),
        });
        const result = await h.deliver(provider, delivery.body, delivery.headers, {
          deps: { secrets: new StaticSecretSource({ [provider]: [unusable] }) },
        });
        expect(result).toMatchObject({
          statusCode: 500,
          outcome: 'not_configured',
          reason: 'no_secret_configured',
          provider,
        });
        expect(h.logs.at(-1)).toMatchObject({
          level: 'error',
          details: { provider, reason: 'no_secret_configured' },
        });
      }
      await expectNothingWritten();
    });

    it('answers 401 to a Shopify delivery signed with another app secret', async () => {
      const body = '{"id":1}';
      const result = await h.deliver('shopify', body, {
        'x-shopify-topic': 'orders/create',
        'x-shopify-webhook-id': 'w1',
        'x-shopify-shop-domain': 'a.myshopify.com',
        'x-shopify-hmac-sha256': createHmac('sha256', 'other').update(body).digest('base64'),
      });
      expect(result).toMatchObject({ statusCode: 401, outcome: 'invalid_signature' });
      await expectNothingWritten();
    });
  });

  it('answers 500 and writes nothing it cannot release when DynamoDB itself fails', async () => {
    const body = JSON.stringify(stripeCustomerEvent());
    const result = await h.deliver('stripe', body, stripeHeaders(body), {
      deps: {
        store: Object.assign(Object.create(h.store), {
          createClaim: async () => {
            throw new Error('ProvisionedThroughputExceededException (injected)');
          },
        }),
      },
    });
    expect(result).toEqual({
      statusCode: 500,
      outcome: 'internal_error',
      message: 'Internal error; the delivery was not accepted, please retry.',
      enqueued: 0,
    });
    expect(h.logs).toEqual([
      {
        level: 'error',
        message: 'delivery failed with an unexpected error',
        details: { error: 'Error: ProvisionedThroughputExceededException (injected)' },
      },
    ]);
    expect(await h.depth()).toBe(0);
  });
});
