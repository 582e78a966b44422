/**
 * Asaas `PAYMENT_*`: one Payments row per `asaas:<account>:<payment id>`, ordered by the event's
 * `dateCreated` and, in the same second, by the payment lifecycle below.
 */
import { joinKey } from '../../shared/keys';
import type { BusinessHandler } from '../types';
import { num, obj, str } from './payload';
import { planRowWrite } from './plan';

export const ASAAS_PAYMENT_RANK: Readonly<Record<string, number>> = {
  PAYMENT_CREATED: 1,
  PAYMENT_UPDATED: 2,
  PAYMENT_AWAITING_RISK_ANALYSIS: 2,
  PAYMENT_APPROVED_BY_RISK_ANALYSIS: 3,
  PAYMENT_OVERDUE: 3,
  PAYMENT_CONFIRMED: 4,
  PAYMENT_RECEIVED: 5,
  PAYMENT_REFUND_IN_PROGRESS: 6,
  PAYMENT_REFUNDED: 7,
  PAYMENT_DELETED: 8,
};

export const asaasPayment: BusinessHandler = {
  async plan(event, context) {
    const payment = obj(event.payload.payment);
    const paymentId = str(payment?.id);
    if (!payment || !paymentId) return { outcome: 'noop' };
    const pk = joinKey(['asaas', event.account, paymentId]);
    const at = event.occurredAt ?? Math.floor(Date.parse(event.receivedAt) / 1000);
    const eventOrder = { at, rank: ASAAS_PAYMENT_RANK[event.eventType] ?? 0, eventId: event.eventId };
    return planRowWrite(context, {
      table: 'payments',
      pk,
      order: eventOrder,
      attributes: {
        provider: 'asaas',
        account: event.account,
        objectId: paymentId,
        status: str(payment.status),
        amount: num(payment.value),
        amountReceived: num(payment.netValue),
        currency: 'BRL',
        billingType: str(payment.billingType),
      },
    });
  },
};
