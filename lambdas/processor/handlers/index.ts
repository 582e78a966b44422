/**
 * The one place business handlers are registered, per provider and event type (exact type or
 * `prefix*`). Replace or extend it with your own handlers; events with no handler are acknowledged
 * and their claim completed as `unhandled`.
 */
import type { HandlerRegistry } from '../types';
import { asaasPayment } from './asaas';
import { githubPush } from './github';
import { shopifyOrder } from './shopify';
import { standardInvoice } from './standard';
import { stripeChargeRefunded, stripePaymentIntent } from './stripe';

export const EXAMPLE_HANDLERS: HandlerRegistry = {
  stripe: {
    'payment_intent.*': stripePaymentIntent,
    'charge.refunded': stripeChargeRefunded,
  },
  shopify: {
    'orders/create': shopifyOrder,
    'orders/updated': shopifyOrder,
  },
  github: {
    push: githubPush,
  },
  asaas: {
    'PAYMENT_*': asaasPayment,
  },
  standard: {
    'invoice.*': standardInvoice,
  },
};
