/**
 * The local stack's timings: the template's timeouts and leases, with the knobs of a local run
 * (`CLAIM_LEASE_SECONDS`, `LOCAL_VISIBILITY_TIMEOUT_SECONDS`, `SWEEP_PROCESSING_GRACE_SECONDS`)
 * applied, checked against the same rules as the construct's props (lambdas/shared/timing-rules.ts).
 *
 * A short lease moves the function timeouts down with it, so it can still outlive them: a 6 s lease
 * runs the receiver and the processor with a 5 s timeout, and the effects with at most a third of
 * it (1 s). A visibility timeout alone moves the leases down to it. A
 * value no move can fix is refused in one line that names the rule.
 */
import { ConfigError, type Env } from '../lambdas/shared/settings.js';
import {
  EFFECT_MARGIN_MS,
  type TimingNames,
  type Timings,
  timingProblems,
} from '../lambdas/shared/timing-rules.js';
import * as sweeperSettings from '../lambdas/sweeper/settings.js';
import { loadLocalStackKnobs } from './settings.js';
import { type CfnTemplate, resourcesOfType } from './template.js';

/** What the synthesized template says (the effects' timeouts are moved one by one: localEffectTimeoutSeconds). */
export type TemplateTimings = Omit<Timings, 'effectTimeoutsMs'>;

/** The knobs of a local run (undefined: the template's value). */
export interface TimingKnobs {
  readonly claimLeaseSeconds?: number;
  readonly visibilityTimeoutSeconds?: number;
  readonly sweepProcessingGraceSeconds?: number;
}

export interface LocalTimings extends TemplateTimings {
  /** The receiver's and the processor's lease, when the knobs set it. */
  readonly leaseOverride?: number;
  /** What the knobs moved, one phrase each, for the start-up log (empty: nothing moved). */
  readonly moved: readonly string[];
}

/** The variables' names, as a local run sets them. */
const KNOB_NAMES: TimingNames = {
  receiverTimeoutSeconds: "the receiver's local timeout",
  receiverLeaseSeconds: 'CLAIM_LEASE_SECONDS',
  processorTimeoutSeconds: "the processor's local timeout",
  processingLeaseSeconds: 'CLAIM_LEASE_SECONDS',
  visibilityTimeoutSeconds: 'LOCAL_VISIBILITY_TIMEOUT_SECONDS',
  sweepProcessingGraceSeconds: 'SWEEP_PROCESSING_GRACE_SECONDS',
  effectTimeout: (adapter) => `effect ${adapter}'s local timeout`,
};

/**
 * The shortest lease a local run takes: 6 s leaves the functions a 5 s timeout, of which an effect's
 * call takes at most 1 s (a third, whole seconds) and the margin 1 s, so the work before the call
 * keeps 3 s. Measured (`npm run bench:lease`): with 4 s (1 s before the call) a load of 400 payments
 * left a quarter of them refused for lack of time on every receive, in the DLQ; with 6 s, none.
 */
export const LOCAL_MIN_LEASE_SECONDS = 6;

/** The template's timings with the knobs applied; a ConfigError (one line) when a rule is broken. */
export function localTimings(template: TemplateTimings, knobs: TimingKnobs): LocalTimings {
  const moved: string[] = [];
  let lease = knobs.claimLeaseSeconds;
  const visibility = knobs.visibilityTimeoutSeconds ?? template.visibilityTimeoutSeconds;
  // A visibility timeout alone brings the processing lease down to it (the template's 120 s would
  // break "no longer than the visibility timeout").
  if (
    lease === undefined &&
    knobs.visibilityTimeoutSeconds !== undefined &&
    template.processingLeaseSeconds !== undefined &&
    template.processingLeaseSeconds > knobs.visibilityTimeoutSeconds
  ) {
    lease = knobs.visibilityTimeoutSeconds;
    moved.push(`leases ${lease} s (LOCAL_VISIBILITY_TIMEOUT_SECONDS)`);
  } else if (lease !== undefined) moved.push(`leases ${lease} s (CLAIM_LEASE_SECONDS)`);
  if (lease !== undefined && lease < LOCAL_MIN_LEASE_SECONDS) {
    throw new ConfigError(
      `${knobs.claimLeaseSeconds === undefined ? 'LOCAL_VISIBILITY_TIMEOUT_SECONDS' : 'CLAIM_LEASE_SECONDS'} (${lease} s) is too short for a local lease: at least ${LOCAL_MIN_LEASE_SECONDS} s, so the lease outlives its function's timeout (lease - 1 s) and that timeout leaves an effect's call (at least 1 s), the work before it and ${EFFECT_MARGIN_MS / 1000} s to spare room on a loaded machine`,
    );
  }
  const below = (timeout: number | undefined, name: string): number | undefined => {
    if (timeout === undefined || lease === undefined || timeout < lease) return timeout;
    moved.push(`${name} timeout ${lease - 1} s`);
    return lease - 1;
  };
  const timings: LocalTimings = {
    ...template,
    ...(lease === undefined
      ? {}
      : { receiverLeaseSeconds: lease, processingLeaseSeconds: lease, leaseOverride: lease }),
    receiverTimeoutSeconds: below(template.receiverTimeoutSeconds, 'receiver'),
    processorTimeoutSeconds: below(template.processorTimeoutSeconds, 'processor'),
    visibilityTimeoutSeconds: visibility,
    sweepProcessingGraceSeconds: knobs.sweepProcessingGraceSeconds ?? template.sweepProcessingGraceSeconds,
    moved,
  };
  // A rule whose values are not all known (no template yet, or a function it does not have) is skipped.
  const [problem] = timingProblems(timings, KNOB_NAMES);
  if (problem !== undefined) throw new ConfigError(problem);
  return timings;
}

/**
 * An effect's local timeout (whole seconds): its own, or at most a third of the processor's local
 * timeout. The rule only asks for less than the invocation by more than the margin; a third leaves
 * the batch's archive upload, the plan, the state commit and the effects before it room on a loaded
 * laptop, where a call refused for lack of time (EffectDeadlineError) is retried and, refused on
 * every receive, ends in the DLQ.
 */
export function localEffectTimeoutSeconds(configuredMs: number, processorTimeoutSeconds: number): number {
  const ceiling = Math.floor(processorTimeoutSeconds / 3);
  return Math.max(1, Math.min(Math.ceil(configuredMs / 1000), ceiling));
}

/** The timing knobs of a local run, from its environment (./settings.ts has their rules one by one). */
export function timingKnobs(env: Env): TimingKnobs {
  const knobs = loadLocalStackKnobs(env);
  const grace = env[sweeperSettings.ENV.processingGraceMs]?.trim();
  return {
    ...(knobs.claimLeaseSeconds === undefined ? {} : { claimLeaseSeconds: knobs.claimLeaseSeconds }),
    ...(knobs.visibilityTimeoutSeconds === undefined
      ? {}
      : { visibilityTimeoutSeconds: knobs.visibilityTimeoutSeconds }),
    ...(grace ? { sweepProcessingGraceSeconds: Number(grace) } : {}),
  };
}

const numberOf = (value: unknown): number | undefined => {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
};

/**
 * The timings a synthesized template sets: each function's `Timeout` with the lease variable it
 * carries (`RECEIVER_LEASE_SECONDS`, `PROCESSING_LEASE_SECONDS`), the event queue's visibility
 * timeout (the queue with a redrive policy) and the sweeper's processing grace.
 */
export function templateTimings(
  template: CfnTemplate,
  variables: { receiverLease: string; processingLease: string; sweepProcessingGrace: string },
): TemplateTimings {
  const timings: { -readonly [K in keyof TemplateTimings]: TemplateTimings[K] } = {};
  for (const [, resource] of resourcesOfType(template, 'AWS::Lambda::Function')) {
    const props = resource.Properties ?? {};
    const env = (props.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    const timeout = numberOf(props.Timeout) ?? 3;
    if (env[variables.receiverLease] !== undefined) {
      timings.receiverTimeoutSeconds = timeout;
      timings.receiverLeaseSeconds = numberOf(env[variables.receiverLease]);
    }
    if (env[variables.processingLease] !== undefined) {
      timings.processorTimeoutSeconds = timeout;
      timings.processingLeaseSeconds = numberOf(env[variables.processingLease]);
    }
    if (env[variables.sweepProcessingGrace] !== undefined) {
      timings.sweepProcessingGraceSeconds = numberOf(env[variables.sweepProcessingGrace]);
    }
  }
  for (const [, resource] of resourcesOfType(template, 'AWS::SQS::Queue')) {
    const props = resource.Properties ?? {};
    if (props.RedrivePolicy !== undefined)
      timings.visibilityTimeoutSeconds = numberOf(props.VisibilityTimeout) ?? 30;
  }
  return timings;
}
