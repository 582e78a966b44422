/**
 * Square `payment.*`: the payment's latest state in the Resources table
 * (`square:<merchant>:payment:<id>`), ordered by the payment's `updated_at` and, in the same second,
 * by its `version`, which Square raises on every change: a stale notification never wins.
 */

import type { AppApplier } from '../../../lambdas/processor/sdk/index.js';
import {
  id,
  isoSeconds,
  joinKey,
  num,
  obj,
  planRowWrite,
  str,
} from '../../../lambdas/processor/sdk/index.js';
import type { ExampleApp } from '../app-types.js';

export const squarePayment: AppApplier<ExampleApp, 'square'> = {
  async plan(event, context) {
    const payment = obj(obj(obj(event.payload.data)?.object)?.payment);
    const paymentId = id(payment?.id);
    if (!payment || !paymentId) return { outcome: 'noop' };
    const amount = obj(payment.amount_money);
    return planRowWrite(context, {
      table: 'resources',
      pk: joinKey(['square', event.account, 'payment', paymentId]),
      order: {
        at:
          isoSeconds(payment.updated_at) ??
          event.occurredAt ??
          Math.floor(Date.parse(event.receivedAt) / 1000),
        rank: num(payment.version) ?? 0,
        eventId: event.eventId,
      },
      attributes: {
        provider: 'square',
        kind: 'payment',
        objectId: paymentId,
        status: str(payment.status),
        amount: num(amount?.amount),
        currency: str(amount?.currency),
      },
    });
  },
};
