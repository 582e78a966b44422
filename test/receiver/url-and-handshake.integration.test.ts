/**
 * The receiver's two provider hooks beyond "HMAC over the body", against DynamoDB Local and the SQS
 * emulator: a provider that signs its public URL (Square) is checked against `PUBLIC_BASE_URL` and
 * refused with 500 when none is set; a handshake (Slack's url_verification) is answered with the
 * provider's own body and writes nothing.
 */
import { createHash } from 'node:crypto';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvent } from '../../lambdas/processor/core.js';
import type { EventMessage } from '../../lambdas/queue/event-message.js';
import { toHttpResponse } from '../../lambdas/receiver/http.js';
import { sampleDelivery } from '../../local/samples.js';
import { createReceiverHarness, type ReceiverHarness } from '../helpers/receiver-harness.js';
import { TEST_SECRETS } from '../helpers/signing.js';

const BASE = 'https://hooks.example.com/';
const now = () => Math.floor(Date.now() / 1000);

describe('a provider that signs its public URL', () => {
  let withBase: ReceiverHarness;
  let withoutBase: ReceiverHarness;
  beforeAll(async () => {
    withBase = await createReceiverHarness({ publicBaseUrl: BASE });
    withoutBase = await createReceiverHarness();
  }, 60_000);
  afterAll(() => {
    for (const h of [withBase, withoutBase]) {
      h?.dynamo.destroy();
      h?.sqs.destroy();
    }
  });

  const square = (url: string, eventId: string) =>
    sampleDelivery('square', { eventId, secret: TEST_SECRETS.square, nowSeconds: now(), url });

  it('is refused with 500 not_configured while no PUBLIC_BASE_URL is set, so the provider retries', async () => {
    const delivery = square('https://hooks.example.com/webhooks/square', 'sq-no-base');
    const result = await withoutBase.deliver('square', delivery.body, delivery.headers);
    expect(result).toMatchObject({
      statusCode: 500,
      outcome: 'not_configured',
      reason: 'public_url_not_configured',
    });
    expect(result).toEqual({
      statusCode: 500,
      outcome: 'not_configured',
      reason: 'public_url_not_configured',
      message: 'The receiver does not know its public URL for this provider.',
      provider: 'square',
      enqueued: 0,
    });
    expect(withoutBase.logs).toEqual([
      {
        level: 'error',
        message: 'the provider signs its public URL and no PUBLIC_BASE_URL is set: every delivery is refused',
        details: { provider: 'square', reason: 'public_url_not_configured' },
      },
    ]);
    expect(await withoutBase.claims()).toHaveLength(0);
    // Providers that sign no URL run as before without it.
    const stripe = sampleDelivery('stripe', { secret: TEST_SECRETS.stripe, nowSeconds: now() });
    expect(await withoutBase.deliver('stripe', stripe.body, stripe.headers)).toMatchObject({
      statusCode: 200,
    });
  });

  it('is checked against <base>/webhooks/<id> and the query string as received', async () => {
    const signedUrl = 'https://hooks.example.com/webhooks/square?env=prod';
    const delivery = square(signedUrl, 'sq-with-query');
    expect(
      await withBase.deliver('square', delivery.body, delivery.headers, { rawQuery: 'env=prod' }),
    ).toMatchObject({
      statusCode: 200,
      outcome: 'accepted',
    });
    const other = square(signedUrl, 'sq-other-query');
    expect(
      await withBase.deliver('square', other.body, other.headers, { rawQuery: 'env=test' }),
    ).toMatchObject({
      statusCode: 401,
      reason: 'signature_mismatch',
    });
    expect(await withBase.deliver('square', other.body, other.headers)).toMatchObject({ statusCode: 401 });
  });

  it("queues Twilio's JSON body signed by its bodySHA256 with its format, so the processor reads it as JSON", async () => {
    const body = JSON.stringify({
      AccountSid: 'AC0123456789abcdef0123456789abcdef',
      MessageSid: 'SMint0000000000000000000000000001',
      MessageStatus: 'delivered',
    });
    const query = `bodySHA256=${createHash('sha256').update(body).digest('hex')}`;
    const signedUrl = `${BASE}webhooks/twilio?${query}`;
    const headers = {
      // Not JSON: only the URL's bodySHA256 says the body is.
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilio.getExpectedTwilioSignature(TEST_SECRETS.twilio, signedUrl, {}),
    };
    expect(await withBase.deliver('twilio', body, headers, { rawQuery: query })).toMatchObject({
      statusCode: 200,
      outcome: 'accepted',
      eventId: 'SMint0000000000000000000000000001:delivered',
    });
    // The harness's queue also holds the Square events accepted above.
    const queued = (await withBase.drain()).find((message) => message.provider === 'twilio');
    expect(queued).toMatchObject({ provider: 'twilio', bodyFormat: 'json' });
    expect(readEvent(queued as EventMessage).payload).toEqual(JSON.parse(body));
  });
});

/** One harness for a describe block: made before its tests, its clients closed after them. */
function harnessPerDescribe(): () => ReceiverHarness {
  let h: ReceiverHarness | undefined;
  beforeAll(async () => {
    h = await createReceiverHarness();
  }, 60_000);
  afterAll(() => {
    h?.dynamo.destroy();
    h?.sqs.destroy();
  });
  return () => {
    if (h === undefined) throw new Error('the harness is made in beforeAll');
    return h;
  };
}

describe("a handshake (Slack's url_verification)", () => {
  const harness = harnessPerDescribe();

  it("is answered with the provider's body, writing no claim and sending no message", async () => {
    const h = harness();
    const delivery = sampleDelivery('slack', {
      type: 'url_verification',
      eventId: 'the-challenge',
      secret: TEST_SECRETS.slack,
      nowSeconds: now(),
    });
    const result = await h.deliver('slack', delivery.body, delivery.headers);
    expect(result).toEqual({
      statusCode: 200,
      outcome: 'handshake',
      reason: 'url_verification',
      message: "Answered the provider's url_verification; nothing was claimed or queued.",
      provider: 'slack',
      enqueued: 0,
      response: { contentType: 'application/json', body: '{"challenge":"the-challenge"}' },
    });
    expect(toHttpResponse(result)).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"challenge":"the-challenge"}',
    });
    expect(await h.claims()).toHaveLength(0);
    expect(await h.depth()).toBe(0);
  });

  it('is refused with 401 when the signature or the timestamp is wrong', async () => {
    const h = harness();
    const forged = sampleDelivery('slack', { type: 'url_verification', secret: 'wrong', nowSeconds: now() });
    expect(await h.deliver('slack', forged.body, forged.headers)).toMatchObject({
      statusCode: 401,
      reason: 'signature_mismatch',
    });
    const stale = sampleDelivery('slack', {
      type: 'url_verification',
      secret: TEST_SECRETS.slack,
      nowSeconds: now() - 3600,
    });
    expect(await h.deliver('slack', stale.body, stale.headers)).toMatchObject({
      statusCode: 401,
      reason: 'timestamp_outside_tolerance',
    });
    expect(await h.claims()).toHaveLength(0);
  });
});

describe("a provider that expects its own acknowledgement (Discord's deferred response)", () => {
  const harness = harnessPerDescribe();

  const command = (eventId: string) =>
    sampleDelivery('discord', {
      type: 'application_command.refund',
      eventId,
      secret: TEST_SECRETS.discord,
      nowSeconds: now(),
    });
  const deferred = { contentType: 'application/json', body: '{"type":5}' };

  it("answers accepted and duplicate deliveries with the provider's body and the verdict in a header", async () => {
    const h = harness();
    const delivery = command('1187301233440160001');
    for (const [outcome, enqueued] of [
      ['accepted', 1],
      ['duplicate', 0],
    ] as const) {
      const result = await h.deliver('discord', delivery.body, delivery.headers);
      expect(result).toMatchObject({
        statusCode: 200,
        outcome,
        headers: { 'x-webhook-outcome': outcome },
        response: deferred,
        enqueued,
      });
      expect(toHttpResponse(result)).toEqual({
        statusCode: 200,
        headers: { 'content-type': 'application/json', 'x-webhook-outcome': outcome },
        body: '{"type":5}',
      });
    }
    expect(await h.drain()).toHaveLength(1);
  });

  it("answers a failed enqueue with the receiver's 500, never the provider's 200, so the event is retried", async () => {
    const h = harness();
    const delivery = command('1187301233440160002');
    const result = await h.deliver('discord', delivery.body, delivery.headers, {
      deps: {
        queue: {
          send: async () => {
            throw new Error('SQS is unavailable (injected)');
          },
        },
      },
    });
    expect(result).toMatchObject({ statusCode: 500, outcome: 'enqueue_failed', enqueued: 0 });
    expect(result.response).toBeUndefined();
    expect(result.headers).toBeUndefined();
    // The provider's retry is accepted and answered in its format.
    expect(await h.deliver('discord', delivery.body, delivery.headers)).toMatchObject({
      statusCode: 200,
      outcome: 'accepted',
      response: deferred,
    });
    expect(await h.drain()).toHaveLength(1);
  });

  it("answers a duplicate still in flight with the receiver's 503 and Retry-After", async () => {
    const h = harness();
    const delivery = command('1187301233440160003');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const sending = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const first = h.deliver('discord', delivery.body, delivery.headers, {
      deps: {
        queue: {
          send: async (body) => {
            entered();
            await gate;
            return h.queue.send(body);
          },
        },
      },
    });
    await sending;
    const second = await h.deliver('discord', delivery.body, delivery.headers, {
      deps: { settings: { ...h.settings, duplicateWaitMs: 100 } },
    });
    expect(second).toMatchObject({ statusCode: 503, outcome: 'in_flight' });
    expect(second.response).toBeUndefined();
    expect(Object.keys(second.headers ?? {})).toEqual(['retry-after']);
    release();
    expect(await first).toMatchObject({ statusCode: 200, outcome: 'accepted' });
    expect(await h.drain()).toHaveLength(1);
  });
});
