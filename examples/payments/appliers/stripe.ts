/**
 * Stripe: payment intents and refunds into the Payments table, one row per payment intent
 * (`stripe:<account>:<pi id>`). On the first transition to `succeeded`: post to the ledger, then
 * send the receipt (the irreversible effect, last).
 */

import type { AppApplier, EventOrder, ProcessingEvent } from '../../../lambdas/processor/sdk/index.js';
import {
  amountRank,
  composeRank,
  id,
  joinKey,
  num,
  obj,
  planRowWrite,
  str,
} from '../../../lambdas/processor/sdk/index.js';
import type { ExampleApp } from '../app-types.js';

/**
 * Tie-break for two events about one intent in the same second (Stripe's `created` has one-second
 * resolution): the later stage of the payment flow wins. `payment_failed` outranks `processing`, so
 * the failure stands even if the `processing` event was created in the same second.
 */
export const PAYMENT_INTENT_RANK: Readonly<Record<string, number>> = {
  'payment_intent.created': 1,
  'payment_intent.requires_action': 2,
  'payment_intent.processing': 3,
  'payment_intent.amount_capturable_updated': 4,
  'payment_intent.partially_funded': 4,
  'payment_intent.payment_failed': 5,
  'payment_intent.canceled': 6,
  'payment_intent.succeeded': 7,
};

export function paymentRowKey(account: string, paymentIntentId: string): string {
  return joinKey(['stripe', account, paymentIntentId]);
}

function order(event: ProcessingEvent, rank: number): EventOrder {
  const at = num(event.payload.created) ?? Math.floor(Date.parse(event.receivedAt) / 1000);
  return { at, rank, eventId: event.eventId };
}

export const stripePaymentIntent: AppApplier<ExampleApp, 'stripe'> = {
  async plan(event, context) {
    const intent = obj(obj(event.payload.data)?.object);
    const intentId = str(intent?.id);
    if (!intent || !intentId) return { outcome: 'noop' };
    const pk = paymentRowKey(event.account, intentId);
    const eventOrder = order(event, PAYMENT_INTENT_RANK[event.eventType] ?? 0);
    const { row, newer } = await context.read('payments', pk, eventOrder);
    if (!newer) return { outcome: 'stale' };

    const status = str(intent.status);
    const firstSuccess = status === 'succeeded' && row?.status !== 'succeeded';
    // Ledger first (it takes an idempotency key, so a retry is safe), receipt last (an email cannot be unsent).
    const effects = firstSuccess
      ? [...(context.has('ledger') ? ['ledger'] : []), ...(context.has('mailer') ? ['receipt'] : [])]
      : [];
    return {
      writes: [
        {
          table: 'payments',
          pk,
          order: eventOrder,
          attributes: {
            provider: 'stripe',
            account: event.account,
            objectId: intentId,
            status,
            amount: num(intent.amount),
            amountReceived: num(intent.amount_received),
            currency: str(intent.currency),
            customer: str(intent.customer),
          },
        },
      ],
      effects,
    };
  },
  effects: {
    // The ledger honours Idempotency-Key: running it again after a crash returns the first posting.
    ledger: {
      adapter: 'ledger',
      async run(event, context) {
        const intent = obj(obj(event.payload.data)?.object) ?? {};
        await context.adapters.ledger?.call(
          {
            payment: paymentRowKey(event.account, str(intent.id) ?? ''),
            provider: 'stripe',
            paymentIntent: str(intent.id),
            amount: num(intent.amount_received) ?? num(intent.amount),
            currency: str(intent.currency),
            eventId: event.eventId,
          },
          context.idempotencyKey,
          { signal: context.signal },
        );
      },
    },
    // A plain mailer does not: a receipt run again is a second email, so a receipt whose call may
    // have happened is never called again (docs/rules.md, "Effects in doubt").
    receipt: {
      adapter: 'mailer',
      async run(event, context) {
        const intent = obj(obj(event.payload.data)?.object) ?? {};
        await context.adapters.mailer?.call(
          {
            template: 'payment-receipt',
            payment: paymentRowKey(event.account, str(intent.id) ?? ''),
            to: str(intent.receipt_email),
            customer: str(intent.customer),
            amount: num(intent.amount_received) ?? num(intent.amount),
            currency: str(intent.currency),
          },
          context.idempotencyKey,
          { signal: context.signal },
        );
      },
    },
  },
};

/** Refunded amounts are in the currency's smallest unit; 2^40 is far above any real charge. */
const REFUND_RANK_SIZE = 2 ** 40;

export function refundRank(charge: Readonly<Record<string, unknown>>): number {
  return composeRank([amountRank(num(charge.amount_refunded), REFUND_RANK_SIZE)]);
}

/** `charge.refunded`: the refunded amount on the intent's row, under its own guard (`refundEvent*`). */
export const stripeChargeRefunded: AppApplier<ExampleApp, 'stripe'> = {
  async plan(event, context) {
    const charge = obj(obj(event.payload.data)?.object);
    const intentId = id(charge?.payment_intent);
    if (!charge || !intentId) return { outcome: 'noop' };
    const pk = paymentRowKey(event.account, intentId);
    // Same second: the larger refunded total wins (it only grows), so two partial refunds in one
    // second end at the later total.
    const eventOrder = order(event, refundRank(charge));
    return planRowWrite(context, {
      table: 'payments',
      pk,
      order: eventOrder,
      guard: 'refundEvent',
      attributes: {
        provider: 'stripe',
        account: event.account,
        objectId: intentId,
        amountRefunded: num(charge.amount_refunded),
        refunded: charge.refunded === true,
        currency: str(charge.currency),
      },
    });
  },
};
