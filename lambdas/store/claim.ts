/**
 * The claim: one item per idempotency key in the claims table. It records that a delivery of the
 * key was accepted, how many deliveries of it were seen, who holds it now (lease) and how far it got.
 * See docs/claims.md for the state machine.
 */
import { unfinishedMembership } from './unfinished-index.js';

export const ClaimStatus = {
  /** A receiver took the key and is putting the event on the queue (it holds the receiver lease). */
  Received: 'RECEIVED',
  /** The event is durably on the queue; nobody holds the claim. */
  Enqueued: 'ENQUEUED',
  /** A processor holds the processing lease and is applying the event. */
  Processing: 'PROCESSING',
  /** The event's effects are applied. Terminal until the TTL ends. */
  Done: 'DONE',
  /** The processor gave up (the message went to the DLQ); a later delivery or a replay may take it again. */
  Failed: 'FAILED',
} as const;
export type ClaimStatus = (typeof ClaimStatus)[keyof typeof ClaimStatus];

export type LeaseOwner = 'receiver' | 'processor';

/** The claims table's item, as the store reads and writes it. */
export interface ClaimRecord {
  /** Partition key: the idempotency key (`stripe:acct_123:evt_456`). */
  readonly pk: string;
  readonly provider: string;
  readonly account: string;
  /** The event id of the delivery that created the claim. */
  readonly eventId: string;
  readonly eventType: string;
  readonly objectId?: string;
  readonly status: ClaimStatus;
  /** How many deliveries of this key were seen in the current window (1 = claimed once). */
  readonly deliveries: number;
  /** ISO-8601 times, for people. */
  readonly firstSeenAt: string;
  readonly lastSeenAt: string;
  /** TTL attribute, epoch seconds. An item past it is treated as absent by every condition. */
  readonly expiresAt: number;
  /** The current holder's fencing token; absent while nobody holds the claim. */
  readonly leaseToken?: string;
  /** Epoch milliseconds after which the lease may be taken over. */
  readonly leaseExpiresAt?: number;
  readonly leaseOwner?: LeaseOwner;
  readonly enqueuedAt?: string;
  /** SQS message id of the last successful enqueue. */
  readonly messageId?: string;
  /** Last error recorded on the claim (enqueue failure, processing failure), for operators. */
  readonly lastError?: string;
  /** ISO-8601: when `lastError` was recorded, when the claim last went FAILED, and when it went DONE. */
  readonly lastErrorAt?: string;
  readonly failedAt?: string;
  readonly completedAt?: string;
  /** Step marker written by the processor after each step (`state`, then each effect). */
  readonly lastCompletedStep?: string;
  /** The external effects the processor planned for the event, in order (read on resume). */
  readonly plannedEffects?: readonly string[];
  /** How a DONE event ended: `applied`, `stale`, `unhandled` or `noop`. */
  readonly outcome?: string;
  readonly processingAttempts?: number;
  /** ISO-8601: when the current (or last) processing attempt took the lease, and its last step. */
  readonly processingStartedAt?: string;
  readonly lastStepAt?: string;
  /** Business rows the event wrote, as `<table>:<pk>` (`invoices:stripe:platform:in_1`). */
  readonly writtenRows?: readonly string[];
  /** S3 key of the payload archive object (bucket: the stack's archive bucket). */
  readonly archiveKey?: string;
  /**
   * A Shopify compliance request removed this event's payload from the archive: the request's
   * idempotency key and when (ISO-8601). `archiveKey` may name an object that no longer holds it.
   */
  readonly redactedBy?: string;
  readonly redactedAt?: string;
  /**
   * A compliance request matched this event while its claim was not DONE: the body is kept until the
   * claim is DONE, then removed (lambdas/store/redaction-claims.ts). The first such request's key,
   * when it began (ISO-8601), and the archive objects it found the event in.
   */
  readonly redactionPendingBy?: string;
  readonly redactionPendingAt?: string;
  readonly redactionObjects?: ReadonlySet<string>;
  /**
   * Written by a receiver that does not mark claims ENQUEUED (`markEnqueued: false`): this RECEIVED
   * claim's event was sent (or is being sent) with no mark to follow. A duplicate sends a copy of its
   * own; the sweeper waits the ENQUEUED staleness before calling it stuck. Removed by a release.
   */
  readonly unmarked?: boolean;
  /**
   * Set by a forced replay (`webhooks replay --force`): plan the event again, keeping the step
   * markers, so effects already done are not run again. Removed by the state step.
   */
  readonly replan?: boolean;
  /** `business-row` when the claim's progress was recovered from the row this event wrote. */
  readonly recoveredFrom?: string;
  /**
   * Effects such a recovery did not run again because they might act twice (`unknown` when the row
   * did not record them): for an operator to check.
   */
  readonly unresumedEffects?: readonly string[];
  /** Why the last effect joined `unresumedEffects` (first 160 bytes), for an operator. */
  readonly unresumedReason?: string;
  /**
   * The effect being called now: written (fenced) just before an effect that is not repeat-safe is
   * called, removed by its step marker. A worker that finds it set has no record of how that call
   * ended, so it never calls that effect again: it records it in `unresumedEffects` (docs/rules.md,
   * "Effects in doubt"). ISO-8601 `effectAttemptAt`: when the call started.
   */
  readonly effectAttempt?: string;
  readonly effectAttemptAt?: string;
  /**
   * The sparse index of unfinished claims (./unfinished-index.ts): present until the claim is DONE or
   * FAILED, and on a DONE claim while its pending redaction is not finished. `sweepAt` (epoch ms) is
   * when the sweeper looks at it next.
   */
  readonly sweepShard?: string;
  readonly sweepAt?: number;
  /** Set by the sweeper on a claim it could not recover (ISO-8601, and why); cleared by a take-over. */
  readonly stuckAt?: string;
  readonly stuckReason?: string;
  /** How many times the sweeper re-sent the event, and when it last did. */
  readonly sweeps?: number;
  /** Set when the sweeper's send failed after its ENQUEUED mark: the next run sends at once. */
  readonly sweepResend?: boolean;
  readonly lastSweptAt?: string;
}

/** What a receiver knows when it first claims a key. */
export interface NewClaim {
  readonly pk: string;
  readonly provider: string;
  readonly account: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly objectId?: string;
  readonly expiresAt: number;
  /** The receiver will not mark this claim ENQUEUED (see {@link ClaimRecord.unmarked}). */
  readonly unmarked?: boolean;
}

export interface Lease {
  readonly token: string;
  /** Epoch milliseconds. */
  readonly expiresAt: number;
  readonly owner: LeaseOwner;
}

export type CreateClaimResult =
  | { readonly created: true; readonly claim: ClaimRecord }
  | { readonly created: false; readonly existing: ClaimRecord | undefined };

/** The receiver's view of the claims table. Every method is one DynamoDB request. */
export interface ClaimStore {
  /**
   * Claims a key with one conditional write: succeeds when no live claim exists (absent, or past its
   * `expiresAt`). The datastore arbitrates between concurrent deliveries.
   */
  createClaim(claim: NewClaim, lease: Lease, nowMs: number): Promise<CreateClaimResult>;
  /** Counts one more delivery of a live claim; undefined when the claim is absent or expired. */
  recordDuplicate(pk: string, nowMs: number): Promise<ClaimRecord | undefined>;
  /** Reads the claim (strongly consistent); undefined when absent or expired. */
  getClaim(pk: string, nowMs: number): Promise<ClaimRecord | undefined>;
  /**
   * Takes a stalled or failed claim for a new receiver: only if it is still in `expected.status` with
   * the same lease token the caller saw (fencing) and, for a leased status, the lease has run out.
   */
  takeOver(
    pk: string,
    expected: TakeOverExpectation,
    lease: Lease,
    nowMs: number,
    options?: TakeOverOptions,
  ): Promise<ClaimRecord | undefined>;
  /**
   * RECEIVED -> ENQUEUED, only for the holder of `leaseToken`. False when the caller no longer holds
   * it. `archiveKey`: the claim-checked body's object, recorded as the event's archive.
   */
  markEnqueued(
    pk: string,
    leaseToken: string,
    messageId: string | undefined,
    nowMs: number,
    archiveKey?: string,
  ): Promise<boolean>;
  /**
   * Gives a RECEIVED claim back after a failed enqueue: the lease ends now so the next delivery takes it
   * over, and the `unmarked` flag goes (nothing was queued). Only for the holder of `leaseToken`.
   * False when the caller no longer holds it.
   */
  releaseClaim(pk: string, leaseToken: string, reason: string, nowMs: number): Promise<boolean>;
}

export interface TakeOverOptions {
  /** The new holder will not mark the claim ENQUEUED: flag it `unmarked` (else the flag is removed). */
  readonly unmarked?: boolean;
}

export interface TakeOverExpectation {
  readonly status: ClaimStatus;
  /** The token the caller saw; undefined when the item had none. */
  readonly leaseToken: string | undefined;
}

export function isLeaseLive(claim: Pick<ClaimRecord, 'leaseExpiresAt'>, nowMs: number): boolean {
  return (claim.leaseExpiresAt ?? 0) > nowMs;
}

export function isExpired(claim: Pick<ClaimRecord, 'expiresAt'>, nowMs: number): boolean {
  return claim.expiresAt <= Math.floor(nowMs / 1000);
}

/** Condition of every write that creates a claim: no claim, or only one whose TTL has passed. */
export const CLAIM_ABSENT_OR_EXPIRED = 'attribute_not_exists(pk) OR expiresAt <= :nowS';

/**
 * A claim as first written, held by `lease`, with one delivery seen now. It enters the index of
 * unfinished claims, due for the sweeper when the lease runs out.
 */
export function newClaimRecord(
  claim: NewClaim,
  lease: Lease,
  status: ClaimStatus,
  nowMs: number,
): ClaimRecord {
  const now = new Date(nowMs).toISOString();
  return {
    ...claim,
    status,
    deliveries: 1,
    firstSeenAt: now,
    lastSeenAt: now,
    leaseToken: lease.token,
    leaseExpiresAt: lease.expiresAt,
    leaseOwner: lease.owner,
    ...unfinishedMembership(claim.pk, lease.expiresAt),
  };
}

/**
 * The most of an error a claim keeps, in UTF-8 bytes. DynamoDB bills a write by the larger of the
 * item before and after, in 1 KB units: a claim of about 770 bytes with a 1,000-character error
 * would cost two units on every later write (its release, its lease, DONE). The whole error is in
 * the function's log line; the claim keeps its start, for `webhooks inspect` and the stuck report.
 */
export const CLAIM_ERROR_MAX_BYTES = 160;

/** `text` cut to {@link CLAIM_ERROR_MAX_BYTES} UTF-8 bytes (never inside a character), marked `…` when cut. */
export function claimErrorText(text: string): string {
  if (Buffer.byteLength(text) <= CLAIM_ERROR_MAX_BYTES) return text;
  const mark = '…';
  const bytes = Buffer.from(text);
  // Back from the budget to the start of a character: a UTF-8 continuation byte is 10xxxxxx, and a
  // string's encoding never begins with one, so this stops at 0 at the latest.
  let end = CLAIM_ERROR_MAX_BYTES - Buffer.byteLength(mark);
  while ((bytes.readUInt8(end) & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString('utf8')}${mark}`;
}
