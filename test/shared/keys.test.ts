import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PROVIDERS } from '../../lambdas/providers/index.js';
import type { ProviderEvent } from '../../lambdas/providers/types.js';
import { archiveObjectKey } from '../../lambdas/shared/archive-layout.js';
import { buildIdempotencyKey, MAX_KEY_BYTES, resolveKeyRule } from '../../lambdas/shared/keys.js';

const event: ProviderEvent = {
  eventId: 'evt_456',
  eventType: 'payment_intent.succeeded',
  account: 'acct_123',
  objectId: 'pi_1',
  objectKind: 'payment_intent',
};

describe('idempotency keys', () => {
  it('builds the event-id key as provider:account:event id', () => {
    expect(buildIdempotencyKey('stripe', event, { kind: 'event-id' })).toEqual({
      ok: true,
      rule: 'event-id',
      key: 'stripe:acct_123:evt_456',
    });
  });

  it('builds the composite key as provider:account:object id:event type', () => {
    expect(buildIdempotencyKey('stripe', event, { kind: 'composite' })).toMatchObject({
      key: 'stripe:acct_123:pi_1:payment_intent.succeeded',
    });
  });

  it('builds the business-object key as provider:account:object kind:object id', () => {
    const order: ProviderEvent = {
      eventId: 'w1',
      eventType: 'orders/create',
      account: 'shop.myshopify.com',
      objectId: '820982911946154508',
      objectKind: 'order',
    };
    expect(buildIdempotencyKey('shopify', order, { kind: 'business-object' })).toMatchObject({
      key: 'shopify:shop.myshopify.com:order:820982911946154508',
    });
    // An event that names its object but not its kind: the kind part reads `object`.
    const { objectKind: _k, ...kindless } = order;
    expect(buildIdempotencyKey('shopify', kindless, { kind: 'business-object' })).toMatchObject({
      key: 'shopify:shop.myshopify.com:object:820982911946154508',
    });
  });

  it('refuses object-based rules when the event names no object', () => {
    const { objectId: _o, ...noObject } = event;
    expect(buildIdempotencyKey('stripe', noObject, { kind: 'composite' })).toEqual({
      ok: false,
      reason: 'missing_object_id',
      rule: 'composite',
    });
    expect(buildIdempotencyKey('stripe', noObject, { kind: 'business-object' })).toMatchObject({ ok: false });
  });

  it('percent-encodes each part so separators inside ids cannot collide', () => {
    const a = buildIdempotencyKey('asaas', { ...event, account: 'a:b', eventId: 'c' }, { kind: 'event-id' });
    const b = buildIdempotencyKey('asaas', { ...event, account: 'a', eventId: 'b:c' }, { kind: 'event-id' });
    expect(a.ok && b.ok && a.key !== b.key).toBe(true);
    expect(
      buildIdempotencyKey('asaas', { ...event, eventId: 'evt_1&2' }, { kind: 'event-id' }),
    ).toMatchObject({
      key: 'asaas:acct_123:evt_1%262',
    });
  });

  it('gives distinct facts distinct keys (property)', () => {
    const part = fc.string({ minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(part, part, part, part, (account1, id1, account2, id2) => {
        fc.pre(account1 !== account2 || id1 !== id2);
        const k1 = buildIdempotencyKey(
          'stripe',
          { ...event, account: account1, eventId: id1 },
          { kind: 'event-id' },
        );
        const k2 = buildIdempotencyKey(
          'stripe',
          { ...event, account: account2, eventId: id2 },
          { kind: 'event-id' },
        );
        return k1.ok && k2.ok && k1.key !== k2.key;
      }),
      { numRuns: 300 },
    );
  });

  describe('the key length limit', () => {
    const keyOf = (eventId: string, provider = 'github', account = 'acct_1') =>
      buildIdempotencyKey(provider, { ...event, account, eventId }, { kind: 'event-id' });
    const prefix = 'github:acct_1:';

    it(`accepts a key of exactly ${MAX_KEY_BYTES} bytes and refuses one byte more, with its length`, () => {
      const longest = 'a'.repeat(MAX_KEY_BYTES - prefix.length);
      expect(keyOf(longest)).toMatchObject({ ok: true, key: `${prefix}${longest}` });
      expect(keyOf(`${longest}a`)).toEqual({
        ok: false,
        reason: 'key_too_long',
        rule: 'event-id',
        bytes: MAX_KEY_BYTES + 1,
      });
    });

    it('counts the key as built: an id of characters that percent-encode grows threefold or more', () => {
      // 167 colons are 501 bytes once encoded (`%3A`); 57 four-byte emoji are 57 x 12 = 684.
      expect(keyOf(':'.repeat(167))).toMatchObject({ reason: 'key_too_long', bytes: prefix.length + 501 });
      expect(keyOf('😀'.repeat(57))).toMatchObject({ reason: 'key_too_long', bytes: prefix.length + 684 });
      // The account counts as much as the id (Shopify's shop domain is an unsigned header).
      expect(keyOf('w1', 'shopify', 's'.repeat(MAX_KEY_BYTES))).toMatchObject({ reason: 'key_too_long' });
    });

    it('answers the same for every delivery of an event, and never shortens a key (property)', () => {
      fc.assert(
        fc.property(fc.string({ maxLength: 700 }), (id) => {
          const first = keyOf(id);
          expect(keyOf(id)).toEqual(first);
          if (first.ok) expect(first.key).toBe(`${prefix}${encodeURIComponent(id)}`);
          return first.ok === Buffer.byteLength(`${prefix}${encodeURIComponent(id)}`) <= MAX_KEY_BYTES;
        }),
        { numRuns: 300 },
      );
    });

    it('keeps every key it accepts within DynamoDB, and its archive object name within S3 (property)', () => {
      // Provider ids as long as a configured provider's may be (32); ids of any characters, escapes included.
      const providerId = fc.stringMatching(/^[a-z][a-z0-9]{1,31}$/);
      const id = fc.string({ unit: 'binary', maxLength: 600 });
      fc.assert(
        fc.property(providerId, id, id, (provider, account, eventId) => {
          const result = keyOf(eventId, provider, account);
          if (!result.ok) return true;
          return (
            Buffer.byteLength(result.key) <= 2048 &&
            Buffer.byteLength(archiveObjectKey(provider, '', result.key)) <= 1024
          );
        }),
        { numRuns: 500 },
      );
      // The worst case by hand: 32-character provider, a key of escapes only (each grows to 5 bytes).
      const worst = keyOf('\u0001'.repeat(159), 'p'.repeat(32), '');
      expect(worst).toMatchObject({ ok: true });
      if (worst.ok) expect(Buffer.byteLength(archiveObjectKey('p'.repeat(32), '', worst.key))).toBe(891);
    });

    it('refuses a key within the limit whose archive object name S3 could not hold (a very long provider id)', () => {
      // 507 bytes of key, but the provider id is in the name twice: 1,037 bytes.
      const provider = 'p'.repeat(500);
      expect(keyOf('eeeee', provider, '')).toEqual({
        ok: false,
        reason: 'key_too_long',
        rule: 'event-id',
        bytes: 507,
      });
    });

    it('accepts an archive object name of exactly 1,024 bytes and refuses one byte more', () => {
      // The provider id is in the name twice: a key well within its own limit reaches S3's.
      const provider = 'p'.repeat(490);
      const room = 1024 - Buffer.byteLength(archiveObjectKey(provider, '', `${provider}::`));
      const fitting = keyOf('e'.repeat(room), provider, '');
      expect(fitting).toMatchObject({ ok: true });
      if (fitting.ok) expect(Buffer.byteLength(archiveObjectKey(provider, '', fitting.key))).toBe(1024);
      expect(keyOf('e'.repeat(room + 1), provider, '')).toMatchObject({ ok: false, reason: 'key_too_long' });
    });
  });

  it('resolves an exact event type first, then the longest prefix pattern, then the default', () => {
    const rules = {
      default: { kind: 'event-id' },
      byEventType: {
        'payment_intent.*': { kind: 'composite' },
        'payment_intent.payment_failed': { kind: 'event-id' },
        'payment_*': { kind: 'business-object' },
      },
    } as const;
    expect(resolveKeyRule(rules, 'payment_intent.succeeded')).toEqual({ kind: 'composite' });
    expect(resolveKeyRule(rules, 'payment_intent.payment_failed')).toEqual({ kind: 'event-id' });
    expect(resolveKeyRule(rules, 'payment_method.attached')).toEqual({ kind: 'business-object' });
    expect(resolveKeyRule(rules, 'charge.refunded')).toEqual({ kind: 'event-id' });
    expect(resolveKeyRule(rules, 'constructor')).toEqual({ kind: 'event-id' });
    // A type without `*` matches only itself, never as a prefix of a longer type.
    expect(resolveKeyRule(rules, 'payment_intent.payment_failed.v2')).toEqual({ kind: 'composite' });
    expect(
      resolveKeyRule(
        { default: { kind: 'event-id' }, byEventType: { 'charge.succeeded': { kind: 'composite' } } },
        'charge.succeeded_later',
      ),
    ).toEqual({ kind: 'event-id' });
  });

  it('takes the longest matching prefix whatever order the patterns are written in', () => {
    const shortFirst = {
      default: { kind: 'event-id' },
      byEventType: { 'payment_*': { kind: 'business-object' }, 'payment_intent.*': { kind: 'composite' } },
    } as const;
    const longFirst = {
      default: { kind: 'event-id' },
      byEventType: { 'payment_intent.*': { kind: 'composite' }, 'payment_*': { kind: 'business-object' } },
    } as const;
    for (const rules of [shortFirst, longFirst]) {
      expect(resolveKeyRule(rules, 'payment_intent.created')).toEqual({ kind: 'composite' });
      expect(resolveKeyRule(rules, 'payment_method.attached')).toEqual({ kind: 'business-object' });
    }
  });

  it("uses Stripe's composite rule for payment_intent.* and the event id elsewhere by default", () => {
    const rules = PROVIDERS.stripe.defaults.keyRules;
    expect(resolveKeyRule(rules, 'payment_intent.processing')).toEqual({ kind: 'composite' });
    expect(resolveKeyRule(rules, 'charge.refunded')).toEqual({ kind: 'event-id' });
  });
});
