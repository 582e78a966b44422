/**
 * Two events about one object in the same second, in both arrival orders, through the receiver and
 * the processor on DynamoDB Local and the SQS emulator: the later state wins either way.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { TableRef } from '../../lambdas/processor/types.js';
import {
  asaasPaymentEvent,
  githubPushEvent,
  shopifyOrder,
  stripeChargeRefundedEvent,
} from '../helpers/events.js';
import { createPipelineHarness, type PipelineHarness } from '../helpers/pipeline-harness.js';
import { asaasHeaders, githubHeaders, shopifyHeaders, stripeHeaders } from '../helpers/signing.js';

let h: PipelineHarness;
afterEach(async () => {
  await h?.stop();
});

interface Delivery {
  readonly provider: string;
  readonly body: string;
  readonly headers: Record<string, string>;
}

/** Delivers and processes each in turn; returns the row they wrote (a stale one writes none). */
async function applyInOrder(deliveries: readonly Delivery[]) {
  const refs = new Set<string>();
  for (const d of deliveries) {
    const result = await h.receiver.deliver(d.provider, d.body, d.headers);
    expect(result).toMatchObject({ statusCode: 200, outcome: 'accepted' });
    await h.drainQueue();
    for (const ref of (await h.receiver.claim(result.key ?? ''))?.writtenRows ?? []) refs.add(ref);
  }
  expect(refs.size).toBe(1);
  const [ref = ''] = refs;
  const colon = ref.indexOf(':');
  return { row: await h.row(ref.slice(0, colon) as TableRef, ref.slice(colon + 1)) };
}

const bothOrders = <T>(a: T, b: T): Array<[string, readonly T[]]> => [
  ['in order', [a, b]],
  ['reversed', [b, a]],
];

describe('same-second tie-breaks', () => {
  describe('Shopify orders/updated: pending then paid in one updated_at second ends paid', () => {
    it.each(bothOrders('pending', 'paid'))('%s', async (_label, statuses) => {
      h = await createPipelineHarness();
      const base = shopifyOrder();
      const deliveries = statuses.map((financial_status) => {
        const body = JSON.stringify({ ...base, financial_status });
        return { provider: 'shopify', body, headers: shopifyHeaders(body, { topic: 'orders/updated' }) };
      });
      const { row } = await applyInOrder(deliveries);
      expect(row).toMatchObject({ financialStatus: 'paid', orderUpdatedAt: base.updated_at });
    });
  });

  describe('Stripe charge.refunded: two partial refunds in one second end at the larger total', () => {
    it.each(bothOrders(500, 1500))('%s', async (_label, amounts) => {
      h = await createPipelineHarness();
      const intentId = `pi_tie_${randomBytes(4).toString('hex')}`;
      const created = Math.floor(Date.now() / 1000);
      const deliveries = amounts.map((amountRefunded) => {
        const body = JSON.stringify(stripeChargeRefundedEvent({ intentId, amountRefunded, created }));
        return { provider: 'stripe', body, headers: stripeHeaders(body) };
      });
      const { row } = await applyInOrder(deliveries);
      expect(row).toMatchObject({ amountRefunded: 1500 });
    });
  });

  describe('Asaas PAYMENT_UPDATED: two in one second end at the further-along status', () => {
    it.each(bothOrders('PENDING', 'CONFIRMED'))('%s', async (_label, statuses) => {
      h = await createPipelineHarness();
      const base = asaasPaymentEvent();
      const deliveries = statuses.map((status) => {
        const event = {
          ...base,
          id: `evt_${randomBytes(8).toString('hex')}`,
          event: 'PAYMENT_UPDATED',
          payment: { ...base.payment, status },
        };
        return { provider: 'asaas', body: JSON.stringify(event), headers: asaasHeaders() };
      });
      const { row } = await applyInOrder(deliveries);
      expect(row).toMatchObject({ status: 'CONFIRMED' });
    });
  });

  describe('GitHub push: two chained pushes with one pushed_at end at the later head', () => {
    it.each([
      ['in order', [0, 1]],
      ['reversed', [1, 0]],
    ] as const)('%s', async (_label, order) => {
      h = await createPipelineHarness();
      const first = githubPushEvent();
      const pushedAt = Math.floor(Date.now() / 1000);
      const pushes = [
        { ...first, repository: { ...first.repository, pushed_at: pushedAt } },
        {
          ...first,
          before: first.after,
          after: randomBytes(20).toString('hex'),
          repository: { ...first.repository, pushed_at: pushedAt },
        },
      ];
      const deliveries = await Promise.all(
        order.map(async (index) => {
          const body = JSON.stringify(pushes[index]);
          return { provider: 'github', body, headers: await githubHeaders(body, { event: 'push' }) };
        }),
      );
      const { row } = await applyInOrder(deliveries);
      expect(row).toMatchObject({ headSha: pushes[1]?.after });
    });
  });
});
