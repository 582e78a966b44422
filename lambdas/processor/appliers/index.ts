/**
 * The one place appliers are registered, per provider and event type (exact type or
 * `prefix*`). Replace or extend it with your own appliers; events with no applier are acknowledged
 * and their claim completed as `unhandled`.
 */
import type { ApplierRegistry } from '../types.js';
import { asaasPayment } from './asaas.js';
import { githubPush } from './github.js';
import { shopifyOrder } from './shopify.js';
import { standardInvoice } from './standard.js';
import { stripeChargeRefunded, stripePaymentIntent } from './stripe.js';

export const EXAMPLE_APPLIERS: ApplierRegistry = {
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
