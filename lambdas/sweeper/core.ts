/**
 * The sweeper: recovers claims that stopped moving and nobody will move again, without waiting for a
 * provider retry (GitHub never retries) or an SQS redelivery (there is none once the message is gone).
 *
 * Each run reads only the unfinished claims that are due (the sparse index), and for each one:
 * - DONE, FAILED, or gone: skipped (the index lags the table by a moment); expired: taken out of it;
 * - held by a live lease, or not stale yet: looked at again when it would be;
 * - stale (RECEIVED whose receiver lease ran out, ENQUEUED or `unmarked` RECEIVED that no processor
 *   took, PROCESSING whose lease ran out with no redelivery): put back to ENQUEUED and its event sent again, when the event's
 *   body is stored (a claim check, or the processor's archive); otherwise reported stuck;
 * - DONE with a redaction still pending (its processor stopped between DONE and removing the body):
 *   the event is sent again as a claim check, and the processor, finding it DONE, finishes the
 *   redaction (lambdas/processor/deferred-redaction.ts). The sweeper itself never deletes anything.
 * Every write is fenced on the claim as read (./../store/sweep-store.ts): a receiver, a processor or
 * another run that moved the claim in between wins, and the sweeper leaves it. A re-sent event that
 * was not lost after all is one more copy, which the processor absorbs (its claim is DONE or busy).
 * Rules and defaults: docs/rules.md, "The sweeper".
 */

import type { ProviderId } from '../providers/types.js';
import type { ClaimCheckMessage } from '../queue/event-message.js';
import type { EventQueue } from '../queue/event-queue.js';
import { archiveObjectKey } from '../shared/archive-layout.js';
import { type ClaimRecord, ClaimStatus, isExpired, isLeaseLive } from '../store/claim.js';
import { type ArchivedEvent, queueMessageOf } from '../store/payload-archive.js';
import type { SweepStore } from '../store/sweep-store.js';
import { STUCK_SHARD } from '../store/unfinished-index.js';
import type { SweeperSettings } from './settings.js';

export interface SweeperLog {
  info(message: string, details: Record<string, unknown>): void;
  warn(message: string, details: Record<string, unknown>): void;
  error(message: string, details: Record<string, unknown>): void;
}

export interface StoredBodies {
  /** The archived events in the object at `objectKey` (one, or a batch's), or undefined when there is none. */
  find(objectKey: string): Promise<readonly ArchivedEvent[] | undefined>;
}

export interface SweeperDeps {
  readonly claims: Pick<
    SweepStore,
    | 'listDue'
    | 'get'
    | 'defer'
    | 'requeue'
    | 'dueNow'
    | 'markStuck'
    | 'dropExpired'
    | 'countStuck'
    | 'resendForRedaction'
  >;
  readonly queue: EventQueue;
  /** Absent when the stack has no archive bucket: nothing can be re-sent, stale claims are reported. */
  readonly archive?: StoredBodies;
  readonly settings: Pick<
    SweeperSettings,
    'receivedGraceMs' | 'processingGraceMs' | 'enqueuedStaleMs' | 'maxRequeues' | 'maxClaimsPerRun'
  >;
  readonly log: SweeperLog;
  readonly clock?: () => number;
}

export interface StuckReport {
  readonly key: string;
  readonly status: string;
  readonly reason: string;
}

export interface SweepReport {
  /** Due claims read from the index. */
  readonly due: number;
  readonly requeued: readonly string[];
  /** DONE claims whose deferred redaction was not finished: sent again for the processor to finish it. */
  readonly redactions: readonly string[];
  readonly reported: readonly StuckReport[];
  /** Held or not stale yet: due again later. */
  readonly deferred: number;
  /** Finished, gone, or moved by someone else while the sweeper looked. */
  readonly skipped: number;
  /** Expired claims taken out of the index. */
  readonly dropped: number;
  /** Claims that failed to sweep (an AWS error): due again, retried next run. */
  readonly errors: number;
  /** Live claims reported stuck after this run, these included. */
  readonly stuck: number;
  /** More claims were due than `maxClaimsPerRun`. */
  readonly truncated: boolean;
}

export type Verdict =
  | { readonly kind: 'skip' }
  | { readonly kind: 'drop' }
  | { readonly kind: 'defer'; readonly until: number }
  | { readonly kind: 'recover' }
  /** DONE, with a redaction deferred until DONE that its processor did not finish. */
  | { readonly kind: 'redact' };

/** Claims swept at once. */
const CONCURRENCY = 8;

/** What to do with a claim the index says is due. Pure. */
export function judge(
  claim: ClaimRecord | undefined,
  nowMs: number,
  settings: SweeperDeps['settings'],
): Verdict {
  if (claim === undefined) return { kind: 'skip' };
  if (isExpired(claim, nowMs)) return { kind: 'drop' };
  if (claim.sweepShard === undefined || claim.sweepShard === STUCK_SHARD || claim.sweepAt === undefined)
    return { kind: 'skip' };
  // A DONE claim is in the index only while a redaction deferred until DONE is not finished; the
  // processor holds it until `sweepAt` (docs/rules.md section 11).
  if (claim.status === ClaimStatus.Done && claim.redactionPendingBy !== undefined)
    return claim.sweepAt > nowMs ? { kind: 'defer', until: claim.sweepAt } : { kind: 'redact' };
  let staleAt: number;
  switch (claim.status) {
    case ClaimStatus.Received:
      // An `unmarked` claim (markEnqueued: false) was queued with no mark to follow: it may wait
      // behind a backlog like an ENQUEUED one, so it gets the same staleness.
      staleAt =
        (claim.leaseExpiresAt ?? claim.sweepAt) +
        (claim.unmarked === true ? settings.enqueuedStaleMs : settings.receivedGraceMs);
      break;
    case ClaimStatus.Processing:
      staleAt = (claim.leaseExpiresAt ?? claim.sweepAt) + settings.processingGraceMs;
      break;
    case ClaimStatus.Enqueued: {
      // The sweeper's own send failed after it marked the claim: nothing is queued, send now.
      if (claim.sweepResend === true) return { kind: 'recover' };
      // When it was last queued: by the receiver, a replay, or a sweep.
      const times = [claim.enqueuedAt, claim.lastSweptAt]
        .map((t) => Date.parse(t ?? ''))
        .filter((t) => !Number.isNaN(t));
      staleAt = (times.length ? Math.max(...times) : claim.sweepAt) + settings.enqueuedStaleMs;
      break;
    }
    default:
      // DONE and FAILED left the index a moment ago; an unknown status is never touched blindly.
      return { kind: 'skip' };
  }
  if (isLeaseLive(claim, nowMs) || staleAt > nowMs) {
    // A RECEIVED or ENQUEUED claim can become PROCESSING with no index write (the processor keeps
    // `sweepAt`), and its worker can then die holding the lease on the message's last receive: look
    // again within a processing grace, not at the RECEIVED or ENQUEUED staleness (an hour).
    const until =
      claim.status === ClaimStatus.Processing
        ? staleAt
        : Math.min(staleAt, nowMs + settings.processingGraceMs);
    return { kind: 'defer', until };
  }
  return { kind: 'recover' };
}

/** Why a stale claim could not be recovered, for the operator reading `webhooks stuck`. */
export function stuckReason(
  claim: ClaimRecord,
  cause: 'no-body' | 'requeue-limit' | 'redaction-limit',
): string {
  const last = claim.lastError ? ` Last error: ${claim.lastError}` : '';
  if (cause === 'redaction-limit')
    return `Applied (DONE), but its archived payload, kept until then for compliance request ${claim.redactionPendingBy ?? '?'}, is still not removed: the sweeper sent the event again ${claim.sweeps ?? 0} times for the processor to remove it. Look for "deferred redaction" in the processor's logs.`;
  if (cause === 'requeue-limit')
    return `The sweeper sent this event again ${claim.sweeps ?? 0} times and it is still ${claim.status}: look at the processor's logs and the DLQ.${last}`;
  switch (claim.status) {
    case ClaimStatus.Received:
      if (claim.unmarked === true)
        return `Accepted at ${claim.firstSeenAt} and sent without an ENQUEUED mark (markEnqueued: false), and no processor has taken it since; the body is only in the queue message, which may still be behind a backlog, may be gone (check the DLQ), or was never sent if the receiver stopped first: a provider retry sends it again.${last}`;
      return `Accepted but never queued (the receiver stopped or its send failed), and the body was not stored (it was small enough to travel in the queue message): only a provider retry can bring it back.${last}`;
    case ClaimStatus.Enqueued:
      return `Queued at ${claim.enqueuedAt ?? '?'} and no processor has taken it since; the body is only in the queue message, which may still be behind a backlog or may be gone (check the DLQ).${last}`;
    default:
      return `The processing lease ran out at ${claim.leaseExpiresAt ? new Date(claim.leaseExpiresAt).toISOString() : '?'} and no redelivery took the event (its last attempt probably timed out, so the message is in the DLQ), and no stored body was found: redrive the DLQ.${last}`;
  }
}

/** Where the event's body may be stored: the claim's archive key, else where a claim check would put it. */
export function bodyKeys(claim: ClaimRecord): string[] {
  const derived = archiveObjectKey(claim.provider, claim.firstSeenAt, claim.pk);
  return claim.archiveKey && claim.archiveKey !== derived ? [claim.archiveKey, derived] : [derived];
}

export async function sweep(deps: SweeperDeps): Promise<SweepReport> {
  const clock = deps.clock ?? Date.now;
  const { settings, claims, log } = deps;
  const due = await claims.listDue(clock(), settings.maxClaimsPerRun);
  const requeued: string[] = [];
  const redactions: string[] = [];
  const reported: StuckReport[] = [];
  let deferred = 0;
  let skipped = 0;
  let dropped = 0;
  let errors = 0;

  const sweepOne = async (pk: string): Promise<void> => {
    const claim = await claims.get(pk);
    const now = clock();
    const verdict = judge(claim, now, settings);
    if (verdict.kind === 'skip' || claim === undefined) {
      skipped++;
      return;
    }
    if (verdict.kind === 'drop') {
      await claims.dropExpired(pk, now);
      dropped++;
      return;
    }
    if (verdict.kind === 'defer') {
      if (await claims.defer(claim, verdict.until, now)) deferred++;
      else skipped++;
      return;
    }
    const report = async (cause: 'no-body' | 'requeue-limit' | 'redaction-limit') => {
      const reason = stuckReason(claim, cause);
      if (!(await claims.markStuck(claim, reason, now))) {
        skipped++;
        return;
      }
      reported.push({ key: pk, status: claim.status, reason });
      log.error('claim is stuck: the sweeper cannot recover it', {
        key: pk,
        status: claim.status,
        provider: claim.provider,
        eventId: claim.eventId,
        reason,
      });
    };
    if (verdict.kind === 'redact') {
      if ((claim.sweeps ?? 0) >= settings.maxRequeues) return report('redaction-limit');
      if (!(await claims.resendForRedaction(claim, now + settings.enqueuedStaleMs, now))) {
        skipped++;
        return;
      }
      // A pointer is enough: the processor finds the claim DONE and never reads the body.
      await deps.queue.send(JSON.stringify(redactionMessageOf(claim)));
      redactions.push(pk);
      log.warn('an applied event still has a deferred redaction: sent it again for the processor to finish', {
        key: pk,
        provider: claim.provider,
        eventId: claim.eventId,
        redactionPendingBy: claim.redactionPendingBy,
        sweeps: (claim.sweeps ?? 0) + 1,
      });
      return;
    }
    if ((claim.sweeps ?? 0) >= settings.maxRequeues) return report('requeue-limit');
    const body = await findBody(claim, deps);
    if (body === undefined) return report('no-body');
    const nextLook = now + settings.enqueuedStaleMs;
    if (!(await claims.requeue(claim, body.objectKey, nextLook, now))) {
      skipped++;
      return;
    }
    try {
      await deps.queue.send(JSON.stringify(queueMessageOf(body.archived, body.objectKey)));
    } catch (error) {
      // ENQUEUED with no message: due again now, so the next run sends it.
      await claims.dueNow(pk, nextLook, now, `sweeper send failed: ${String(error)}`);
      throw error;
    }
    requeued.push(pk);
    log.warn('stuck claim recovered: its event was sent to the queue again', {
      key: pk,
      was: claim.status,
      provider: claim.provider,
      eventId: claim.eventId,
      from: body.objectKey,
      sweeps: (claim.sweeps ?? 0) + 1,
    });
  };

  const keys = due.claims.map((c) => c.pk);
  for (let i = 0; i < keys.length; i += CONCURRENCY) {
    const results = await Promise.allSettled(keys.slice(i, i + CONCURRENCY).map(sweepOne));
    results.forEach((result, j) => {
      if (result.status === 'fulfilled') return;
      errors++;
      log.error('could not sweep a claim; the next run tries again', {
        key: keys[i + j],
        error: String(result.reason),
      });
    });
  }
  const stuck = await claims.countStuck(clock());
  return {
    due: keys.length,
    requeued,
    redactions,
    reported,
    deferred,
    skipped,
    dropped,
    errors,
    stuck,
    truncated: due.truncated,
  };
}

/** The message that brings a DONE claim with a pending redaction back to the processor. */
export function redactionMessageOf(claim: ClaimRecord): ClaimCheckMessage {
  return {
    v: 1,
    key: claim.pk,
    provider: claim.provider as ProviderId,
    account: claim.account,
    eventId: claim.eventId,
    eventType: claim.eventType,
    ...(claim.objectId === undefined ? {} : { objectId: claim.objectId }),
    receivedAt: claim.firstSeenAt,
    claimExpiresAt: claim.expiresAt,
    headers: {},
    payloadKey: bodyKeys(claim)[0] ?? '',
    bodyBytes: 0,
  };
}

async function findBody(
  claim: ClaimRecord,
  deps: SweeperDeps,
): Promise<{ archived: ArchivedEvent; objectKey: string } | undefined> {
  if (!deps.archive) return undefined;
  for (const objectKey of bodyKeys(claim)) {
    const events = await deps.archive.find(objectKey);
    if (events === undefined) continue;
    const archived = events.find((event) => event.key === claim.pk);
    if (archived === undefined) {
      deps.log.warn('a stored body belongs to another event; not sending it', {
        key: claim.pk,
        objectKey,
        holds: events.map((event) => event.key),
      });
      continue;
    }
    return { archived, objectKey };
  }
  return undefined;
}
