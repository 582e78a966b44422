/**
 * Shopify `orders/create` and `orders/updated`: one Orders row per `shopify:<shop>:<order id>`, so a
 * re-created order collapses into one row, guarded by the order's `updated_at` (Shopify retries
 * carry the payload as it was when triggered, so an old retry must not overwrite newer state).
 */

import { shopifyResourceId } from '../../providers/shopify';
import { joinKey } from '../../shared/keys';
import type { BusinessHandler } from '../types';
import { isoSeconds, str } from './payload';
import { planRowWrite } from './plan';

/** Same `updated_at` second: an update outranks the create. */
const RANK: Readonly<Record<string, number>> = { 'orders/create': 1, 'orders/updated': 2 };

export function orderRowKey(shop: string, orderId: string): string {
  return joinKey(['shopify', shop, orderId]);
}

export const shopifyOrder: BusinessHandler = {
  async plan(event, context) {
    const order = event.payload;
    const orderId = shopifyResourceId(order);
    if (!orderId) return { outcome: 'noop' };
    const pk = orderRowKey(event.account, orderId);
    const at =
      isoSeconds(order.updated_at) ??
      isoSeconds(order.created_at) ??
      Math.floor(Date.parse(event.receivedAt) / 1000);
    const eventOrder = { at, rank: RANK[event.eventType] ?? 0, eventId: event.eventId };
    return planRowWrite(context, {
      table: 'orders',
      pk,
      order: eventOrder,
      attributes: {
        provider: 'shopify',
        shop: event.account,
        objectId: orderId,
        name: str(order.name),
        financialStatus: str(order.financial_status),
        fulfillmentStatus: str(order.fulfillment_status),
        totalPrice: str(order.total_price),
        currency: str(order.currency),
        orderUpdatedAt: str(order.updated_at),
      },
    });
  },
};
