/**
 * Where signing secrets come from. Each provider may have several (current and previous, during a
 * rotation); a delivery signed with any of them is accepted.
 */
import type { ProviderId } from '../providers/types';

export interface SecretSource {
  /** Every secret currently accepted for the provider; empty when none is configured. */
  getSecrets(provider: ProviderId): Promise<readonly string[]>;
}

/** Environment variable per provider (Asaas sends a static token rather than signing). */
export const SECRET_ENV_VARS: Readonly<Record<ProviderId, string>> = {
  stripe: 'WEBHOOK_SECRET_STRIPE',
  github: 'WEBHOOK_SECRET_GITHUB',
  shopify: 'WEBHOOK_SECRET_SHOPIFY',
  asaas: 'WEBHOOK_TOKEN_ASAAS',
  standard: 'WEBHOOK_SECRET_STANDARD',
};

/** `a,b` -> `['a', 'b']`: comma-separated, surrounding blanks trimmed, empty entries dropped. */
export function parseSecretList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((secret) => secret.trim())
    .filter((secret) => secret.length > 0);
}

/** Secrets from environment variables: for the local stack and tests, never for a deployed stack. */
export class EnvSecretSource implements SecretSource {
  constructor(private readonly env: Readonly<Record<string, string | undefined>> = process.env) {}

  async getSecrets(provider: ProviderId): Promise<readonly string[]> {
    return parseSecretList(this.env[SECRET_ENV_VARS[provider]]);
  }
}

/** Fixed secrets, for tests and embedding. */
export class StaticSecretSource implements SecretSource {
  constructor(private readonly secrets: Partial<Record<ProviderId, readonly string[]>>) {}

  async getSecrets(provider: ProviderId): Promise<readonly string[]> {
    return this.secrets[provider] ?? [];
  }
}
