/** The processor's settings, read once per cold start and validated up front. */
import { ConfigError, type Env, positiveInteger, required } from '../shared/config';
import type { TableRef } from './types';

export interface ProcessorSettings {
  readonly claimsTableName: string;
  readonly tableNames: Readonly<Record<TableRef, string>>;
  /** Processing lease; must exceed the slowest handler (and the function's timeout). */
  readonly leaseSeconds: number;
  /** The queue's redrive `maxReceiveCount`: the attempt that reaches it marks the claim FAILED. */
  readonly maxReceiveCount: number;
  readonly ledgerUrl: string | undefined;
  readonly mailerUrl: string | undefined;
  /** The payload archive bucket; archiving is off when unset. */
  readonly archiveBucket: string | undefined;
  /** Path-style S3 addressing, for S3-compatible local servers. */
  readonly archiveForcePathStyle: boolean;
}

export const PROCESSOR_DEFAULTS = { leaseSeconds: 120, maxReceiveCount: 5 } as const;

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
    archiveBucket: env.ARCHIVE_BUCKET_NAME?.trim() || undefined,
    archiveForcePathStyle: env.ARCHIVE_FORCE_PATH_STYLE === 'true',
  };
}
