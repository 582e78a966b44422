/**
 * Each provider module's development samples (`dev.sample` + `dev.sign`), as `npm run send`, the
 * local stack's tests and the benchmarks use them: signed exactly as the providers' official
 * libraries sign (test/helpers/signing.ts stays the independent cross-check), accepted by the
 * module's own `verify`, and readable by its `extract`.
 */
import { sign as githubSign } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { PROVIDER_LIST, PROVIDERS, requireProvider } from '../../lambdas/providers/index.js';
import { sampleDelivery } from '../../local/samples.js';

const NOW = 1_767_225_600;
/** Where the samples are posted: what URL-signing providers (Square) sign. */
const URL_SIGNED = 'https://hooks.example.com/webhooks/x';
const stripe = new Stripe('sk_test_signing_only');
const cases = PROVIDER_LIST.flatMap(({ id, dev }) => dev.sampleTypes.map((type) => [id, type] as const));

describe('dev samples', () => {
  it.each(cases)('%s %s verifies and extracts with the module itself', (id, type) => {
    const provider = requireProvider(id);
    const delivery = sampleDelivery(id, {
      type,
      secret: provider.secret.devSecret,
      nowSeconds: NOW,
      eventId: 'evt_fixed',
      url: URL_SIGNED,
    });
    const request = { headers: delivery.headers, rawBody: Buffer.from(delivery.body), url: URL_SIGNED };
    expect(provider.verify(request, { secrets: [provider.secret.devSecret], nowSeconds: NOW })).toEqual({
      ok: true,
    });
    const handshake = provider.handshake?.(request);
    if (handshake !== undefined) {
      // A handshake sample is answered, never extracted as an event.
      expect(handshake).toMatchObject({ name: type, statusCode: 200 });
    } else {
      const extracted = provider.extract(request);
      // Twilio's id is derived from the message and its status: the fixed id names the message.
      const eventId = id === 'twilio' ? `evt_fixed:${type.split('.')[1]}` : 'evt_fixed';
      expect(extracted).toMatchObject({ ok: true, event: { eventId, eventType: type } });
    }
    expect(provider.verify(request, { secrets: ['another-secret'], nowSeconds: NOW })).toMatchObject({
      ok: false,
    });
  });

  it('signs Stripe deliveries as stripe-node does', () => {
    const body = '{"id":"evt_1","type":"customer.created"}';
    expect(PROVIDERS.stripe.dev.sign(body, 'whsec_x', NOW)).toEqual({
      'stripe-signature': stripe.webhooks.generateTestHeaderString({
        payload: body,
        secret: 'whsec_x',
        timestamp: NOW,
      }),
    });
  });

  it('signs GitHub deliveries as @octokit/webhooks-methods does', async () => {
    const body = '{"zen":"Design for failure."}\n';
    expect(PROVIDERS.github.dev.sign(body, 'gh-secret', NOW)).toEqual({
      'x-hub-signature-256': await githubSign('gh-secret', body),
    });
  });

  it('signs Standard Webhooks deliveries as the reference library does, with the sample id', () => {
    const body = '{"type":"invoice.paid"}';
    const secret = PROVIDERS.standard.secret.devSecret;
    const headers = PROVIDERS.standard.dev.sign(body, secret, NOW, { 'webhook-id': 'msg_1' });
    expect(headers).toEqual({
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(NOW),
      'webhook-signature': new Webhook(secret).sign('msg_1', new Date(NOW * 1000), body),
    });
  });

  it('grows only the sized samples to an exact size', () => {
    const sized = PROVIDER_LIST.flatMap(({ id, dev }) => dev.sizedTypes.map((type) => `${id} ${type}`));
    expect(sized).toEqual(['github push']);
    const { body } = sampleDelivery('github', { type: 'push', secret: 's', bytes: 50_000 });
    expect(Buffer.byteLength(body)).toBe(50_000);
  });
});
