// src/app-types.ts: what the app tells the compiler, shared by the stack and the processor
import type { EventsByType } from 'idempotent-webhook-receiver/processor';
import type Stripe from 'stripe';

export type App = {
  events: { stripe: EventsByType<Stripe.Event> };
  tables: 'subscriptions';
  adapters: 'crm';
};
