/**
 * The example's appliers, registered per provider and event type (exact type or `prefix*`), and the
 * effect adapters they call. Events with no applier are acknowledged and their claim completed as
 * `unhandled`.
 */
import type { ApplierRegistry } from '../../../lambdas/processor/sdk/index.js';
import type { ExampleApp } from '../app-types.js';
import { asaasPayment } from './asaas.js';
import { discordCommand, discordMessageDecision } from './discord.js';
import { githubPush } from './github.js';
import { onfidoCheck } from './onfido.js';
import { paddleTransaction } from './paddle.js';
import { shopifyOrder } from './shopify.js';
import { squarePayment } from './square.js';
import { standardInvoice } from './standard.js';
import { stripeChargeRefunded, stripePaymentIntent } from './stripe.js';
import { twilioMessage } from './twilio.js';

export const EXAMPLE_APPLIERS: ApplierRegistry<ExampleApp> = {
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
  paddle: {
    'transaction.*': paddleTransaction,
  },
  square: {
    'payment.*': squarePayment,
  },
  twilio: {
    'message.*': twilioMessage,
  },
  discord: {
    'application_command*': discordCommand,
    'modal_submit*': discordCommand,
    'message_component*': discordMessageDecision,
  },
  // A provider by configuration (examples/providers/onfido.json): applied when it is configured.
  onfido: {
    'check.*': onfidoCheck,
  },
};

export { EXAMPLE_EFFECTS, EXAMPLE_TABLES } from '../app-types.js';
