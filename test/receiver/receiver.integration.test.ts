/**
 * The receiver core against DynamoDB Local and the SQS emulator: every claim rule of
 * docs/rules.md, exercised over the wire.
 */
import { createHmac } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { EventQueue } from '../../lambdas/queue/event-queue.js';
import { receiveDelivery } from '../../lambdas/receiver/core.js';
import { faultInjector } from '../../lambdas/shared/faults.js';
import { ClaimStatus } from '../../lambdas/store/claim.js';
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

    expect(result).toMatchObject({ statusCode: 200, outcome: 'accepted', deliveries: 1, enqueued: 1 });
    expect(result.key).toBe(`stripe:acct_123:${event.id}`);
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
    expect(messages[0]).toMatchObject({
      v: 1,
      key: `stripe:acct_123:${event.id}`,
      provider: 'stripe',
      eventId: event.id,
      eventType: 'customer.created',
      account: 'acct_123',
      body,
      bodyEncoding: 'utf8',
    });
    // The signature never leaves the receiver.
    expect(JSON.stringify(messages[0])).not.toContain('v1=');
    expect(messages[0]?.headers).not.toHaveProperty('stripe-signature');
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
      deliveries: 1,
      firstSeenAt: new Date().toISOString(),
      lastSeenAt: new Date().toISOString(),
      expiresAt: nowSeconds() + DAY,
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
    expect(released?.lastError).toContain('SQS is unavailable');
    expect(await h.depth()).toBe(0);

    const retry = await h.deliver('stripe', body, stripeHeaders(body), { deps: { queue } });
    expect(retry).toMatchObject({
      statusCode: 200,
      outcome: 'accepted',
      tookOver: true,
      deliveries: 2,
      enqueued: 1,
    });
    const claim = await h.claim(failed.key ?? '');
    expect(claim).toMatchObject({ status: ClaimStatus.Enqueued, deliveries: 2 });
    expect(claim?.lastError).toBeUndefined();
    expect(await h.drain()).toHaveLength(1);
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
      deliveries: 1,
      firstSeenAt: new Date().toISOString(),
      lastSeenAt: new Date().toISOString(),
      expiresAt: nowSeconds() + DAY,
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
      deliveries: 1,
      firstSeenAt: new Date().toISOString(),
      lastSeenAt: new Date().toISOString(),
      expiresAt: nowSeconds() + DAY,
      lastError: 'handler threw',
    });
    const body = JSON.stringify(event);
    const result = await h.deliver('stripe', body, stripeHeaders(body));
    expect(result).toMatchObject({ statusCode: 200, outcome: 'accepted', tookOver: true, enqueued: 1 });
    expect(await h.claim(pk)).toMatchObject({ status: ClaimStatus.Enqueued, deliveries: 2 });
    expect(await h.drain()).toHaveLength(1);
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

  it('answers 503 with Retry-After when the first delivery is still in flight after the wait', async () => {
    const body = JSON.stringify(stripeCustomerEvent());
    const headers = stripeHeaders(body);
    const gated = gatedQueue(h.queue);
    const first = h.deliver('stripe', body, headers, { deps: { queue: gated.queue } });
    await gated.sending;
    const second = await h.deliver('stripe', body, headers, {
      deps: { queue: gated.queue, settings: { ...h.settings, duplicateWaitMs: 150 } },
    });
    expect(second).toMatchObject({ statusCode: 503, outcome: 'in_flight', enqueued: 0 });
    const retryAfter = Number(second.headers?.['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(h.settings.leaseSeconds);
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

    it('answers 401 to a Stripe delivery with a wrong signature', async () => {
      const body = JSON.stringify(stripeCustomerEvent());
      const result = await h.deliver('stripe', body, stripeHeaders(body, 'whsec_not_the_secret'));
      expect(result).toMatchObject({
        statusCode: 401,
        outcome: 'invalid_signature',
        reason: 'signature_mismatch',
      });
      await expectNothingWritten();
    });

    it('answers 401 to a delivery with no signature header', async () => {
      const body = JSON.stringify(stripeCustomerEvent());
      const result = await h.deliver('stripe', body, { 'content-type': 'application/json' });
      expect(result).toMatchObject({
        statusCode: 401,
        outcome: 'invalid_signature',
        reason: 'missing_signature',
      });
      await expectNothingWritten();
    });

    it('answers 401 to a Stripe delivery whose signed timestamp is older than the tolerance', async () => {
      const body = JSON.stringify(stripeCustomerEvent());
      const result = await h.deliver(
        'stripe',
        body,
        stripeHeaders(body, TEST_SECRETS.stripe, nowSeconds() - 301),
      );
      expect(result).toMatchObject({
        statusCode: 401,
        outcome: 'invalid_signature',
        reason: 'timestamp_outside_tolerance',
      });
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
      expect(result).toMatchObject({ statusCode: 400, outcome: 'malformed', reason: 'missing_event_id' });
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
      expect(result).toMatchObject({ statusCode: 400, outcome: 'malformed', reason: 'missing_object_id' });
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
    });

    it('answers 404 to an unknown provider', async () => {
      const result = await h.deliver('paypal', '{}', {});
      expect(result).toMatchObject({ statusCode: 404, outcome: 'unknown_provider' });
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

    it('answers 405 to a GET', async () => {
      const result = await h.deliver('stripe', '', {}, { method: 'GET' });
      expect(result).toMatchObject({ statusCode: 405, outcome: 'method_not_allowed' });
      await expectNothingWritten();
    });

    it('answers 500 not_configured, not 401, when the provider has no secret', async () => {
      const body = JSON.stringify(githubPushEvent());
      const result = await h.deliver('github', body, await githubHeaders(body), {
        deps: { secrets: { getSecrets: async () => [] } },
      });
      expect(result).toMatchObject({ statusCode: 500, outcome: 'not_configured' });
      expect(h.logs.some((l) => l.level === 'error' && l.message.includes('no signing secret'))).toBe(true);
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
    expect(result).toMatchObject({ statusCode: 500, outcome: 'internal_error' });
    expect(await h.depth()).toBe(0);
  });
});
