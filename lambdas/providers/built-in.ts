/**
 * The registry line: the repository's providers, in the order routes, outputs and docs tables list
 * them. Adding a provider is its module (lambdas/providers/<id>.ts, built with `defineProvider`) and
 * its entry here; everything else (./index.ts and all that reads it) derives from this list. A test
 * adds one the same way, by mocking this module (test/providers/extra-provider.e2e.test.ts).
 */
import { asaasProvider } from './asaas.js';
import { discordProvider } from './discord.js';
import { githubProvider } from './github.js';
import { paddleProvider } from './paddle.js';
import { shopifyProvider } from './shopify.js';
import { slackProvider } from './slack.js';
import { squareProvider } from './square.js';
import { standardProvider } from './standard.js';
import { stripeProvider } from './stripe.js';
import { twilioProvider } from './twilio.js';

export const BUILT_IN_PROVIDERS = [
  stripeProvider,
  githubProvider,
  shopifyProvider,
  asaasProvider,
  standardProvider,
  paddleProvider,
  slackProvider,
  squareProvider,
  twilioProvider,
  discordProvider,
] as const;

export type BuiltInProviderId = (typeof BUILT_IN_PROVIDERS)[number]['id'];
