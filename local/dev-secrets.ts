/**
 * Development defaults for the signing secrets of the local stack (`npm start`) and `npm run send`:
 * each provider module's `secret.devSecret`. Each can be overridden by its environment variable
 * (comma-separated for several). Never used by a deployed stack, which reads Secrets Manager.
 */
import { type ProviderTable, perProvider, requireProvider } from '../lambdas/providers/index.js';
import type { Provider, ProviderId } from '../lambdas/providers/types.js';
import { parseSecretList } from '../lambdas/shared/secrets.js';

export const DEV_SECRETS: ProviderTable<string> = perProvider((p) => p.secret.devSecret);

/** A registered provider's development secret. */
export const devSecret = (provider: ProviderId): string => requireProvider(provider).secret.devSecret;

/**
 * The secret list in force for a provider (a registered id, or the module itself): its environment
 * variable, else the development default.
 */
export function localSecrets(
  provider: ProviderId | Provider<string>,
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  const { secret } = typeof provider === 'string' ? requireProvider(provider) : provider;
  const configured = parseSecretList(env[secret.envVar]);
  return configured.length > 0 ? configured : [secret.devSecret];
}
