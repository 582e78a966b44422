/**
 * The processor's half of a deferred redaction (docs/rules.md section 11, "Events not applied
 * yet"). A Shopify redaction that met an event whose claim was not DONE kept its body and marked the
 * claim pending (lambdas/store/redaction-claims.ts). Right after the event is DONE, and on any later
 * delivery that finds it DONE with the mark still there (a redelivery after a crash, a DLQ redrive,
 * the sweeper's re-send), the processor removes the body:
 *
 *   read the claim ─▶ back in the sweeper's index ─▶ remove the event's copies ─▶ redacted, out of the index
 *
 * The copies: the objects the request found the event in (recorded on the claim), the claim's own
 * archive object (a claim check's), and the batch objects written since the request began (every
 * attempt archives the event it processes), under each day its copies are filed under.
 */
import type { EventEnvelope } from '../queue/event-message.js';
import {
  archiveDay,
  archiveDayPrefix,
  archiveDayPrefixOf,
  batchNamePrefix,
} from '../shared/archive-layout.js';
import type { FaultInjector } from '../shared/faults.js';
import { ClaimStatus } from '../store/claim.js';
import type { PendingRedaction } from '../store/redaction-claims.js';
import { type ComplianceLog, type ComplianceStore, redactObject } from './compliance.js';
import type { ProcessorDeps } from './core.js';

export interface DeferredRedactionClaims {
  pending(pk: string): Promise<PendingRedaction | undefined>;
  holdInIndex(pk: string, dueAtMs: number, nowMs: number): Promise<boolean>;
  complete(pk: string, by: string, nowMs: number): Promise<boolean>;
}

export interface DeferredRedactionDeps {
  readonly claims: DeferredRedactionClaims;
  readonly store: ComplianceStore;
  readonly log: ComplianceLog;
  readonly clock: () => number;
  /** How long the sweeper leaves the claim to this worker before it sends the event again. */
  readonly holdMs: number;
  readonly faultPoint?: FaultInjector | undefined;
}

/**
 * Batch objects stamped up to this long before the request began are looked at too: one written
 * just before may not have been listed yet when the request passed it (a PUT in flight, clock skew).
 */
export const WRITTEN_SINCE_MARGIN_MS = 5 * 60_000;

/** The event is DONE but its deferred redaction failed: retried by a redelivery or the sweeper. */
export class DeferredRedactionError extends Error {
  override readonly name = 'DeferredRedactionError';
  constructor(
    readonly key: string,
    readonly by: string,
    cause: unknown,
  ) {
    super(
      `event ${key} is applied (DONE), but removing its archived payload, deferred by compliance request ${by} until then, failed (${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)}); a redelivery or the sweeper finishes it`,
      { cause },
    );
  }
}

export interface DeferredRedactionResult {
  readonly key: string;
  readonly by: string;
  readonly scannedObjects: number;
  readonly rewrittenObjects: number;
  readonly deletedObjects: number;
  /** Copies of the event removed (one per object that held it). */
  readonly removedCopies: number;
}

/**
 * After the event `event` is DONE: removes its archived body if a redaction waits for it. Resolves
 * undefined when none does (the usual case: one strongly consistent read), or when another worker
 * finished it first.
 */
export async function redactIfPending(
  event: Pick<EventEnvelope, 'key' | 'eventId' | 'receivedAt'>,
  deps: DeferredRedactionDeps,
): Promise<DeferredRedactionResult | undefined> {
  const pending = await deps.claims.pending(event.key);
  // Not DONE: a forced replay reopened it; its next DONE comes back here.
  if (pending === undefined || pending.status !== ClaimStatus.Done) return undefined;
  try {
    const now = deps.clock();
    // From here until `complete`, a crash leaves the claim where the sweeper finds it.
    if (!(await deps.claims.holdInIndex(pending.pk, now + deps.holdMs, now))) return undefined;
    deps.faultPoint?.('compliance.afterDone', event.eventId);
    const objects = await objectsHolding(pending, event, deps.store);
    let rewrittenObjects = 0;
    let deletedObjects = 0;
    let removedCopies = 0;
    for (const key of objects) {
      const done = await redactObject(
        deps.store,
        key,
        (message) => message.key === pending.pk,
        async () => true,
      );
      removedCopies += done.removed.length;
      if (done.change === 'rewritten') rewrittenObjects++;
      if (done.change === 'deleted') deletedObjects++;
    }
    await deps.claims.complete(pending.pk, pending.by, deps.clock());
    const result: DeferredRedactionResult = {
      key: pending.pk,
      by: pending.by,
      scannedObjects: objects.length,
      rewrittenObjects,
      deletedObjects,
      removedCopies,
    };
    // The audit line of the deferred part, as `compliance request applied` is of the request: keys and counts only.
    deps.log.info('deferred redaction applied', {
      provider: pending.provider,
      ...result,
      pendingSince: pending.since,
    });
    return result;
  } catch (error) {
    throw new DeferredRedactionError(pending.pk, pending.by, error);
  }
}

/** Where copies of the event may be: recorded, its own object, and batch objects written since the request. */
async function objectsHolding(
  pending: PendingRedaction,
  event: Pick<EventEnvelope, 'receivedAt'>,
  store: ComplianceStore,
): Promise<string[]> {
  const keys = new Set<string>(pending.objects);
  if (pending.archiveKey !== undefined) keys.add(pending.archiveKey);
  // A batch object is filed under its events' `receivedAt` day, a claim check under the first-seen day.
  const days = new Set<string>(
    [pending.firstSeenAt, event.receivedAt].map((at) => archiveDayPrefix(pending.provider, archiveDay(at))),
  );
  for (const key of keys) {
    const day = archiveDayPrefixOf(key);
    if (day !== undefined) days.add(day);
  }
  const since = Date.parse(pending.since);
  const after = batchNamePrefix(Number.isNaN(since) ? 0 : since - WRITTEN_SINCE_MARGIN_MS);
  for (const day of days) {
    for await (const key of store.list(day, `${day}${after}`)) {
      // A day's batch objects sort together by the time they were written; one-event objects follow.
      if (!key.slice(day.length).startsWith('batch-')) break;
      keys.add(key);
    }
  }
  return [...keys];
}

/**
 * The processor's hook after an event is DONE (./core.ts): only a Shopify event can be pending
 * redaction, and only when the stack serves Shopify's compliance topics.
 */
export function redactAfterDone(
  event: Pick<EventEnvelope, 'key' | 'eventId' | 'receivedAt' | 'provider'>,
  deps: Pick<ProcessorDeps, 'claims' | 'compliance' | 'log' | 'clock' | 'leaseSeconds' | 'faultPoint'>,
): Promise<DeferredRedactionResult | undefined> {
  if (deps.compliance === undefined || event.provider !== 'shopify') return Promise.resolve(undefined);
  return redactIfPending(event, {
    claims: deps.claims.redactions(),
    store: deps.compliance,
    log: deps.log,
    clock: deps.clock ?? Date.now,
    holdMs: deps.leaseSeconds * 1000,
    faultPoint: deps.faultPoint,
  });
}
