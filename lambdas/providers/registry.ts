/**
 * `registry([...])`: the provider list -> the lookups every other module reads (route ids, the
 * provider for a route). Checked once, when it is built: an id must be usable as a route segment,
 * an output id and an environment variable suffix, and no two providers may share an id or a
 * secret variable.
 */
import type { Provider } from './types.js';

/** Lower-case letters and digits: a URL segment, `<Pascal>WebhookUrl`, `WEBHOOK_SECRET_<ID>`. */
const PROVIDER_ID = /^[a-z][a-z0-9]*$/;

export class ProviderRegistryError extends Error {
  override readonly name = 'ProviderRegistryError';
}

export interface ProviderRegistry<Id extends string> {
  /** Route id -> provider; frozen, without a prototype, in registry order. */
  readonly PROVIDERS: Readonly<Record<Id, Provider<Id>>>;
  /** The route ids, in registry order. */
  readonly PROVIDER_IDS: readonly Id[];
  isProviderId(value: unknown): value is Id;
  /**
   * The provider for a route id, or `undefined` for anything else. The id comes from the URL path,
   * so inherited names (`__proto__`, `constructor`, `toString`) must not reach the object lookup.
   */
  getProvider(id: string): Provider<Id> | undefined;
  /** The provider for a route id the caller knows is registered; throws naming the registered ones. */
  requireProvider(id: string): Provider<Id>;
  /** One value per provider, in registry order: a table derived from the registry. */
  perProvider<T>(value: (provider: Provider<Id>) => T): Readonly<Record<Id, T>>;
}

export function registry<const P extends readonly Provider<string>[]>(
  providers: P,
): ProviderRegistry<P[number]['id']> {
  type Id = P[number]['id'];
  const byId: Record<string, Provider<Id>> = Object.create(null);
  const envVars = new Map<string, string>();
  for (const provider of providers) {
    if (!PROVIDER_ID.test(provider.id))
      throw new ProviderRegistryError(
        `provider id ${JSON.stringify(provider.id)} must be lower-case letters and digits, starting with a letter`,
      );
    if (Object.hasOwn(byId, provider.id))
      throw new ProviderRegistryError(`provider id ${provider.id} is registered twice`);
    const other = envVars.get(provider.secret.envVar);
    if (other !== undefined)
      throw new ProviderRegistryError(
        `${other} and ${provider.id} share the variable ${provider.secret.envVar}`,
      );
    envVars.set(provider.secret.envVar, provider.id);
    byId[provider.id] = provider as Provider<Id>;
  }
  const PROVIDERS = Object.freeze(byId) as Readonly<Record<Id, Provider<Id>>>;
  const PROVIDER_IDS = Object.freeze(providers.map((provider) => provider.id as Id));
  const isProviderId = (value: unknown): value is Id =>
    typeof value === 'string' && Object.hasOwn(byId, value);
  return {
    PROVIDERS,
    PROVIDER_IDS,
    isProviderId,
    getProvider: (id) => (isProviderId(id) ? byId[id] : undefined),
    requireProvider: (id) => {
      if (isProviderId(id)) return byId[id] as Provider<Id>;
      throw new ProviderRegistryError(
        `unknown provider ${JSON.stringify(id)}: the providers are ${PROVIDER_IDS.join(', ')}`,
      );
    },
    perProvider: <T>(value: (provider: Provider<Id>) => T) =>
      Object.freeze(
        Object.fromEntries(Object.values(byId).map((provider) => [provider.id, value(provider)])),
      ) as Readonly<Record<Id, T>>,
  };
}
