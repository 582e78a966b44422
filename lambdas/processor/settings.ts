/**
 * The processor's settings, read once per cold start and validated up front. The one list of its
 * variables (lambdas/shared/settings.ts): the runtime loads them, the event-processor construct
 * writes them with `toEnvironment`, the stack checks its props against their rules and the local
 * runner overrides them by `ENV` name.
 */
import { HMAC_PROVIDERS } from '../providers/configured.js';
import { CLAIM_RETENTION_DEFAULT_SECONDS } from '../shared/claim-retention.js';
import {
  ARCHIVE_BUCKET,
  ARCHIVE_FORCE_PATH_STYLE,
  CLAIMS_TABLE,
  ConfigError,
  claimRetention,
  defineSettings,
  type Env,
  FAULT_POINTS,
  FAULT_POINTS_STATE_DIR,
  integer,
  optionalText,
  parsed,
  type SettingsOf,
} from '../shared/settings.js';
import { EFFECT_MARGIN_MS } from '../shared/timing-rules.js';
import { type EffectHeaderSetting, parseEffectHeaders } from './effect-headers.js';
import { DEFAULT_EFFECT_TIMEOUT_MS } from './effects.js';
import { adapterNameProblem, tableNameProblem } from './extension-names.js';
import type { EffectAdapterName, TableRef } from './types.js';

/** One effect adapter as the construct configures it (`EFFECTS`). */
export interface EffectSettings {
  /** The service's endpoint; the adapter is not configured (effects using it are skipped) when unset. */
  readonly url: string | undefined;
  /** Whether the service returns the first result for a repeated `Idempotency-Key`. */
  readonly honoursIdempotencyKey: boolean;
  /** The longest one call may take (`timeoutSeconds`, whole seconds). @default 5000 */
  readonly timeoutMs: number;
  /** Headers sent with each call (./effect-headers.ts). @default none */
  readonly headers: Readonly<Record<string, EffectHeaderSetting>>;
  /** Answers that fail the event now instead of being retried. @default none */
  readonly permanentStatuses: readonly number[];
}

/** The longest an effect's call may be given, whatever the lease: Lambda's own 15-minute cap. */
const EFFECT_TIMEOUT_MAX_SECONDS = 900;

/** Plain seconds and counts: the construct's `Duration` defaults derive from these. */
export const DEFAULTS = {
  /** Must exceed the slowest applier (and the function's timeout). */
  leaseSeconds: 120,
  maxReceiveCount: 5,
  claimRetentionSeconds: CLAIM_RETENTION_DEFAULT_SECONDS,
} as const;

/** @deprecated the same object as {@link DEFAULTS}, under its former name. */
export const PROCESSOR_DEFAULTS = DEFAULTS;

/** The queue's redrive policy takes 1 to 1000 receives. */
export const MAX_RECEIVE_COUNT_LIMIT = 1_000;

/** A JSON object from a variable, or `{}` when it is unset. */
function jsonObject(name: string, raw: string | undefined): Record<string, unknown> {
  if (!raw?.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    // Not JSON: refused below, as any value that is not an object.
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(
      `environment variable ${name} must be a JSON object, got ${JSON.stringify(raw.trim())}`,
    );
  }
  return value as Record<string, unknown>;
}

/** `BUSINESS_TABLES`: `{"<name>": "<table name>"}`. */
function parseBusinessTables(raw: string | undefined): Record<TableRef, string> {
  const tables: Record<TableRef, string> = {};
  for (const [name, tableName] of Object.entries(jsonObject('BUSINESS_TABLES', raw))) {
    const problem = tableNameProblem(name);
    if (problem) throw new ConfigError(`environment variable BUSINESS_TABLES: ${problem}`);
    if (typeof tableName !== 'string' || !tableName.trim()) {
      throw new ConfigError(
        `environment variable BUSINESS_TABLES: table ${JSON.stringify(name)} needs a table name`,
      );
    }
    tables[name] = tableName.trim();
  }
  return tables;
}

/**
 * `EFFECTS`: `{"<name>": {"url": "https://...", "honoursIdempotencyKey": true, "timeoutSeconds": 5,
 * "headers": {...}, "permanentStatuses": [400, 422]}}`.
 */
function parseEffects(raw: string | undefined): Record<EffectAdapterName, EffectSettings> {
  const effects: Record<EffectAdapterName, EffectSettings> = {};
  for (const [name, value] of Object.entries(jsonObject('EFFECTS', raw))) {
    const problem = adapterNameProblem(name);
    if (problem) throw new ConfigError(`environment variable EFFECTS: ${problem}`);
    const where = `environment variable EFFECTS: effect ${JSON.stringify(name)}`;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ConfigError(`${where} must be an object ({"url": ..., "honoursIdempotencyKey": ...})`);
    }
    const { url, honoursIdempotencyKey, timeoutSeconds, headers, permanentStatuses } = value as {
      url?: unknown;
      honoursIdempotencyKey?: unknown;
      timeoutSeconds?: unknown;
      headers?: unknown;
      permanentStatuses?: unknown;
    };
    const statusProblem = permanentStatusesProblem(permanentStatuses);
    if (statusProblem) throw new ConfigError(`${where}: ${statusProblem}`);
    if (honoursIdempotencyKey !== undefined && typeof honoursIdempotencyKey !== 'boolean') {
      throw new ConfigError(`${where}: honoursIdempotencyKey must be true or false`);
    }
    if (
      timeoutSeconds !== undefined &&
      // Number.isInteger is false for anything that is not a number.
      (!Number.isInteger(timeoutSeconds) ||
        (timeoutSeconds as number) < 1 ||
        (timeoutSeconds as number) > EFFECT_TIMEOUT_MAX_SECONDS)
    ) {
      throw new ConfigError(
        `${where}: timeoutSeconds must be a whole number of seconds from 1 to ${EFFECT_TIMEOUT_MAX_SECONDS}, got ${JSON.stringify(timeoutSeconds)}`,
      );
    }
    let parsedUrl: string | undefined;
    if (url !== undefined && url !== '') {
      try {
        parsedUrl = new URL(String(url)).toString();
      } catch {
        throw new ConfigError(`${where}: url must be a URL, got ${JSON.stringify(url)}`);
      }
    }
    effects[name] = {
      url: parsedUrl,
      honoursIdempotencyKey: honoursIdempotencyKey === true,
      timeoutMs: typeof timeoutSeconds === 'number' ? timeoutSeconds * 1000 : DEFAULT_EFFECT_TIMEOUT_MS,
      headers: parseEffectHeaders(where, headers),
      permanentStatuses: (permanentStatuses as number[] | undefined) ?? [],
    };
  }
  return effects;
}

/**
 * Why a `permanentStatuses` list is not one, or undefined. Only 4xx and 5xx answers fail a call
 * (a 3xx is never followed and always fails, so it may be listed too).
 */
export function permanentStatusesProblem(statuses: unknown): string | undefined {
  if (statuses === undefined) return undefined;
  if (
    !Array.isArray(statuses) ||
    !statuses.every((status) => Number.isInteger(status) && status >= 300 && status <= 599)
  )
    return `permanentStatuses must be a list of HTTP statuses from 300 to 599, got ${JSON.stringify(statuses)}`;
  return undefined;
}

/**
 * The JSON the construct writes for `BUSINESS_TABLES` / `EFFECTS`: a string, usually with deploy-time
 * tokens in it (`Stack.toJsonString`), so it is written as given.
 */
const asWritten = (json: string): string => json;

const PROCESSOR = defineSettings({
  claimsTableName: CLAIMS_TABLE,
  /** Business table names by the name appliers use. */
  tableNames: parsed<Readonly<Record<TableRef, string>>, string>(
    'BUSINESS_TABLES',
    parseBusinessTables,
    asWritten,
  ),
  /** Effect adapters by name. */
  effects: parsed<Readonly<Record<EffectAdapterName, EffectSettings>>, string>(
    'EFFECTS',
    parseEffects,
    asWritten,
  ),
  /** Processing lease; must exceed the slowest applier (and the function's timeout). */
  leaseSeconds: integer('PROCESSING_LEASE_SECONDS', { default: DEFAULTS.leaseSeconds }),
  /** The queue's redrive `maxReceiveCount`: the attempt that reaches it marks the claim FAILED. */
  maxReceiveCount: integer('MAX_RECEIVE_COUNT', {
    default: DEFAULTS.maxReceiveCount,
    max: MAX_RECEIVE_COUNT_LIMIT,
  }),
  /**
   * Claims are kept at least this long after each processing attempt and each failure: the DLQ's
   * retention plus a redrive margin, so a redrive always finds the claim with its step markers.
   */
  claimRetentionSeconds: claimRetention(DEFAULTS.claimRetentionSeconds),
  /** The payload archive bucket; archiving is off when unset. */
  archiveBucket: ARCHIVE_BUCKET,
  /** Path-style S3 addressing, for S3-compatible local servers. */
  archiveForcePathStyle: ARCHIVE_FORCE_PATH_STYLE,
  /**
   * The event queue's DLQ: an event that can never succeed is moved there at once (./failures.ts).
   * @default unset: such an event is retried until the redrive policy moves it
   */
  deadLetterQueueUrl: optionalText('DEAD_LETTER_QUEUE_URL'),
  /**
   * Providers by configuration, as the receiver has them: the processor reads their payloads with
   * the same reader (lambdas/providers/configured.ts; the registry reads the variable when it loads).
   */
  hmacProviders: HMAC_PROVIDERS,
  faultPoints: FAULT_POINTS,
  faultPointsStateDirectory: FAULT_POINTS_STATE_DIR,
});

export type ProcessorSettings = SettingsOf<typeof PROCESSOR.settings>;
/** The variables' names, by setting: `ENV.tableNames` is `BUSINESS_TABLES`. */
export const ENV = PROCESSOR.ENV;
/** The environment -> {@link ProcessorSettings}. */
export const schema = PROCESSOR.schema;
/** The processor's settings -> its environment variables (what the event-processor construct writes). */
export const toEnvironment = PROCESSOR.toEnvironment;
/** The rules of single settings, for the stack's synth-time checks (`ruleBroken`). */
export const SETTINGS = PROCESSOR.settings;

/** Reads and checks the processor's environment; a ConfigError names each bad variable. */
export function loadProcessorSettings(env: Env = process.env): ProcessorSettings {
  const settings = PROCESSOR.load(env);
  // The lease is renewed before each effect that may act twice: its call must end before it runs out.
  for (const [name, effect] of Object.entries(settings.effects)) {
    if (effect.url !== undefined && effect.timeoutMs + EFFECT_MARGIN_MS >= settings.leaseSeconds * 1000) {
      throw new ConfigError(
        `environment variable EFFECTS: effect ${JSON.stringify(name)} may take ${effect.timeoutMs} ms, which must be shorter than PROCESSING_LEASE_SECONDS (${settings.leaseSeconds} s) by more than ${EFFECT_MARGIN_MS} ms: its call must end while the worker still holds the claim`,
      );
    }
  }
  return settings;
}
