/**
 * After `dlq redrive` or `replay` sends events back: follow their claims until the processor has
 * finished with them (or a wait runs out) and say, per event, whether it was resumed, resumed only
 * in part, failed again, or is still on its way. So nothing the processor could not resume passes
 * unreported (docs/operations.md).
 */
import { type ClaimRecord, ClaimStatus, isExpired } from '../lambdas/store/claim.js';
import { getClaim } from './claims.js';
import { formatDuration, plural } from './format.js';
import type { StackContext } from './stack.js';

/** At most this many claims are followed; the rest are named as not followed. */
export const MAX_FOLLOWED = 100;
export const DEFAULT_WAIT_SECONDS = 60;
const POLL_MS = 1000;

export type FollowResult = 'resumed' | 'not-resumed' | 'failed' | 'pending';

export interface FollowEntry {
  readonly key: string;
  readonly result: FollowResult;
  /** The claim's status as the pipeline acts on it: `null` when absent or expired. */
  readonly status: string | null;
  readonly outcome: string | null;
  readonly step: string | null;
  /** Effects the processor did not run again because they might act twice: check them by hand. */
  readonly unresumedEffects: readonly string[];
  readonly detail: string;
}

export interface FollowReport {
  readonly waitedMs: number;
  readonly followed: number;
  /** Keys sent but not followed (more than {@link MAX_FOLLOWED}). */
  readonly notFollowed: number;
  readonly results: readonly FollowEntry[];
  readonly summary: Readonly<Record<FollowResult, number>>;
}

/**
 * What an event's claim said just before the event was sent back: the claim's own counter and
 * marks, written by the processor. "Failed again" is told from "not taken yet" by comparing them
 * with the claim's, never by comparing the claim's times (Lambda's clock) with the operator's.
 */
export interface ClaimBaseline {
  /** `processingAttempts`: every processing lease adds one. 0 when there was no live claim. */
  readonly attempts: number;
  /** `failedAt` and `lastErrorAt` as stored: a new failure writes new ones. */
  readonly failedAt: string | null;
  readonly lastErrorAt: string | null;
}

/**
 * The baseline of a claim read before sending its event. An absent or expired claim counts as
 * none, as the processor counts it: it creates the claim again, attempts from 1, no failure kept.
 */
export function claimBaseline(claim: ClaimRecord | undefined, nowMs: number): ClaimBaseline {
  if (claim === undefined || isExpired(claim, nowMs))
    return { attempts: 0, failedAt: null, lastErrorAt: null };
  return {
    attempts: Number(claim.processingAttempts ?? 0),
    failedAt: claim.failedAt ?? null,
    lastErrorAt: claim.lastErrorAt ?? null,
  };
}

/** True when the processor has taken or failed the claim since `baseline` was read. */
function changedSince(claim: ClaimRecord, baseline: ClaimBaseline): boolean {
  return (
    Number(claim.processingAttempts ?? 0) > baseline.attempts ||
    // A processor that could not even start marks FAILED without taking a lease (failUnheld).
    (claim.failedAt ?? null) !== baseline.failedAt
  );
}

/**
 * Where one sent event stands (pure). `baseline` is its claim just before it was sent: a FAILED
 * claim the processor has not taken since is still to be taken; one it took (or failed) since has
 * failed again.
 */
export function followEntry(
  key: string,
  claim: ClaimRecord | undefined,
  baseline: ClaimBaseline,
  nowMs: number,
): FollowEntry {
  if (claim === undefined || isExpired(claim, nowMs))
    return {
      key,
      result: 'pending',
      status: null,
      outcome: null,
      step: null,
      unresumedEffects: [],
      detail: 'no claim yet: the processor creates one when it takes the message',
    };
  const base = {
    key,
    status: claim.status,
    outcome: claim.outcome ?? null,
    step: claim.lastCompletedStep ?? null,
    unresumedEffects: claim.unresumedEffects ?? [],
  };
  if (claim.status === ClaimStatus.Done) {
    if (base.unresumedEffects.length > 0)
      return {
        ...base,
        result: 'not-resumed',
        detail: `state applied; in doubt, not run again because they might act twice: ${base.unresumedEffects.join(', ')}; check them by hand${claim.recoveredFrom ? ` (progress recovered from the ${claim.recoveredFrom})` : ''}${claim.unresumedReason ? `. Why: ${claim.unresumedReason}` : ''}`,
      };
    return {
      ...base,
      result: 'resumed',
      detail: `DONE (${claim.outcome ?? 'no outcome'}) at ${claim.lastCompletedStep ?? 'no step'}`,
    };
  }
  if (claim.status === ClaimStatus.Failed && changedSince(claim, baseline))
    return { ...base, result: 'failed', detail: `FAILED again: ${claim.lastError ?? 'no error recorded'}` };
  const retrying =
    claim.lastError !== undefined && (claim.lastErrorAt ?? null) !== baseline.lastErrorAt
      ? `; retrying after: ${claim.lastError}`
      : '';
  return {
    ...base,
    result: 'pending',
    detail:
      claim.status === ClaimStatus.Failed
        ? `still FAILED: the processor has not taken it yet${retrying}`
        : `${claim.status}${claim.lastCompletedStep ? ` at ${claim.lastCompletedStep}` : ''}${retrying}`,
  };
}

export function summarizeFollow(
  entries: readonly Pick<FollowEntry, 'result'>[],
): Record<FollowResult, number> {
  const counts: Record<FollowResult, number> = { resumed: 0, 'not-resumed': 0, failed: 0, pending: 0 };
  for (const entry of entries) counts[entry.result] += 1;
  return counts;
}

/** True when the report names an event the processor could not resume (exit status 1). */
export function followFailed(report: FollowReport | undefined): boolean {
  return report !== undefined && report.summary['not-resumed'] + report.summary.failed > 0;
}

/**
 * Exit status 3: nothing failed, but the wait ran out before every event sent was seen finished
 * (still pending, or beyond the {@link MAX_FOLLOWED} followed). Not a success: not known yet.
 */
export const EXIT_PENDING = 3;

/** True when an event sent was not seen finished: still pending, or not followed. */
export function followPending(report: FollowReport | undefined): boolean {
  return report !== undefined && report.summary.pending + report.notFollowed > 0;
}

/**
 * The exit status of a follow: 1 when an event failed again or was not fully resumed, else
 * {@link EXIT_PENDING} while one is not known to be finished, else 0. No report (`--wait 0`): 0.
 */
export function followExitCode(report: FollowReport | undefined): number {
  if (followFailed(report)) return 1;
  return followPending(report) ? EXIT_PENDING : 0;
}

/**
 * Follows the claims of the events sent, each against its claim as it was just before the send
 * (the first baseline read for a key sent more than once).
 */
export async function followClaims(
  stack: StackContext,
  sent: ReadonlyMap<string, ClaimBaseline>,
  options: { readonly waitMs: number; readonly now: () => number },
): Promise<FollowReport> {
  const followed = [...sent].slice(0, MAX_FOLLOWED);
  const started = options.now();
  const results = new Map<string, FollowEntry>();
  for (;;) {
    for (const [key, baseline] of followed) {
      const known = results.get(key);
      if (known !== undefined && known.result !== 'pending') continue;
      results.set(key, followEntry(key, await getClaim(stack, key), baseline, options.now()));
    }
    const pending = [...results.values()].some((entry) => entry.result === 'pending');
    if (!pending || options.now() - started >= options.waitMs) break;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  const entries = followed.map(([key]) => results.get(key)).filter((e): e is FollowEntry => e !== undefined);
  return {
    waitedMs: options.now() - started,
    followed: followed.length,
    notFollowed: sent.size - followed.length,
    results: entries,
    summary: summarizeFollow(entries),
  };
}

export function followText(report: FollowReport): string {
  const { summary } = report;
  const lines = [
    `followed ${plural(report.followed, 'claim')} for ${formatDuration(report.waitedMs)}: ${summary.resumed} resumed, ${summary['not-resumed']} not fully resumed, ${summary.failed} failed again, ${summary.pending} still pending`,
    ...report.results
      .filter((entry) => entry.result !== 'resumed')
      .map((entry) => `  ${entry.result.padEnd(11)} ${entry.key}: ${entry.detail}`),
  ];
  if (report.notFollowed > 0)
    lines.push(`  ${plural(report.notFollowed, 'more event')} not followed: webhooks inspect --key <key>`);
  if (summary.pending > 0)
    lines.push(
      "  pending ones are still on their way (a retry waits out the event queue's visibility timeout): follow them with webhooks inspect --key <key>, or wait longer with --wait SECONDS",
    );
  return lines.join('\n');
}
