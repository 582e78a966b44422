/**
 * Where signing secrets come from. Each provider may have several (current and previous, during a
 * rotation); a delivery signed with any of them is accepted.
 */
import { type ProviderTable, perProvider, requireProvider } from '../providers/index.js';
import type { ProviderId } from '../providers/types.js';
import { ConfigError } from './settings.js';

export interface SecretSource {
  /**
   * Every secret currently accepted for the provider; empty when none is configured. With an
   * `account` that has secrets of its own (a Shopify custom app per shop, a GitHub hook), only
   * those: the provider-wide ones are not accepted for it, so a body signed for one account fails
   * verification when replayed under another (docs/rules.md, "Tenancy").
   */
  getSecrets(provider: ProviderId, account?: string): Promise<readonly string[]>;
  /** Whether any account of the provider has secrets of its own. */
  hasAccountSecrets?(provider: ProviderId): Promise<boolean>;
}

/** A provider's secrets: the provider-wide list and the lists of accounts that have their own. */
export interface SecretSet {
  readonly secrets: readonly string[];
  readonly accounts: Readonly<Record<string, readonly string[]>>;
}

export const EMPTY_SECRET_SET: SecretSet = { secrets: [], accounts: {} };

/** The secrets accepted for `account`: its own when it has any, else the provider-wide ones. */
export function secretsFor(set: SecretSet, account: string | undefined): readonly string[] {
  if (account !== undefined && Object.hasOwn(set.accounts, account)) return set.accounts[account] ?? [];
  return set.secrets;
}

/** Per-account secrets for the local stack and tests: JSON `{"<account>": "current,previous"}`. */
export function accountSecretsEnvVar(provider: ProviderId): string {
  return `WEBHOOK_ACCOUNT_SECRETS_${provider.toUpperCase()}`;
}

/**
 * `{"shop-a.myshopify.com": "s1,s0", "12345": ["s2"], "x": {"current": "s3", "previous": "s4"}}`
 * -> account -> secrets. Accounts are matched exactly (Shopify shop domains lower-case).
 */
export function parseAccountSecrets(value: unknown, name: string): Record<string, string[]> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ConfigError(`${name} must be a JSON object of account -> secrets`);
  const result: Record<string, string[]> = {};
  for (const [account, entry] of Object.entries(value)) {
    let list: string[];
    if (typeof entry === 'string') list = parseSecretList(entry);
    else if (Array.isArray(entry) && entry.every((e) => typeof e === 'string'))
      list = entry.map((e) => e.trim());
    else if (
      typeof entry === 'object' &&
      entry !== null &&
      typeof (entry as { current?: unknown }).current === 'string'
    ) {
      const { current, previous } = entry as { current: string; previous?: unknown };
      list = [current, typeof previous === 'string' ? previous : ''].map((e) => e.trim());
    } else throw new ConfigError(`${name}.${account} must be "a,b", ["a","b"] or {"current","previous"}`);
    const secrets = list.filter((secret) => secret.length > 0);
    if (secrets.length === 0) throw new ConfigError(`${name}.${account} names no secret`);
    result[account] = [...new Set(secrets)];
  }
  return result;
}

function parseAccountSecretsEnv(text: string | undefined, name: string): Record<string, string[]> {
  if (text === undefined || text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError(`environment variable ${name} is not valid JSON`);
  }
  return parseAccountSecrets(parsed, name);
}

/** The environment variable holding a provider's secrets: its module's `secret.envVar`. */
export function secretEnvVar(provider: ProviderId): string {
  return requireProvider(provider).secret.envVar;
}

/** Environment variable per provider, from the registry (`WEBHOOK_SECRET_<ID>` unless the module names another). */
export const SECRET_ENV_VARS: ProviderTable<string> = perProvider((p) => p.secret.envVar);

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

  private set(provider: ProviderId): SecretSet {
    const name = accountSecretsEnvVar(provider);
    return {
      secrets: parseSecretList(this.env[secretEnvVar(provider)]),
      accounts: parseAccountSecretsEnv(this.env[name], name),
    };
  }

  async getSecrets(provider: ProviderId, account?: string): Promise<readonly string[]> {
    return secretsFor(this.set(provider), account);
  }

  async hasAccountSecrets(provider: ProviderId): Promise<boolean> {
    return Object.keys(this.set(provider).accounts).length > 0;
  }
}

/** Fixed secrets, for tests and embedding. */
export class StaticSecretSource implements SecretSource {
  constructor(
    private readonly secrets: Partial<Record<ProviderId, readonly string[]>>,
    private readonly accounts: Partial<Record<ProviderId, Readonly<Record<string, readonly string[]>>>> = {},
  ) {}

  async getSecrets(provider: ProviderId, account?: string): Promise<readonly string[]> {
    return secretsFor(
      { secrets: this.secrets[provider] ?? [], accounts: this.accounts[provider] ?? {} },
      account,
    );
  }

  async hasAccountSecrets(provider: ProviderId): Promise<boolean> {
    return Object.keys(this.accounts[provider] ?? {}).length > 0;
  }
}
