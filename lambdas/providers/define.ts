/**
 * `defineProvider`: a provider module's one export, with the defaults every provider shares filled
 * in (secret variable name, no forwarded headers, the duplicate-ratio alarms on).
 */
import type { Provider, ProviderAlarms, ProviderDev, ProviderHeaders, ProviderSecret } from './types.js';

/** A provider as its module writes it: what most providers share may be left out. */
export interface ProviderDefinition<Id extends string>
  extends Omit<Provider<Id>, 'secret' | 'headers' | 'alarms' | 'dev'> {
  readonly secret: Omit<ProviderSecret, 'envVar'> & { readonly envVar?: string };
  /** @default no secret headers and nothing forwarded beyond the generic `content-type` and `user-agent` */
  readonly headers?: Partial<ProviderHeaders>;
  /** @default `{ duplicateRatioLow: true }` */
  readonly alarms?: Partial<ProviderAlarms>;
  readonly dev: Omit<ProviderDev, 'sizedTypes'> & { readonly sizedTypes?: readonly string[] };
}

/** `WEBHOOK_SECRET_<ID>`: the default secret variable of the local stack and tests. */
export const defaultSecretEnvVar = (id: string): string => `WEBHOOK_SECRET_${id.toUpperCase()}`;

export function defineProvider<const Id extends string>(definition: ProviderDefinition<Id>): Provider<Id> {
  const { secret, headers, alarms, dev, ...rest } = definition;
  return Object.freeze({
    ...rest,
    secret: Object.freeze({ ...secret, envVar: secret.envVar ?? defaultSecretEnvVar(definition.id) }),
    headers: Object.freeze({ secret: headers?.secret ?? [], forward: headers?.forward ?? [] }),
    alarms: Object.freeze({ duplicateRatioLow: alarms?.duplicateRatioLow ?? true }),
    dev: Object.freeze({ ...dev, sizedTypes: dev.sizedTypes ?? [] }),
  });
}
