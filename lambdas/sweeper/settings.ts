/**
 * The sweeper's settings, read once per cold start and validated up front. The one list of its
 * variables (lambdas/shared/settings.ts): the handler loads them, the claim-sweeper construct writes
 * them with `toEnvironment`, the stack checks its props against their rules and the local runner
 * overrides them by `ENV` name.
 */
import {
  ARCHIVE_BUCKET,
  ARCHIVE_FORCE_PATH_STYLE,
  CLAIMS_TABLE,
  defineSettings,
  type Env,
  EVENT_QUEUE_URL,
  integer,
  type SettingsOf,
  secondsAsMilliseconds,
} from '../shared/settings.js';

/** Plain seconds and counts: the construct's `Duration` defaults derive from these. */
export const DEFAULTS = {
  receivedGraceSeconds: 300,
  processingGraceSeconds: 600,
  enqueuedStaleSeconds: 3_600,
  maxRequeues: 3,
  maxClaimsPerRun: 500,
} as const;

/** @deprecated the same object as {@link DEFAULTS}, under its former name. */
export const SWEEPER_DEFAULTS = DEFAULTS;

/** One run reads at most this many claims, whatever `SWEEP_MAX_CLAIMS_PER_RUN` asks. */
export const MAX_CLAIMS_PER_RUN_LIMIT = 10_000;

const SWEEPER = defineSettings({
  claimsTableName: CLAIMS_TABLE,
  eventQueueUrl: EVENT_QUEUE_URL,
  /** Where stored bodies are (claim checks, the processor's archive); without it nothing can be re-sent. */
  archiveBucket: ARCHIVE_BUCKET,
  archiveForcePathStyle: ARCHIVE_FORCE_PATH_STYLE,
  /**
   * A RECEIVED claim is stuck this long after its receiver lease ran out (the receiver died or gave
   * the claim back after a failed send, and no provider retry took it over).
   */
  receivedGraceMs: secondsAsMilliseconds(
    integer('SWEEP_RECEIVED_GRACE_SECONDS', { default: DEFAULTS.receivedGraceSeconds }),
  ),
  /**
   * A PROCESSING claim is stuck this long after its lease ran out. Longer than the queue's visibility
   * timeout: a worker that failed gives the lease back at once, and SQS redelivers only after it.
   */
  processingGraceMs: secondsAsMilliseconds(
    integer('SWEEP_PROCESSING_GRACE_SECONDS', { default: DEFAULTS.processingGraceSeconds }),
  ),
  /** An ENQUEUED claim is stuck when no processor took it this long after it was queued. */
  enqueuedStaleMs: secondsAsMilliseconds(
    integer('SWEEP_ENQUEUED_STALE_SECONDS', { default: DEFAULTS.enqueuedStaleSeconds }),
  ),
  /** The sweeper re-sends one event at most this many times, then reports it stuck. */
  maxRequeues: integer('SWEEP_MAX_REQUEUES', { default: DEFAULTS.maxRequeues }),
  /** Claims read per run at most; the rest wait for the next run. */
  maxClaimsPerRun: integer('SWEEP_MAX_CLAIMS_PER_RUN', {
    default: DEFAULTS.maxClaimsPerRun,
    max: MAX_CLAIMS_PER_RUN_LIMIT,
  }),
});

export type SweeperSettings = SettingsOf<typeof SWEEPER.settings>;
/** The variables' names, by setting: `ENV.enqueuedStaleMs` is `SWEEP_ENQUEUED_STALE_SECONDS`. */
export const ENV = SWEEPER.ENV;
/** The environment -> {@link SweeperSettings}. */
export const schema = SWEEPER.schema;
/** The sweeper's settings -> its environment variables (what the claim-sweeper construct writes). */
export const toEnvironment = SWEEPER.toEnvironment;
/** The rules of single settings, for the stack's synth-time checks (`ruleBroken`). */
export const SETTINGS = SWEEPER.settings;

/** Reads and checks the sweeper's environment; a ConfigError names each bad variable. */
export function loadSweeperSettings(env: Env = process.env): SweeperSettings {
  return SWEEPER.load(env);
}

/** The same as {@link loadSweeperSettings}. */
export const load = loadSweeperSettings;
