/**
 * The provider registry: route id -> provider module. Both the stack (TTL, key rules) and the
 * handlers (verify, extract) read a provider's rules from here.
 */
import { asaasProvider } from './asaas.js';
import { githubProvider } from './github.js';
import { shopifyProvider } from './shopify.js';
import { standardProvider } from './standard.js';
import { stripeProvider } from './stripe.js';
import { isProviderId, type Provider, type ProviderId } from './types.js';

export const PROVIDERS: Readonly<Record<ProviderId, Provider>> = Object.freeze({
  stripe: stripeProvider,
  github: githubProvider,
  shopify: shopifyProvider,
  asaas: asaasProvider,
  standard: standardProvider,
});

/**
 * The provider for a route id, or `undefined` for anything else. The id comes from the URL path,
 * so inherited names (`__proto__`, `constructor`, `toString`) must not reach the object lookup.
 */
export function getProvider(id: string): Provider | undefined {
  return typeof id === 'string' && isProviderId(id) && Object.hasOwn(PROVIDERS, id)
    ? PROVIDERS[id]
    : undefined;
}
