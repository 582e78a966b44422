/**
 * Shopify `orders/create` and `orders/updated`: one Orders row per order, keyed by Shopify's global
 * order id (`shopify:order:<id>`), so a re-created order collapses into one row, guarded by the
 * order's `updated_at` (Shopify retries carry the payload as it was when triggered, so an old retry
 * must not overwrite newer state). The shop is set once: the shop-domain header is not signed, and a
 * public app's one secret signs every shop's deliveries, so a delivery replayed under another shop
 * must neither create a row for that shop nor change the row's shop (docs/rules.md, "Tenancy").
 */

import type { AppApplier } from '../../../lambdas/processor/sdk/index.js';
import {
  composeRank,
  isoSeconds,
  joinKey,
  progressionRank,
  shopifyResourceId,
  str,
} from '../../../lambdas/processor/sdk/index.js';
import type { ExampleApp } from '../app-types.js';

/**
 * Same `updated_at` second: the further-along payment state wins, then the further-along
 * fulfillment, then the topic (an update outranks the create). Progressions from Shopify's Order
 * resource (`financial_status`, `fulfillment_status`).
 */
export const FINANCIAL_PROGRESSION = [
  'pending',
  'authorized',
  // An authorization that ends unpaid: voided (cancelled before capture) or expired. Only reachable
  // from pending or authorized, so it ranks just above them and below any captured payment.
  'expired',
  'voided',
  'partially_paid',
  'paid',
  'partially_refunded',
  'refunded',
] as const;
export const FULFILLMENT_PROGRESSION = ['unfulfilled', 'partial', 'fulfilled', 'restocked'] as const;
const TOPICS = ['orders/create', 'orders/updated'] as const;

export function shopifyOrderRank(topic: string, order: Readonly<Record<string, unknown>>): number {
  return composeRank([
    progressionRank(FINANCIAL_PROGRESSION, order.financial_status),
    // Shopify sends `null` for an unfulfilled order.
    progressionRank(FULFILLMENT_PROGRESSION, order.fulfillment_status ?? 'unfulfilled'),
    progressionRank(TOPICS, topic),
  ]);
}

/** Shopify ids are global across shops, so the order id alone names the row. */
export function orderRowKey(orderId: string): string {
  return joinKey(['shopify', 'order', orderId]);
}

export const shopifyOrder: AppApplier<ExampleApp, 'shopify'> = {
  async plan(event, context) {
    const order = event.payload;
    const orderId = shopifyResourceId(order);
    if (!orderId) return { outcome: 'noop' };
    const pk = orderRowKey(orderId);
    const at =
      isoSeconds(order.updated_at) ??
      isoSeconds(order.created_at) ??
      Math.floor(Date.parse(event.receivedAt) / 1000);
    const eventOrder = { at, rank: shopifyOrderRank(event.eventType, order), eventId: event.eventId };
    const { row, newer } = await context.read('orders', pk, eventOrder);
    // Another shop's order: a replay under this shop's domain. The condition refuses it too.
    if (row?.shop !== undefined && row.shop !== event.account) return { outcome: 'noop' };
    if (!newer) return { outcome: 'stale' };
    return {
      writes: [
        {
          table: 'orders',
          pk,
          order: eventOrder,
          owner: { attribute: 'shop', value: event.account },
          attributes: {
            provider: 'shopify',
            objectId: orderId,
            name: str(order.name),
            financialStatus: str(order.financial_status),
            fulfillmentStatus: str(order.fulfillment_status),
            totalPrice: str(order.total_price),
            currency: str(order.currency),
            orderUpdatedAt: str(order.updated_at),
          },
        },
      ],
    };
  },
};
