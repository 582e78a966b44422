/**
 * Paddle `transaction.*`: the transaction's latest state in the Resources table
 * (`paddle:<account>:transaction:<id>`), ordered by the notification's `occurred_at`; in the same
 * second a later stage of the lifecycle (created < ready < billed/paid < completed) wins, and a
 * cancellation or a failure never undoes a completion.
 */

import type { AppApplier } from '../../../lambdas/processor/sdk/index.js';
import { id, joinKey, obj, planRowWrite, str } from '../../../lambdas/processor/sdk/index.js';
import type { ExampleApp } from '../app-types.js';

const RANK: Readonly<Record<string, number>> = {
  'transaction.created': 1,
  'transaction.updated': 2,
  'transaction.ready': 3,
  'transaction.payment_failed': 4,
  'transaction.past_due': 5,
  'transaction.canceled': 6,
  'transaction.billed': 7,
  'transaction.paid': 8,
  'transaction.completed': 9,
};

export const paddleTransaction: AppApplier<ExampleApp, 'paddle'> = {
  async plan(event, context) {
    const transaction = obj(event.payload.data);
    const transactionId = id(transaction?.id);
    if (!transaction || !transactionId) return { outcome: 'noop' };
    const totals = obj(obj(transaction.details)?.totals);
    return planRowWrite(context, {
      table: 'resources',
      pk: joinKey(['paddle', event.account, 'transaction', transactionId]),
      order: {
        at: event.occurredAt ?? Math.floor(Date.parse(event.receivedAt) / 1000),
        rank: RANK[event.eventType] ?? 0,
        eventId: event.eventId,
      },
      attributes: {
        provider: 'paddle',
        kind: 'transaction',
        objectId: transactionId,
        status: str(transaction.status),
        total: str(totals?.total),
        currency: str(transaction.currency_code),
      },
    });
  },
};
