/**
 * Development defaults for the signing secrets of the local stack (`npm start`) and `npm run send`:
 * each provider module's `secret.devSecret`. Each can be overridden by its environment variable
 * (comma-separated for several). Never used by a deployed stack, which reads Secrets Manager.
 */
import { PROVIDERS, perProvider } from '../lambdas/providers/index.js';
import type { ProviderId } from '../lambdas/providers/types.js';
import { parseSecretList, secretEnvVar } from '../lambdas/shared/secrets.js';

export const DEV_SECRETS: Readonly<Record<ProviderId, string>> = perProvider((p) => p.secret.devSecret);

/** The secret list in force for a provider: its environment variable, else the development default. */
export function localSecrets(provider: ProviderId, env: NodeJS.ProcessEnv = process.env): string[] {
  const configured = parseSecretList(env[secretEnvVar(provider)]);
  return configured.length > 0 ? configured : [PROVIDERS[provider].secret.devSecret];
}
