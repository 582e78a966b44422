/**
 * Development defaults for the signing secrets of the local stack (`npm start`) and `npm run send`.
 * Each can be overridden by its environment variable (comma-separated for several). Never used by a
 * deployed stack, which reads Secrets Manager.
 */
import type { ProviderId } from '../lambdas/providers/types.js';
import { parseSecretList, SECRET_ENV_VARS } from '../lambdas/shared/secrets.js';

export const DEV_SECRETS: Readonly<Record<ProviderId, string>> = {
  stripe: 'whsec_local_development_secret',
  github: 'local-github-secret',
  shopify: 'local-shopify-secret',
  asaas: 'local-asaas-token',
  // Standard Webhooks secrets are base64 after `whsec_`.
  standard: `whsec_${Buffer.from('local-standard-webhooks-secret!!').toString('base64')}`,
};

/** The secret list in force for a provider: its environment variable, else the development default. */
export function localSecrets(provider: ProviderId, env: NodeJS.ProcessEnv = process.env): string[] {
  const configured = parseSecretList(env[SECRET_ENV_VARS[provider]]);
  return configured.length > 0 ? configured : [DEV_SECRETS[provider]];
}
