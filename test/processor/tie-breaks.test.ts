import { describe, expect, it } from 'vitest';
import { asaasPaymentRank } from '../../examples/payments/appliers/asaas.js';
import { pushRank } from '../../examples/payments/appliers/github.js';
import { shopifyOrderRank } from '../../examples/payments/appliers/shopify.js';
import { refundRank } from '../../examples/payments/appliers/stripe.js';
import { amountRank, composeRank, progressionRank } from '../../lambdas/processor/sdk/tie-break.js';

describe('composeRank: lexicographic, one plain number', () => {
  it('lets the first part decide and the next break its ties', () => {
    const rank = (a: number, b: number) =>
      composeRank([
        { value: a, size: 4 },
        { value: b, size: 10 },
      ]);
    expect(rank(2, 0)).toBeGreaterThan(rank(1, 9));
    expect(rank(1, 3)).toBeGreaterThan(rank(1, 2));
    expect(rank(0, 0)).toBe(0);
  });

  it('reads unknown progression values as 0 and refuses ranks past 2^53', () => {
    expect(progressionRank(['a', 'b'], 'b')).toEqual({ value: 2, size: 3 });
    expect(progressionRank(['a', 'b'], 'zzz').value).toBe(0);
    expect(progressionRank(['a', 'b'], 42).value).toBe(0);
    expect(() => composeRank([amountRank(1, 2 ** 40), amountRank(1, 2 ** 20)])).toThrow(/2\^53/);
  });
});

describe('each example handler breaks a same-second tie toward the later state', () => {
  it('Shopify: financial status first, then fulfillment, then topic', () => {
    const order = (financial: string, fulfillment: string | null = null) => ({
      financial_status: financial,
      fulfillment_status: fulfillment,
    });
    const rank = (topic: string, o: Record<string, unknown>) => shopifyOrderRank(topic, o);
    expect(rank('orders/updated', order('paid'))).toBeGreaterThan(rank('orders/updated', order('pending')));
    expect(rank('orders/updated', order('authorized'))).toBeGreaterThan(
      rank('orders/updated', order('pending')),
    );
    expect(rank('orders/updated', order('refunded'))).toBeGreaterThan(rank('orders/updated', order('paid')));
    // Voided ends an uncaptured authorization: above it, below any captured payment.
    expect(rank('orders/updated', order('voided'))).toBeGreaterThan(
      rank('orders/updated', order('authorized')),
    );
    expect(rank('orders/updated', order('paid'))).toBeGreaterThan(rank('orders/updated', order('voided')));
    expect(rank('orders/create', order('paid'))).toBeGreaterThan(rank('orders/updated', order('pending')));
    expect(rank('orders/updated', order('paid', 'fulfilled'))).toBeGreaterThan(
      rank('orders/updated', order('paid')),
    );
    expect(rank('orders/updated', order('paid'))).toBeGreaterThan(rank('orders/create', order('paid')));
  });

  it('Stripe charge.refunded: the larger refunded total', () => {
    expect(refundRank({ amount_refunded: 1500 })).toBeGreaterThan(refundRank({ amount_refunded: 500 }));
    expect(refundRank({})).toBe(0);
  });

  it('Asaas: the event rank, then the payment status', () => {
    expect(asaasPaymentRank('PAYMENT_UPDATED', { status: 'CONFIRMED' })).toBeGreaterThan(
      asaasPaymentRank('PAYMENT_UPDATED', { status: 'PENDING' }),
    );
    // The status decides first: a later state carried by a lower-ranked event type still wins.
    expect(asaasPaymentRank('PAYMENT_UPDATED', { status: 'RECEIVED' })).toBeGreaterThan(
      asaasPaymentRank('PAYMENT_CONFIRMED', { status: 'CONFIRMED' }),
    );
    expect(asaasPaymentRank('PAYMENT_DELETED', { status: 'PENDING' })).toBeGreaterThan(
      asaasPaymentRank('PAYMENT_UPDATED', { status: 'PENDING' }),
    );
  });

  it("GitHub push: one that follows the row's head outranks its writer in the same second", () => {
    const row = { headSha: 'aaa', lastEventCreated: 100, lastEventRank: 0 };
    expect(pushRank(row, 100, 'aaa')).toBe(1);
    expect(pushRank({ ...row, lastEventRank: 3 }, 100, 'aaa')).toBe(4);
    expect(pushRank(row, 100, 'bbb')).toBe(0);
    expect(pushRank(row, 101, 'aaa')).toBe(0);
    expect(pushRank(undefined, 100, 'aaa')).toBe(0);
  });
});
