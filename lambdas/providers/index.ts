/**
 * The provider registry: route id -> provider module. Both the stack (routes, secrets, TTL, key
 * rules, alarms) and the handlers (verify, extract, forwarded headers) read a provider's rules from
 * here. Adding a provider: write lambdas/providers/<id>.ts with `defineProvider`, add it to this one
 * line. A test that needs another provider builds its own registry with `withProviders` (see
 * test/providers/extra-provider.e2e.test.ts).
 */
import { asaasProvider } from './asaas.js';
import { githubProvider } from './github.js';
import { registry } from './registry.js';
import { shopifyProvider } from './shopify.js';
import { standardProvider } from './standard.js';
import { stripeProvider } from './stripe.js';
import type { Provider } from './types.js';

export { ProviderRegistryError, registry } from './registry.js';

/** The repository's providers, in the order routes, outputs and docs tables list them. */
export const BUILT_IN_PROVIDERS = [
  stripeProvider,
  githubProvider,
  shopifyProvider,
  asaasProvider,
  standardProvider,
] as const;

export const { PROVIDERS, PROVIDER_IDS, isProviderId, getProvider, perProvider } =
  registry(BUILT_IN_PROVIDERS);

export type RegisteredProviderId = (typeof BUILT_IN_PROVIDERS)[number]['id'];

/**
 * The repository's providers plus `extra`, as this module's lookups: what a test mocks this module
 * with to run the whole pipeline with a provider of its own.
 */
export function withProviders(extra: readonly Provider<string>[]) {
  return registry([...BUILT_IN_PROVIDERS, ...extra]);
}
