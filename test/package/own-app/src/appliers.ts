// src/appliers.ts: Stripe's invoice.paid, applied to the Subscriptions table, then told to the CRM
import {
  type ApplierRegistry,
  defineApplier,
  joinKey,
  planRowWrite,
} from 'idempotent-webhook-receiver/processor';
import type { App } from './app-types';

const invoicePaid = defineApplier<App, 'stripe', 'invoice.paid'>({
  async plan(event, context) {
    const invoice = event.payload.data.object; // a Stripe.Invoice
    const customer =
      typeof invoice.customer === 'string' ? invoice.customer : (invoice.customer?.id ?? 'none');
    const plan = await planRowWrite(context, {
      table: 'subscriptions',
      pk: joinKey(['stripe', event.account, customer]),
      order: { at: event.payload.created, rank: 0, eventId: event.eventId },
      attributes: { status: 'paid', lastInvoice: invoice.id, amountPaid: invoice.amount_paid },
    });
    return plan.writes ? { ...plan, effects: ['tellCrm'] } : plan;
  },
  effects: {
    tellCrm: {
      adapter: 'crm',
      async run(event, { adapters, idempotencyKey, signal }) {
        const invoice = event.payload.data.object;
        await adapters.crm?.call({ invoice: invoice.id, paid: invoice.amount_paid }, idempotencyKey, {
          signal,
        });
      },
    },
  },
});

export const appliers: ApplierRegistry<App> = { stripe: { 'invoice.paid': invoicePaid } };
