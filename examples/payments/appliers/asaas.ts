/**
 * Asaas `PAYMENT_*`: one Payments row per `asaas:<account>:<payment id>`, ordered by the event's
 * `dateCreated` and, in the same second, by the payment lifecycle below.
 */

import type { AppApplier } from '../../../lambdas/processor/sdk/index.js';
import {
  composeRank,
  joinKey,
  num,
  obj,
  planRowWrite,
  progressionRank,
  str,
} from '../../../lambdas/processor/sdk/index.js';
import type { ExampleApp } from '../app-types.js';

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

/**
 * The payment's own `status`, in lifecycle order, decides first (the state is the fact); the event
 * type breaks ties between events carrying one status (a `PAYMENT_DELETED` after a
 * `PAYMENT_UPDATED`). Statuses from Asaas's payment object. Transitions that run backwards (an
 * OVERDUE payment back to PENDING after a new due date, a cash receipt undone) stay ties in one
 * second and are kept by first-writer-wins.
 */
export const ASAAS_STATUS_PROGRESSION = [
  'PENDING',
  'AWAITING_RISK_ANALYSIS',
  'AUTHORIZED',
  'OVERDUE',
  'CONFIRMED',
  'RECEIVED',
  'RECEIVED_IN_CASH',
  'DUNNING_REQUESTED',
  'DUNNING_RECEIVED',
  'REFUND_REQUESTED',
  'REFUND_IN_PROGRESS',
  'REFUNDED',
  'CHARGEBACK_REQUESTED',
  'CHARGEBACK_DISPUTE',
  'AWAITING_CHARGEBACK_REVERSAL',
] as const;

export function asaasPaymentRank(eventType: string, payment: Readonly<Record<string, unknown>>): number {
  return composeRank([
    progressionRank(ASAAS_STATUS_PROGRESSION, payment.status),
    { value: ASAAS_PAYMENT_RANK[eventType] ?? 0, size: 16 },
  ]);
}

export const asaasPayment: AppApplier<ExampleApp, 'asaas'> = {
  async plan(event, context) {
    const payment = obj(event.payload.payment);
    const paymentId = str(payment?.id);
    if (!payment || !paymentId) return { outcome: 'noop' };
    const pk = joinKey(['asaas', event.account, paymentId]);
    const at = event.occurredAt ?? Math.floor(Date.parse(event.receivedAt) / 1000);
    const eventOrder = { at, rank: asaasPaymentRank(event.eventType, payment), eventId: event.eventId };
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
