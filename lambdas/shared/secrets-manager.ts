/**
 * Signing secrets from AWS Secrets Manager: one secret per provider, named by ARN in
 * `WEBHOOK_SECRET_ARNS`, read with `GetSecretValue` and cached in memory for `maxAgeSeconds`.
 *
 * A secret's value is either JSON `{"current":"...","previous":"..."}` (`previous` optional: during a
 * rotation both are accepted; the values are taken as-is, commas included) or a plain string, read
 * as a comma-separated list like the environment variables of {@link EnvSecretSource}. The JSON form
 * may add `"accounts": {"<account>": {"current":"...","previous":"..."}}` for accounts with a secret of
 * their own (one per Shopify shop, one per GitHub hook); `current` may then be left out.
 *
 * Why a small cache of our own rather than Powertools' `getSecret`: on a failed refresh Powertools
 * keeps nothing, so every delivery during a Secrets Manager outage would pay the SDK's retries and
 * then be refused. Here a failed refresh keeps serving the last value read (a deleted secret does
 * not) and is retried after `errorRetrySeconds`, concurrent reads of one provider share one
 * request, and the two value formats need our own parsing anyway (no Powertools transform fits).
 *
 * It never throws: a provider whose secret is missing, unreadable or still the deploy-time
 * placeholder gets `[]`, which the receiver core answers with `500 not_configured`. The cause is
 * reported through `onError` (a structured log line by default); secret values are never logged.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { isProviderId, type ProviderId } from '../providers/types.js';
import { boundedRequests } from './request-timeouts.js';
import {
  EMPTY_SECRET_SET,
  EnvSecretSource,
  parseAccountSecrets,
  parseSecretList,
  type SecretSet,
  type SecretSource,
  secretsFor,
} from './secrets.js';
import { ConfigError, WEBHOOK_SECRET_ARNS } from './settings.js';

/** The environment variable naming each provider's secret: JSON `{"stripe":"arn:aws:secretsmanager:..."}`. */
export const SECRET_ARNS_ENV_VAR = WEBHOOK_SECRET_ARNS.name;

/**
 * The value the stack stores in each secret at deploy time (`{"current":"REPLACE_ME"}`). It is never
 * accepted as a secret: a provider still holding it is "not configured", never "signed with a
 * publicly known key".
 */
export const SECRET_PLACEHOLDER = 'REPLACE_ME';

/** How long a secret read is reused. A rotation must wait this long between steps (docs/deploy.md). */
export const DEFAULT_SECRET_MAX_AGE_SECONDS = 300;
/** After a failed read, how long to wait before asking Secrets Manager again. */
export const DEFAULT_SECRET_ERROR_RETRY_SECONDS = 10;

export interface SecretReadError {
  readonly provider: ProviderId;
  readonly secretArn: string;
  /** `ResourceNotFoundException`, `AccessDeniedException`, `InvalidSecretValue`, ... */
  readonly errorName: string;
  readonly message: string;
  /** Whether a previously read value is still being served. */
  readonly servingLastKnownValue: boolean;
}

export interface SecretsManagerSecretSourceOptions {
  /** Secret ARN (or name) per provider; providers without one have no secrets. */
  readonly secretArns: Partial<Readonly<Record<ProviderId, string>>>;
  /** @default a client with short timeouts, region from the environment */
  readonly client?: SecretsManagerClient;
  /** @default 300 ({@link DEFAULT_SECRET_MAX_AGE_SECONDS}) */
  readonly maxAgeSeconds?: number;
  /** @default 10 ({@link DEFAULT_SECRET_ERROR_RETRY_SECONDS}) */
  readonly errorRetrySeconds?: number;
  /** Epoch milliseconds. @default Date.now */
  readonly clock?: () => number;
  /** @default a JSON line on stderr (CloudWatch Logs in Lambda) */
  readonly onError?: (error: SecretReadError) => void;
}

interface CacheEntry {
  readonly set: SecretSet;
  readonly expiresAt: number;
  /** True when `secrets` were read from Secrets Manager (not the empty answer to a failure). */
  readonly known: boolean;
}

class InvalidSecretValueError extends Error {
  override readonly name = 'InvalidSecretValue';
}

/** Short timeouts and few retries: the whole delivery must answer within the provider's 5-10 s. */
export function defaultSecretsManagerClient(): SecretsManagerClient {
  return new SecretsManagerClient({
    maxAttempts: 2,
    requestHandler: boundedRequests(2_000),
  });
}

const logReadError = ({ message, ...details }: SecretReadError): void => {
  console.error(
    JSON.stringify({
      level: 'ERROR',
      message: 'could not read the webhook signing secret',
      ...details,
      errorMessage: message,
    }),
  );
};

/**
 * `{"current":"a","previous":"b"}` -> `['a', 'b']`; `a,b` -> `['a', 'b']`. Blank entries and the
 * placeholder are dropped. Throws {@link InvalidSecretValueError} for JSON that is not of that shape.
 */
export function parseSecretValue(value: string): string[] {
  return [...parseSecretSet(value).secrets];
}

const usable = (candidates: readonly string[]): string[] => [
  ...new Set(candidates.map((s) => s.trim()).filter((s) => s.length > 0 && s !== SECRET_PLACEHOLDER)),
];

/** The provider-wide secrets and the per-account ones (`accounts`), placeholders dropped. */
export function parseSecretSet(value: string): SecretSet {
  const text = value.trim();
  if (!text.startsWith('{')) return { secrets: usable(parseSecretList(text)), accounts: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InvalidSecretValueError('the secret looks like JSON but does not parse');
  }
  const { current, previous, accounts } = (parsed ?? {}) as {
    current?: unknown;
    previous?: unknown;
    accounts?: unknown;
  };
  const currentOk = typeof current === 'string' || (current === undefined && accounts !== undefined);
  if (!currentOk || (previous !== undefined && typeof previous !== 'string')) {
    throw new InvalidSecretValueError(
      'the secret JSON must be {"current": string, "previous"?: string, "accounts"?: {...}}',
    );
  }
  let perAccount: Record<string, string[]>;
  try {
    perAccount = parseAccountSecrets(accounts, 'accounts');
  } catch (error) {
    throw new InvalidSecretValueError(error instanceof Error ? error.message : String(error));
  }
  const own: Record<string, string[]> = {};
  for (const [account, list] of Object.entries(perAccount)) {
    const secrets = usable(list);
    if (secrets.length > 0) own[account] = secrets;
  }
  return { secrets: usable([String(current ?? ''), String(previous ?? '')]), accounts: own };
}

export class SecretsManagerSecretSource implements SecretSource {
  private readonly secretArns: Partial<Readonly<Record<ProviderId, string>>>;
  private readonly client: SecretsManagerClient;
  private readonly maxAgeMs: number;
  private readonly errorRetryMs: number;
  private readonly clock: () => number;
  private readonly onError: (error: SecretReadError) => void;
  private readonly cache = new Map<ProviderId, CacheEntry>();
  private readonly inFlight = new Map<ProviderId, Promise<SecretSet>>();

  constructor(options: SecretsManagerSecretSourceOptions) {
    this.secretArns = { ...options.secretArns };
    this.client = options.client ?? defaultSecretsManagerClient();
    this.maxAgeMs = (options.maxAgeSeconds ?? DEFAULT_SECRET_MAX_AGE_SECONDS) * 1_000;
    this.errorRetryMs = (options.errorRetrySeconds ?? DEFAULT_SECRET_ERROR_RETRY_SECONDS) * 1_000;
    this.clock = options.clock ?? Date.now;
    this.onError = options.onError ?? logReadError;
  }

  async getSecrets(provider: ProviderId, account?: string): Promise<readonly string[]> {
    return secretsFor(await this.load(provider), account);
  }

  async hasAccountSecrets(provider: ProviderId): Promise<boolean> {
    return Object.keys((await this.load(provider)).accounts).length > 0;
  }

  private async load(provider: ProviderId): Promise<SecretSet> {
    const secretArn = Object.hasOwn(this.secretArns, provider) ? this.secretArns[provider] : undefined;
    if (!secretArn) return EMPTY_SECRET_SET;
    const cached = this.cache.get(provider);
    if (cached && cached.expiresAt > this.clock()) return cached.set;
    let pending = this.inFlight.get(provider);
    if (!pending) {
      pending = this.refresh(provider, secretArn, cached).finally(() => this.inFlight.delete(provider));
      this.inFlight.set(provider, pending);
    }
    return pending;
  }

  private async refresh(
    provider: ProviderId,
    secretArn: string,
    previous: CacheEntry | undefined,
  ): Promise<SecretSet> {
    try {
      const output = await this.client.send(new GetSecretValueCommand({ SecretId: secretArn }));
      const value =
        output.SecretString ??
        (output.SecretBinary ? Buffer.from(output.SecretBinary).toString('utf8') : undefined);
      if (value === undefined) throw new InvalidSecretValueError('the secret has no value');
      const set = parseSecretSet(value);
      // Still the placeholder (or blank): look again soon, so a secret just put is used within seconds.
      const configured = set.secrets.length > 0 || Object.keys(set.accounts).length > 0;
      const ttl = configured ? this.maxAgeMs : this.errorRetryMs;
      this.cache.set(provider, { set, expiresAt: this.clock() + ttl, known: true });
      return set;
    } catch (error) {
      const errorName = error instanceof Error ? error.name : 'Error';
      // A deleted secret is the operator's decision, not an outage: stop accepting its old value.
      const lastKnown =
        errorName === 'ResourceNotFoundException' || !previous?.known ? undefined : previous.set;
      const set = lastKnown ?? EMPTY_SECRET_SET;
      this.cache.set(provider, {
        set,
        expiresAt: this.clock() + this.errorRetryMs,
        known: lastKnown !== undefined,
      });
      this.onError({
        provider,
        secretArn,
        errorName,
        message: error instanceof Error ? error.message : String(error),
        servingLastKnownValue: lastKnown !== undefined,
      });
      return set;
    }
  }
}

/** Reads `WEBHOOK_SECRET_ARNS`; an invalid value is a configuration error naming the variable. */
export function parseSecretArns(json: string): Partial<Record<ProviderId, string>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new ConfigError(`environment variable ${SECRET_ARNS_ENV_VAR} is not valid JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`${SECRET_ARNS_ENV_VAR} must be a JSON object of provider -> secret ARN`);
  }
  const result: Partial<Record<ProviderId, string>> = {};
  for (const [provider, arn] of Object.entries(parsed)) {
    if (!isProviderId(provider)) {
      throw new ConfigError(`${SECRET_ARNS_ENV_VAR} names unknown provider ${JSON.stringify(provider)}`);
    }
    if (typeof arn !== 'string' || arn.trim() === '') {
      throw new ConfigError(`${SECRET_ARNS_ENV_VAR}.${provider} must be a secret ARN`);
    }
    result[provider] = arn.trim();
  }
  return result;
}

/**
 * The deployed stack sets `WEBHOOK_SECRET_ARNS`: secrets come from Secrets Manager. Without it
 * (tests, the local stack) they come from the `WEBHOOK_SECRET_*` environment variables.
 */
export function secretSourceFromEnvironment(
  env: Readonly<Record<string, string | undefined>> = process.env,
  options: Omit<SecretsManagerSecretSourceOptions, 'secretArns'> = {},
): SecretSource {
  const arns = env[SECRET_ARNS_ENV_VAR]?.trim();
  if (!arns) return new EnvSecretSource(env);
  return new SecretsManagerSecretSource({ ...options, secretArns: parseSecretArns(arns) });
}
