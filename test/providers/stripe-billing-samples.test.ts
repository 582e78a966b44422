/**
 * Stripe's billing samples (`webhooks send stripe invoice.paid`, ...): the fields a subscription app
 * reads, in the shapes of Stripe's API reference, accepted by stripe-node's own `constructEvent`, and
 * keyed by event id (the default rule: only `payment_intent.*` is keyed by its object).
 */
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { requireProvider } from '../../lambdas/providers/index.js';
import { buildIdempotencyKey, resolveKeyRule } from '../../lambdas/shared/keys.js';
import { sampleDelivery } from '../../local/samples.js';

const NOW = 1_767_225_600;
const SECRET = 'whsec_billing_samples';
const stripe = new Stripe('sk_test_signing_only');
const provider = requireProvider('stripe');

const BILLING = [
  'invoice.paid',
  'invoice.payment_failed',
  'customer.subscription.updated',
  'customer.subscription.deleted',
] as const;

function delivered(type: string, options: { eventId?: string; objectId?: string } = {}) {
  const delivery = sampleDelivery('stripe', { type, secret: SECRET, nowSeconds: NOW, ...options });
  const event = stripe.webhooks.constructEvent(
    delivery.body,
    delivery.headers['stripe-signature'] ?? '',
    SECRET,
    // The sample is signed at NOW, in the past: stripe-node's tolerance is measured from its clock.
    Number.MAX_SAFE_INTEGER,
  );
  return { delivery, event, object: event.data.object as unknown as Record<string, unknown> };
}

describe('Stripe billing samples', () => {
  it('are listed after the payment samples, the default staying payment_intent.succeeded', () => {
    expect(provider.dev.sampleTypes[0]).toBe('payment_intent.succeeded');
    expect(provider.dev.sampleTypes).toEqual(expect.arrayContaining([...BILLING]));
  });

  it.each(BILLING)('%s is accepted by stripe-node and keyed by its event id', (type) => {
    const { delivery, event } = delivered(type, { eventId: 'evt_billing_1' });
    expect(event).toMatchObject({ id: 'evt_billing_1', object: 'event', type, created: NOW });
    const extracted = provider.extract({ headers: delivery.headers, rawBody: Buffer.from(delivery.body) });
    if (!extracted.ok) throw new Error(extracted.reason);
    const rule = resolveKeyRule(provider.defaults.keyRules, type);
    expect(rule).toEqual({ kind: 'event-id' });
    expect(buildIdempotencyKey('stripe', extracted.event, rule)).toEqual({
      ok: true,
      rule: 'event-id',
      key: 'stripe:platform:evt_billing_1',
    });
  });

  it('invoice.paid: a paid subscription invoice, with its customer, subscription, amount and period', () => {
    const { object } = delivered('invoice.paid', { objectId: 'in_fixed' });
    expect(object).toMatchObject({
      id: 'in_fixed',
      object: 'invoice',
      customer: expect.stringMatching(/^cus_/),
      subscription: expect.stringMatching(/^sub_/),
      status: 'paid',
      paid: true,
      amount_due: 2000,
      amount_paid: 2000,
      amount_remaining: 0,
      currency: 'usd',
      billing_reason: 'subscription_cycle',
      period_end: NOW,
    });
    expect(object.period_start).toBeLessThan(NOW);
    const lines = object.lines as { data: Array<Record<string, unknown>> };
    expect(lines.data[0]).toMatchObject({
      object: 'line_item',
      subscription: object.subscription,
      period: { start: NOW, end: expect.any(Number) },
    });
  });

  it('invoice.payment_failed: open, nothing paid, the next attempt scheduled', () => {
    const { object } = delivered('invoice.payment_failed');
    expect(object).toMatchObject({
      object: 'invoice',
      status: 'open',
      paid: false,
      amount_paid: 0,
      amount_remaining: 2000,
      attempt_count: 1,
    });
    expect(object.next_payment_attempt).toBeGreaterThan(NOW);
  });

  it('customer.subscription.updated: active, set to cancel at the period end, with what changed', () => {
    const { object, event } = delivered('customer.subscription.updated', { objectId: 'sub_fixed' });
    expect(object).toMatchObject({
      id: 'sub_fixed',
      object: 'subscription',
      customer: expect.stringMatching(/^cus_/),
      status: 'active',
      cancel_at_period_end: true,
      items: {
        object: 'list',
        data: [expect.objectContaining({ object: 'subscription_item', quantity: 1 })],
      },
    });
    expect(object.current_period_end).toBeGreaterThan(NOW);
    expect(event.data.previous_attributes).toEqual(expect.objectContaining({ cancel_at_period_end: false }));
  });

  it('customer.subscription.deleted: canceled and ended', () => {
    const { object } = delivered('customer.subscription.deleted');
    expect(object).toMatchObject({
      object: 'subscription',
      status: 'canceled',
      cancel_at_period_end: false,
      ended_at: NOW,
      items: { data: [expect.objectContaining({ price: expect.objectContaining({ unit_amount: 2000 }) })] },
    });
  });
});
