/**
 * `signedDelivery` signs as the provider does: what it builds passes the provider module's own
 * `verify` (and a wrong secret does not), and `processingEvent` reads it as the receiver and the
 * processor would.
 */
import { describe, expect, it, vi } from 'vitest';
import { BUILT_IN_PROVIDERS, requireProvider } from '../../lambdas/providers/index.js';
import {
  DeliveryRefusedError,
  processingEvent,
  signedDelivery,
  TEST_PUBLIC_BASE_URL,
} from '../../lambdas/testing/index.js';

const verifies = (
  provider: string,
  delivery: { headers: Readonly<Record<string, string>>; body: string; url: string },
  secret: string,
) =>
  requireProvider(provider).verify(
    { headers: delivery.headers, rawBody: Buffer.from(delivery.body), url: delivery.url },
    { secrets: [secret], nowSeconds: Math.floor(Date.now() / 1000) },
  );

describe('signedDelivery', () => {
  it.each(BUILT_IN_PROVIDERS.map((provider) => provider.id))(
    "%s: the sample passes the provider's own verify with its development secret",
    (provider) => {
      const delivery = signedDelivery(provider);
      expect(delivery.url).toBe(`${TEST_PUBLIC_BASE_URL}/webhooks/${provider}`);
      expect(verifies(provider, delivery, delivery.verifySecret)).toEqual({ ok: true });
      expect(verifies(provider, delivery, 'not-the-secret').ok).toBe(false);
    },
  );

  it('signs a body of your own, exactly, with a secret of your own (Stripe)', () => {
    const body = {
      id: 'evt_own',
      object: 'event',
      type: 'invoice.paid',
      created: 1_700_000_000,
      data: { object: { id: 'in_1' } },
    };
    const delivery = signedDelivery('stripe', { body, secret: 'whsec_mine' });
    expect(delivery.body).toBe(JSON.stringify(body));
    expect(verifies('stripe', delivery, 'whsec_mine')).toEqual({ ok: true });
    expect(verifies('stripe', delivery, 'whsec_local_development_secret')).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('signs a GitHub body with the event type in its header', async () => {
    const body = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1, repository: { id: 42 } });
    const delivery = signedDelivery('github', {
      body,
      type: 'ping',
      secret: 'gh-secret',
      eventId: 'delivery-1',
    });
    expect(delivery.body).toBe(body);
    expect(delivery.headers['x-github-event']).toBe('ping');
    expect(verifies('github', delivery, 'gh-secret')).toEqual({ ok: true });
    expect(await processingEvent('github', delivery)).toMatchObject({
      eventType: 'ping',
      eventId: 'delivery-1',
      payload: JSON.parse(body),
    });
  });

  it('signs a Shopify body with the topic in its header', async () => {
    const body = {
      id: 820982911946154500,
      email: 'jon@example.com',
      updated_at: '2024-01-01T00:00:00-05:00',
    };
    const delivery = signedDelivery('shopify', { body, type: 'orders/updated', secret: 'shpss_mine' });
    expect(verifies('shopify', delivery, 'shpss_mine')).toEqual({ ok: true });
    const event = await processingEvent('shopify', delivery);
    expect(event).toMatchObject({ provider: 'shopify', eventType: 'orders/updated', payload: body });
  });
});

describe('processingEvent', () => {
  it.each(BUILT_IN_PROVIDERS.map((provider) => provider.id))(
    '%s: the sample goes through the receiver and readEvent',
    async (provider) => {
      const delivery = signedDelivery(provider);
      const event = await processingEvent(provider, delivery);
      expect(event.provider).toBe(provider);
      expect(event.key.startsWith(`${provider}:`)).toBe(true);
      expect(typeof event.payload).toBe('object');
      // Signature headers never reach the event.
      for (const header of requireProvider(provider).headers.secret)
        expect(event.headers).not.toHaveProperty(header);
    },
  );

  it('uses the key rules the construct would set', async () => {
    const body = {
      id: 'evt_1',
      object: 'event',
      type: 'invoice.paid',
      created: 1_700_000_000,
      data: { object: { id: 'in_1', object: 'invoice' } },
    };
    expect((await processingEvent('stripe', body)).key).toBe('stripe:platform:evt_1');
    expect((await processingEvent('stripe', body, { keyRules: { default: 'composite' } })).key).toBe(
      'stripe:platform:in_1:invoice.paid',
    );
  });

  it('refuses what the receiver refuses, with its answer', async () => {
    const delivery = signedDelivery('stripe');
    const tampered = { ...delivery, body: delivery.body.replace('"livemode"', '"livemode" ') };
    const refused = await processingEvent('stripe', tampered).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DeliveryRefusedError);
    expect((refused as DeliveryRefusedError).result).toMatchObject({
      statusCode: 401,
      reason: 'signature_mismatch',
    });
  });
});

describe('configured HMAC providers', () => {
  it('signs and reads them when WEBHOOK_HMAC_PROVIDERS is set before the entry point loads', async () => {
    vi.stubEnv('WEBHOOK_HMAC_PROVIDERS', '@examples/providers/onfido.json,@examples/providers/partner.json');
    vi.resetModules();
    try {
      const testing = await import('../../lambdas/testing/index.js');
      const providers = await import('../../lambdas/providers/index.js');
      for (const provider of ['onfido', 'partner']) {
        const delivery = testing.signedDelivery(provider, { secret: `${provider}-secret` });
        expect(
          providers
            .requireProvider(provider)
            .verify(
              { headers: delivery.headers, rawBody: Buffer.from(delivery.body), url: delivery.url },
              { secrets: [`${provider}-secret`], nowSeconds: Math.floor(Date.now() / 1000) },
            ),
        ).toEqual({ ok: true });
        const event = await testing.processingEvent(provider, delivery);
        expect(event).toMatchObject({ provider, payload: JSON.parse(delivery.body) });
      }
      // Onfido's key rule (composite): the check's id and the action.
      const onfido = await testing.processingEvent('onfido', {
        payload: {
          resource_type: 'check',
          action: 'check.completed',
          object: { id: 'chk_1', status: 'complete' },
        },
      });
      expect(onfido).toMatchObject({
        key: 'onfido:default:chk_1:check.completed',
        eventType: 'check.completed',
      });
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  });
});
