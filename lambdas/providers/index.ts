/**
 * The provider registry: route id -> provider module. Both the stack (routes, secrets, TTL, key
 * rules, alarms) and the handlers (verify, extract, forwarded headers) read a provider's rules from
 * here. The built-in providers are the one list in ./built-in.ts (adding a provider: its module and
 * one line there).
 *
 * Providers by configuration (./configured.ts) join the built-in ones: this module's registry, the
 * one the functions, `npm run send` and the CLI read, holds those `WEBHOOK_HMAC_PROVIDERS` names
 * when the module loads; the construct builds its own from its `hmacProviders` prop
 * (`providerRegistry`) and writes that variable for its functions.
 */
import { BUILT_IN_PROVIDERS, type BuiltInProviderId } from './built-in.js';
import { configuredProviders } from './configured.js';
import { type HmacProviderConfig, hmacProvider } from './hmac.js';
import { type ProviderRegistry, ProviderRegistryError, registry } from './registry.js';
import type { Provider } from './types.js';

export { BUILT_IN_PROVIDERS, type BuiltInProviderId } from './built-in.js';
export { type ProviderRegistry, ProviderRegistryError, registry } from './registry.js';

/**
 * The built-in providers (all, or those `builtInIds` names, in registry order) plus `extra`
 * (configured ones): a registry, with their ids checked. No configured provider may take a built-in
 * id, chosen or not.
 */
export function withProviders(
  extra: readonly Provider<string>[],
  builtInIds?: readonly string[],
): ProviderRegistry<string> {
  for (const provider of extra) {
    if (BUILT_IN_PROVIDERS.some((builtIn) => builtIn.id === provider.id))
      throw new ProviderRegistryError(
        `provider id ${provider.id} is a built-in provider's: give yours another id`,
      );
  }
  const known: readonly string[] = BUILT_IN_PROVIDERS.map((provider) => provider.id);
  for (const id of builtInIds ?? []) {
    if (!known.includes(id))
      throw new ProviderRegistryError(
        `${JSON.stringify(id)} is not a built-in provider (they are ${known.join(', ')})`,
      );
  }
  const builtIns =
    builtInIds === undefined
      ? BUILT_IN_PROVIDERS
      : BUILT_IN_PROVIDERS.filter((provider) => builtInIds.includes(provider.id));
  return registry([...builtIns, ...extra]);
}

/** The built-in providers (all, or `builtInIds`) plus those `configs` describe (the construct's `hmacProviders`). */
export function providerRegistry(
  configs: readonly HmacProviderConfig[] = [],
  builtInIds?: readonly string[],
): ProviderRegistry<string> {
  return withProviders(configs.map(hmacProvider), builtInIds);
}

/**
 * A table keyed by provider: a built-in provider's entry is always there (a configured provider
 * cannot take its id), any other id's may not be.
 */
export type ProviderTable<T> = Readonly<Record<BuiltInProviderId, T>> & Readonly<Partial<Record<string, T>>>;

const runtime = withProviders(configuredProviders());

export const { PROVIDER_IDS, isProviderId, getProvider, requireProvider } = runtime;
/** Route id -> provider: the built-in ones and those `WEBHOOK_HMAC_PROVIDERS` configures. */
export const PROVIDERS = runtime.PROVIDERS as ProviderTable<Provider<string>>;
/** The providers, in registry order. */
export const PROVIDER_LIST: readonly Provider<string>[] = Object.freeze(Object.values(runtime.PROVIDERS));
/** One value per provider, in registry order. */
export const perProvider = runtime.perProvider as <T>(
  value: (provider: Provider<string>) => T,
) => ProviderTable<T>;
