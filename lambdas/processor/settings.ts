/** The processor's settings, read once per cold start and validated up front. */
import { CLAIM_RETENTION_DEFAULT_SECONDS } from '../shared/claim-retention.js';
import { ConfigError, type Env, positiveInteger, required } from '../shared/config.js';
import { adapterNameProblem, tableNameProblem } from './extension-names.js';
import type { EffectAdapterName, TableRef } from './types.js';

/** One effect adapter as the construct configures it (`EFFECTS`). */
export interface EffectSettings {
  /** The service's endpoint; the adapter is not configured (effects using it are skipped) when unset. */
  readonly url: string | undefined;
  /** Whether the service returns the first result for a repeated `Idempotency-Key`. */
  readonly honoursIdempotencyKey: boolean;
}

export interface ProcessorSettings {
  readonly claimsTableName: string;
  /** Business table names by the name appliers use (`BUSINESS_TABLES`, JSON). */
  readonly tableNames: Readonly<Record<TableRef, string>>;
  /** Processing lease; must exceed the slowest handler (and the function's timeout). */
  readonly leaseSeconds: number;
  /** The queue's redrive `maxReceiveCount`: the attempt that reaches it marks the claim FAILED. */
  readonly maxReceiveCount: number;
  /** Effect adapters by name (`EFFECTS`, JSON). */
  readonly effects: Readonly<Record<EffectAdapterName, EffectSettings>>;
  /**
   * Claims are kept at least this long after each processing attempt and each failure: the DLQ's
   * retention plus a redrive margin, so a redrive always finds the claim with its step markers.
   */
  readonly claimRetentionSeconds: number;
  /** The payload archive bucket; archiving is off when unset. */
  readonly archiveBucket: string | undefined;
  /** Path-style S3 addressing, for S3-compatible local servers. */
  readonly archiveForcePathStyle: boolean;
}

export const PROCESSOR_DEFAULTS = {
  leaseSeconds: 120,
  maxReceiveCount: 5,
  claimRetentionSeconds: CLAIM_RETENTION_DEFAULT_SECONDS,
} as const;

/** A JSON object from the environment, or `{}` when the variable is unset. */
function jsonObject(env: Env, name: string): Record<string, unknown> {
  const raw = env[name]?.trim();
  if (!raw) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ConfigError(`environment variable ${name} must be a JSON object, got ${JSON.stringify(raw)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`environment variable ${name} must be a JSON object, got ${JSON.stringify(raw)}`);
  }
  return value as Record<string, unknown>;
}

/** `BUSINESS_TABLES`: `{"<name>": "<table name>"}`. */
function businessTables(env: Env): Record<TableRef, string> {
  const tables: Record<TableRef, string> = {};
  for (const [name, tableName] of Object.entries(jsonObject(env, 'BUSINESS_TABLES'))) {
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

/** `EFFECTS`: `{"<name>": {"url": "https://...", "honoursIdempotencyKey": true}}`. */
function effectSettings(env: Env): Record<EffectAdapterName, EffectSettings> {
  const effects: Record<EffectAdapterName, EffectSettings> = {};
  for (const [name, value] of Object.entries(jsonObject(env, 'EFFECTS'))) {
    const problem = adapterNameProblem(name);
    if (problem) throw new ConfigError(`environment variable EFFECTS: ${problem}`);
    const where = `environment variable EFFECTS: effect ${JSON.stringify(name)}`;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ConfigError(`${where} must be an object ({"url": ..., "honoursIdempotencyKey": ...})`);
    }
    const { url, honoursIdempotencyKey } = value as { url?: unknown; honoursIdempotencyKey?: unknown };
    if (honoursIdempotencyKey !== undefined && typeof honoursIdempotencyKey !== 'boolean') {
      throw new ConfigError(`${where}: honoursIdempotencyKey must be true or false`);
    }
    let parsedUrl: string | undefined;
    if (url !== undefined && url !== '') {
      try {
        parsedUrl = new URL(String(url)).toString();
      } catch {
        throw new ConfigError(`${where}: url must be a URL, got ${JSON.stringify(url)}`);
      }
    }
    effects[name] = { url: parsedUrl, honoursIdempotencyKey: honoursIdempotencyKey === true };
  }
  return effects;
}

export function loadProcessorSettings(env: Env = process.env): ProcessorSettings {
  return {
    claimsTableName: required(env, 'CLAIMS_TABLE_NAME'),
    tableNames: businessTables(env),
    leaseSeconds: positiveInteger(env, 'PROCESSING_LEASE_SECONDS', PROCESSOR_DEFAULTS.leaseSeconds),
    maxReceiveCount: positiveInteger(env, 'MAX_RECEIVE_COUNT', PROCESSOR_DEFAULTS.maxReceiveCount),
    effects: effectSettings(env),
    claimRetentionSeconds: positiveInteger(
      env,
      'CLAIM_RETENTION_SECONDS',
      PROCESSOR_DEFAULTS.claimRetentionSeconds,
    ),
    archiveBucket: env.ARCHIVE_BUCKET_NAME?.trim() || undefined,
    archiveForcePathStyle: env.ARCHIVE_FORCE_PATH_STYLE === 'true',
  };
}
