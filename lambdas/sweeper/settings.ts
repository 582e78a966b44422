/** The sweeper's settings, read once per cold start and validated up front. */
import { ConfigError, type Env, positiveInteger, required } from '../shared/config.js';

export interface SweeperSettings {
  readonly claimsTableName: string;
  readonly eventQueueUrl: string;
  /** Where stored bodies are (claim checks, the processor's archive); without it nothing can be re-sent. */
  readonly archiveBucket: string | undefined;
  readonly archiveForcePathStyle: boolean;
  /**
   * A RECEIVED claim is stuck this long after its receiver lease ran out (the receiver died or gave
   * the claim back after a failed send, and no provider retry took it over).
   */
  readonly receivedGraceMs: number;
  /**
   * A PROCESSING claim is stuck this long after its lease ran out. Longer than the queue's visibility
   * timeout: a worker that failed gives the lease back at once, and SQS redelivers only after it.
   */
  readonly processingGraceMs: number;
  /** An ENQUEUED claim is stuck when no processor took it this long after it was queued. */
  readonly enqueuedStaleMs: number;
  /** The sweeper re-sends one event at most this many times, then reports it stuck. */
  readonly maxRequeues: number;
  /** Claims read per run at most; the rest wait for the next run. */
  readonly maxClaimsPerRun: number;
}

export const SWEEPER_DEFAULTS = {
  receivedGraceSeconds: 300,
  processingGraceSeconds: 600,
  enqueuedStaleSeconds: 3_600,
  maxRequeues: 3,
  maxClaimsPerRun: 500,
} as const;

export function loadSweeperSettings(env: Env = process.env): SweeperSettings {
  const settings: SweeperSettings = {
    claimsTableName: required(env, 'CLAIMS_TABLE_NAME'),
    eventQueueUrl: required(env, 'EVENT_QUEUE_URL'),
    archiveBucket: env.ARCHIVE_BUCKET_NAME?.trim() || undefined,
    archiveForcePathStyle: env.ARCHIVE_FORCE_PATH_STYLE === 'true',
    receivedGraceMs:
      positiveInteger(env, 'SWEEP_RECEIVED_GRACE_SECONDS', SWEEPER_DEFAULTS.receivedGraceSeconds) * 1000,
    processingGraceMs:
      positiveInteger(env, 'SWEEP_PROCESSING_GRACE_SECONDS', SWEEPER_DEFAULTS.processingGraceSeconds) * 1000,
    enqueuedStaleMs:
      positiveInteger(env, 'SWEEP_ENQUEUED_STALE_SECONDS', SWEEPER_DEFAULTS.enqueuedStaleSeconds) * 1000,
    maxRequeues: positiveInteger(env, 'SWEEP_MAX_REQUEUES', SWEEPER_DEFAULTS.maxRequeues),
    maxClaimsPerRun: positiveInteger(env, 'SWEEP_MAX_CLAIMS_PER_RUN', SWEEPER_DEFAULTS.maxClaimsPerRun),
  };
  if (settings.maxClaimsPerRun > 10_000)
    throw new ConfigError(`SWEEP_MAX_CLAIMS_PER_RUN must be at most 10000, got ${settings.maxClaimsPerRun}`);
  return settings;
}
