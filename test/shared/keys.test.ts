import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PROVIDERS } from '../../lambdas/providers/index.js';
import type { ProviderEvent } from '../../lambdas/providers/types.js';
import { buildIdempotencyKey, resolveKeyRule } from '../../lambdas/shared/keys.js';

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
  });

  it("uses Stripe's composite rule for payment_intent.* and the event id elsewhere by default", () => {
    const rules = PROVIDERS.stripe.defaults.keyRules;
    expect(resolveKeyRule(rules, 'payment_intent.processing')).toEqual({ kind: 'composite' });
    expect(resolveKeyRule(rules, 'charge.refunded')).toEqual({ kind: 'event-id' });
  });
});
