/** The processor's settings, read once per cold start and validated up front. */
import { CLAIM_RETENTION_DEFAULT_SECONDS } from '../shared/claim-retention.js';
import { ConfigError, type Env, positiveInteger, required } from '../shared/config.js';
import type { TableRef } from './types.js';

export interface ProcessorSettings {
  readonly claimsTableName: string;
  readonly tableNames: Readonly<Record<TableRef, string>>;
  /** Processing lease; must exceed the slowest handler (and the function's timeout). */
  readonly leaseSeconds: number;
  /** The queue's redrive `maxReceiveCount`: the attempt that reaches it marks the claim FAILED. */
  readonly maxReceiveCount: number;
  readonly ledgerUrl: string | undefined;
  readonly mailerUrl: string | undefined;
  /** Whether each effect service returns the first result for a repeated `Idempotency-Key`. */
  readonly ledgerHonoursIdempotencyKey: boolean;
  readonly mailerHonoursIdempotencyKey: boolean;
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

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new ConfigError(`environment variable ${name} must be true or false, got ${JSON.stringify(raw)}`);
}

function optionalUrl(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  try {
    return new URL(raw).toString();
  } catch {
    throw new ConfigError(`environment variable ${name} must be a URL, got ${JSON.stringify(raw)}`);
  }
}

export function loadProcessorSettings(env: Env = process.env): ProcessorSettings {
  return {
    claimsTableName: required(env, 'CLAIMS_TABLE_NAME'),
    tableNames: {
      payments: required(env, 'PAYMENTS_TABLE_NAME'),
      orders: required(env, 'ORDERS_TABLE_NAME'),
      resources: required(env, 'RESOURCES_TABLE_NAME'),
    },
    leaseSeconds: positiveInteger(env, 'PROCESSING_LEASE_SECONDS', PROCESSOR_DEFAULTS.leaseSeconds),
    maxReceiveCount: positiveInteger(env, 'MAX_RECEIVE_COUNT', PROCESSOR_DEFAULTS.maxReceiveCount),
    ledgerUrl: optionalUrl(env, 'LEDGER_URL'),
    mailerUrl: optionalUrl(env, 'MAILER_URL'),
    ledgerHonoursIdempotencyKey: flag(env, 'LEDGER_HONOURS_IDEMPOTENCY_KEY', true),
    mailerHonoursIdempotencyKey: flag(env, 'MAILER_HONOURS_IDEMPOTENCY_KEY', false),
    claimRetentionSeconds: positiveInteger(
      env,
      'CLAIM_RETENTION_SECONDS',
      PROCESSOR_DEFAULTS.claimRetentionSeconds,
    ),
    archiveBucket: env.ARCHIVE_BUCKET_NAME?.trim() || undefined,
    archiveForcePathStyle: env.ARCHIVE_FORCE_PATH_STYLE === 'true',
  };
}
