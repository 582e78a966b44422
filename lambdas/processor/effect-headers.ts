/**
 * The headers an HTTP effect adapter sends besides its own (`content-type`, `idempotency-key`): a
 * static value (an API version, a tenant id: it is in the template, so never a credential), or a
 * value read from AWS Secrets Manager at run time (a bearer token, an API key), so the credential is
 * in the template only as the secret's ARN.
 *
 * In `EFFECTS` (written by the construct's `effects[<name>].headers`):
 *   {"authorization": {"secretArn": "arn:aws:secretsmanager:...", "jsonField": "token", "prefix": "Bearer "},
 *    "x-api-version": {"value": "2024-06-01"}}
 *
 * A secret is read with `GetSecretValue` and kept for five minutes. A failed read keeps serving the
 * last value read; with none, the call is not made (`EffectError` with `performed: 'no'`: a retry is
 * safe for any effect). A 401 or 403 answer forgets the cached value, so a rotated secret is read
 * again on the retry rather than after five minutes.
 */
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigError } from '../shared/settings.js';
import type { EffectHeaderSource } from './effects.js';
import { RESERVED_EFFECT_HEADERS } from './effects.js';

/** One configured header: a static value, or a secret's value (a JSON field of it, with a prefix). */
export type EffectHeaderSetting =
  | { readonly value: string }
  | { readonly secretArn: string; readonly jsonField?: string; readonly prefix?: string };

/** RFC 9110's token: what a header name may hold. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Why `name` cannot be a configured header, or undefined when it can. */
export function effectHeaderNameProblem(name: string): string | undefined {
  if (!HEADER_NAME.test(name)) return `header name ${JSON.stringify(name)} is not a valid HTTP header name`;
  if (RESERVED_EFFECT_HEADERS.has(name.toLowerCase()))
    return `header ${JSON.stringify(name)} is set by the adapter itself and cannot be configured`;
  return undefined;
}

/** Why `value` cannot be sent as a header value (CR, LF or NUL would split or end the header). */
export function effectHeaderValueProblem(value: string): string | undefined {
  return /[\r\n\0]/.test(value) ? 'a header value may not hold CR, LF or NUL' : undefined;
}

/** `headers` of one adapter in `EFFECTS`, checked; names in lower case. */
export function parseEffectHeaders(where: string, raw: unknown): Record<string, EffectHeaderSetting> {
  if (raw === undefined) return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ConfigError(`${where}: headers must be an object of header name -> {"value"} or {"secretArn"}`);
  const headers: Record<string, EffectHeaderSetting> = {};
  for (const [name, setting] of Object.entries(raw)) {
    const problem = effectHeaderNameProblem(name);
    if (problem) throw new ConfigError(`${where}: ${problem}`);
    const at = `${where}: header ${JSON.stringify(name)}`;
    const { value, secretArn, jsonField, prefix } = (setting ?? {}) as Record<string, unknown>;
    if (typeof value === 'string' && secretArn === undefined) {
      const valueProblem = effectHeaderValueProblem(value);
      if (valueProblem) throw new ConfigError(`${at}: ${valueProblem}`);
      headers[name.toLowerCase()] = { value };
    } else if (typeof secretArn === 'string' && secretArn.trim() !== '' && value === undefined) {
      if (jsonField !== undefined && (typeof jsonField !== 'string' || jsonField === ''))
        throw new ConfigError(`${at}: jsonField must be a non-empty string`);
      if (prefix !== undefined && (typeof prefix !== 'string' || effectHeaderValueProblem(prefix)))
        throw new ConfigError(`${at}: prefix must be a string without CR, LF or NUL`);
      headers[name.toLowerCase()] = {
        secretArn: secretArn.trim(),
        ...(jsonField === undefined ? {} : { jsonField: jsonField as string }),
        ...(prefix === undefined ? {} : { prefix: prefix as string }),
      };
    } else {
      throw new ConfigError(
        `${at} must be {"value": "..."} or {"secretArn": "...", "jsonField"?, "prefix"?}`,
      );
    }
  }
  return headers;
}

/** The header's value from the secret's text: the whole (trimmed) string, or one field of its JSON. */
export function headerValueFromSecret(secretText: string, jsonField: string | undefined): string {
  if (jsonField === undefined) return secretText.trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(secretText);
  } catch {
    throw new Error(`the secret is not JSON, so it has no field ${JSON.stringify(jsonField)}`);
  }
  const field = (parsed as Record<string, unknown> | null)?.[jsonField];
  if (typeof field !== 'string' || field.trim() === '')
    throw new Error(`the secret's JSON has no string field ${JSON.stringify(jsonField)}`);
  return field.trim();
}

/** How long a secret read is reused. */
export const EFFECT_SECRET_MAX_AGE_MS = 5 * 60_000;

export interface SecretReader {
  /** The secret's string value (`SecretString`). */
  read(secretArn: string): Promise<string>;
}

/** Reads secrets with `GetSecretValue`: short timeouts, few retries (an effect's call waits on it). */
export function secretsManagerReader(client?: SecretsManagerClient): SecretReader {
  let sdk = client;
  return {
    async read(secretArn) {
      // Loaded on the first read: a processor whose adapters read no secret never evaluates the client.
      const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
      sdk ??= new SecretsManagerClient({
        maxAttempts: 2,
        requestHandler: { connectionTimeout: 1_000, requestTimeout: 2_000, throwOnRequestTimeout: true },
      });
      const answer = await sdk.send(new GetSecretValueCommand({ SecretId: secretArn }));
      if (typeof answer.SecretString !== 'string')
        throw new Error('the secret has no SecretString (a binary secret cannot be a header)');
      return answer.SecretString;
    },
  };
}

interface Cached {
  readonly text: string;
  readonly readAt: number;
}

/** Secret texts by ARN, shared by the header sources of one processor. */
export type SecretCache = Map<string, Cached>;

/**
 * The header source of one adapter. Secrets are shared across headers (and adapters, when one
 * reader and cache are passed to all) and read at most once at a time.
 */
export function effectHeaderSource(
  headers: Readonly<Record<string, EffectHeaderSetting>>,
  reader: SecretReader,
  options: { readonly clock?: () => number; readonly cache?: SecretCache } = {},
): EffectHeaderSource | undefined {
  if (Object.keys(headers).length === 0) return undefined;
  const clock = options.clock ?? Date.now;
  const cache: SecretCache = options.cache ?? new Map();
  const pending = new Map<string, Promise<string>>();
  const secretText = async (arn: string): Promise<string> => {
    const cached = cache.get(arn);
    if (cached && clock() - cached.readAt < EFFECT_SECRET_MAX_AGE_MS) return cached.text;
    let reading = pending.get(arn);
    if (!reading) {
      reading = reader.read(arn).finally(() => pending.delete(arn));
      pending.set(arn, reading);
    }
    try {
      const text = await reading;
      cache.set(arn, { text, readAt: clock() });
      return text;
    } catch (error) {
      // Serve the last value read through an outage; with none, the call is not made.
      if (cached) return cached.text;
      throw new Error(
        `secret ${arn} could not be read: ${(error as Error).name}: ${(error as Error).message}`,
      );
    }
  };
  return {
    async headers() {
      const values: Record<string, string> = {};
      for (const [name, setting] of Object.entries(headers)) {
        if ('value' in setting) {
          values[name] = setting.value;
          continue;
        }
        const value = `${setting.prefix ?? ''}${headerValueFromSecret(await secretText(setting.secretArn), setting.jsonField)}`;
        const problem = effectHeaderValueProblem(value);
        if (problem) throw new Error(`header ${name} from secret ${setting.secretArn}: ${problem}`);
        values[name] = value;
      }
      return values;
    },
    refresh() {
      for (const setting of Object.values(headers))
        if ('secretArn' in setting) cache.delete(setting.secretArn);
    },
  };
}
