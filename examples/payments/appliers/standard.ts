/**
 * Standard Webhooks `invoice.*` (an example of a sender using the spec): the invoice's latest state
 * in the Resources table (`standard:<account>:invoice:<id>`), ordered by the payload's `timestamp`.
 */

import type { AppApplier } from '../../../lambdas/processor/sdk/index.js';
import { id, joinKey, num, obj, planRowWrite, str } from '../../../lambdas/processor/sdk/index.js';
import type { ExampleApp } from '../app-types.js';

const RANK: Readonly<Record<string, number>> = {
  'invoice.created': 1,
  'invoice.updated': 2,
  'invoice.finalized': 3,
  'invoice.paid': 4,
  'invoice.voided': 5,
};

export const standardInvoice: AppApplier<ExampleApp, 'standard'> = {
  async plan(event, context) {
    const invoice = obj(event.payload.data);
    const invoiceId = id(invoice?.id);
    if (!invoice || !invoiceId) return { outcome: 'noop' };
    const pk = joinKey(['standard', event.account, 'invoice', invoiceId]);
    const at = event.occurredAt ?? Math.floor(Date.parse(event.receivedAt) / 1000);
    const eventOrder = { at, rank: RANK[event.eventType] ?? 0, eventId: event.eventId };
    return planRowWrite(context, {
      table: 'resources',
      pk,
      order: eventOrder,
      attributes: {
        provider: 'standard',
        kind: 'invoice',
        objectId: invoiceId,
        status: str(invoice.status) ?? event.eventType.split('.').at(-1),
        amount: num(invoice.amount),
        currency: str(invoice.currency),
      },
    });
  },
};
