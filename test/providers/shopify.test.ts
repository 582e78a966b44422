import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { shopifyObjectKind, shopifyProvider } from '../../lambdas/providers/shopify.js';
import { fixture, flipByte, GARBAGE_BODIES, GARBAGE_HEADER_VALUES, request } from './support.js';

const SECRET = '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';
const OLD_SECRET = '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';
const NOW = 1_718_225_110;
const body = fixture('shopify', 'orders-create.json');

/** Shopify's documented rule: base64 of HMAC-SHA256 over the raw body, keyed with the client secret. */
function shopifyHmac(payload: Buffer, secret = SECRET): string {
  return createHmac('sha256', secret).update(payload).digest('base64');
}

function verify(signature: string | undefined, payload = body, secrets: readonly string[] = [SECRET]) {
  return shopifyProvider.verify(request({ 'x-shopify-hmac-sha256': signature }, payload), {
    secrets,
    nowSeconds: NOW,
  });
}

function deliveryHeaders(
  overrides: Record<string, string | undefined> = {},
): Record<string, string | undefined> {
  return {
    'content-type': 'application/json',
    'x-shopify-api-version': '2024-07',
    'x-shopify-event-id': '98880550-7158-44d4-b7cd-2c97c8a091b5',
    'x-shopify-hmac-sha256': shopifyHmac(body),
    'x-shopify-shop-domain': 'Example-Coffee.myshopify.com',
    'x-shopify-topic': 'orders/create',
    'x-shopify-triggered-at': '2024-06-12T20:45:03.184Z',
    'x-shopify-webhook-id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
    ...overrides,
  };
}

describe('shopifyProvider.verify', () => {
  it('accepts the base64 HMAC of the raw body computed by the documented rule', () => {
    expect(verify(shopifyHmac(body))).toEqual({ ok: true });
  });

  it('rejects a body with one byte changed', () => {
    const signature = shopifyHmac(body);
    for (const index of [0, 10, body.length >> 1, body.length - 1]) {
      expect(verify(signature, flipByte(body, index))).toEqual({ ok: false, reason: 'signature_mismatch' });
    }
  });

  it('rejects a signature with one byte of the digest changed', () => {
    const digest = Buffer.from(shopifyHmac(body), 'base64');
    for (const index of [0, 15, 31]) {
      expect(verify(flipByte(digest, index).toString('base64'))).toEqual({
        ok: false,
        reason: 'signature_mismatch',
      });
    }
  });

  it('rejects the digest in hex, in URL-safe base64 without padding, or truncated', () => {
    const digest = createHmac('sha256', SECRET).update(body).digest();
    expect(verify(digest.toString('hex'))).toEqual({ ok: false, reason: 'signature_mismatch' });
    expect(verify(`${digest.toString('base64url')}-_`)).toEqual({ ok: false, reason: 'signature_mismatch' });
    expect(verify(digest.subarray(0, 31).toString('base64'))).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('rejects a re-serialized body, which is no longer the signed bytes', () => {
    const reserialized = Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8'))));
    expect(verify(shopifyHmac(body), reserialized)).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('accepts a delivery signed with the second of two configured secrets during a rotation', () => {
    const signature = shopifyHmac(body, OLD_SECRET);
    expect(verify(signature, body, [SECRET, OLD_SECRET])).toEqual({ ok: true });
    expect(verify(signature, body, [SECRET])).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('returns missing_signature when the header is absent or blank', () => {
    expect(verify(undefined)).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verify(' ')).toEqual({ ok: false, reason: 'missing_signature' });
  });

  it('returns no_secret_configured when no usable secret is configured', () => {
    expect(verify(shopifyHmac(body), body, [])).toEqual({ ok: false, reason: 'no_secret_configured' });
  });

  it('never throws on garbage headers or bodies', () => {
    for (const header of GARBAGE_HEADER_VALUES) {
      for (const payload of GARBAGE_BODIES) {
        expect(verify(header, payload).ok).toBe(false);
      }
    }
  });
});

describe('shopifyProvider.extract', () => {
  it('reads an orders/create delivery, keyed on the event id', () => {
    expect(shopifyProvider.extract(request(deliveryHeaders(), body))).toEqual({
      ok: true,
      event: {
        eventId: '98880550-7158-44d4-b7cd-2c97c8a091b5',
        eventType: 'orders/create',
        account: 'example-coffee.myshopify.com',
        objectId: '5836928270390',
        objectKind: 'order',
        occurredAt: Date.parse('2024-06-12T20:45:03Z') / 1000,
      },
    });
  });

  it('falls back to the webhook id when the event id header is absent', () => {
    const headers = deliveryHeaders({ 'x-shopify-event-id': undefined });
    expect(shopifyProvider.extract(request(headers, body))).toMatchObject({
      ok: true,
      event: { eventId: 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043' },
    });
  });

  it('returns missing_event_id when neither id header is present', () => {
    const headers = deliveryHeaders({ 'x-shopify-event-id': undefined, 'x-shopify-webhook-id': '' });
    expect(shopifyProvider.extract(request(headers, body))).toEqual({
      ok: false,
      reason: 'missing_event_id',
    });
  });

  it('returns missing_event_type without a topic', () => {
    const headers = deliveryHeaders({ 'x-shopify-topic': undefined });
    expect(shopifyProvider.extract(request(headers, body))).toEqual({
      ok: false,
      reason: 'missing_event_type',
    });
  });

  it('scopes to default without a shop domain', () => {
    const headers = deliveryHeaders({ 'x-shopify-shop-domain': undefined });
    expect(shopifyProvider.extract(request(headers, body))).toMatchObject({
      ok: true,
      event: { account: 'default' },
    });
  });

  it('reads a string id, and leaves out an id or updated_at it cannot trust', () => {
    const headers = deliveryHeaders({ 'x-shopify-topic': 'products/update' });
    expect(
      shopifyProvider.extract(request(headers, '{"id":"gid-1","updated_at":"2024-02-30T10:00:00Z"}')),
    ).toEqual({
      ok: true,
      event: {
        eventId: '98880550-7158-44d4-b7cd-2c97c8a091b5',
        eventType: 'products/update',
        account: 'example-coffee.myshopify.com',
        objectId: 'gid-1',
        objectKind: 'product',
      },
    });
    expect(
      shopifyProvider.extract(request(headers, '{"id":12345678901234567890,"updated_at":17}')),
    ).toMatchObject({
      ok: true,
      event: { objectId: undefined, occurredAt: undefined },
    });
  });

  it('returns invalid_json for a body that is not a JSON object', () => {
    for (const payload of ['', 'null', '[{"id":1}]', '5836928270390']) {
      expect(shopifyProvider.extract(request(deliveryHeaders(), payload))).toMatchObject({
        ok: false,
        reason: 'invalid_json',
      });
    }
  });

  it('never throws on garbage bodies', () => {
    for (const payload of GARBAGE_BODIES) {
      expect(typeof shopifyProvider.extract(request(deliveryHeaders(), payload)).ok).toBe('boolean');
    }
  });
});

describe('shopifyObjectKind', () => {
  it.each([
    ['orders/create', 'order'],
    ['products/update', 'product'],
    ['customers/create', 'customer'],
    ['inventory_levels/update', 'inventory_level'],
    ['app/uninstalled', 'app'],
    ['shop/update', 'shop'],
  ])('names the resource of %s as %s', (topic, kind) => {
    expect(shopifyObjectKind(topic)).toBe(kind);
  });

  it('names no resource for a topic without a slash', () => {
    expect(shopifyObjectKind('orders')).toBeUndefined();
    expect(shopifyObjectKind('/create')).toBeUndefined();
  });
});

describe('shopifyProvider.defaults', () => {
  it('keeps claims 3 days and keys on the event id', () => {
    expect(shopifyProvider.id).toBe('shopify');
    expect(shopifyProvider.defaults).toEqual({
      claimTtlSeconds: 259_200,
      keyRules: { default: { kind: 'event-id' } },
    });
  });
});
