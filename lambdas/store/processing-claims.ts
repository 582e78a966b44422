/**
 * The processor's side of the claims table: take the processing lease, record step markers, complete
 * or fail, all fenced by the lease token the worker took. Item layout: see ./claim.ts.
 */
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import {
  type ClaimRecord,
  ClaimStatus,
  claimErrorText,
  isExpired,
  type Lease,
  type NewClaim,
  newClaimRecord,
} from './claim.js';
import { ClaimsTable, isoTime as iso, epochSeconds as seconds } from './claims-table.js';
import { writeNewClaim } from './new-claim.js';
import { RedactionClaims } from './redaction-claims.js';
import { pendingShard, UNFINISHED_ATTRIBUTES } from './unfinished-index.js';

/** A finished claim leaves the index of unfinished claims (FAILED: its message is in the DLQ, which alarms). */
const LEAVE_INDEX = UNFINISHED_ATTRIBUTES.join(', ');

/** How an event ended, recorded on a DONE claim. */
export type ProcessingOutcome = 'applied' | 'stale' | 'unhandled' | 'noop';

export type BeginProcessingResult =
  | { readonly kind: 'claimed'; readonly claim: ClaimRecord }
  /** Already DONE: acknowledge the message, apply nothing. */
  | { readonly kind: 'done'; readonly claim: ClaimRecord }
  /** Another worker holds a live processing lease: retry the message later. */
  | { readonly kind: 'busy'; readonly claim: ClaimRecord };

/** The conditional update that moves the claim forward, for use alone or inside a transaction. */
export interface ClaimStepUpdate {
  readonly TableName: string;
  readonly Key: { readonly pk: string };
  readonly UpdateExpression: string;
  readonly ConditionExpression: string;
  readonly ExpressionAttributeNames: Record<string, string>;
  readonly ExpressionAttributeValues: Record<string, unknown>;
}

export interface StepMark {
  /** Name of the step just completed (`state`, or an effect's name). */
  readonly step: string;
  /** The external effects planned for this event (written with the first step, read on resume). */
  readonly plannedEffects?: readonly string[];
  /** When set, the claim becomes DONE with this outcome. */
  readonly done?: ProcessingOutcome;
  /** Business rows the step wrote (`<table>:<pk>`), recorded for `webhooks inspect`. */
  readonly writtenRows?: readonly string[];
  /** Where the payload archive object is (S3 key). */
  readonly archiveKey?: string;
  /**
   * Effects of an event resumed from its business row (its claim's markers were lost) that were not
   * run again because their adapter may repeat them; the claim records them for an operator.
   */
  readonly unresumedEffects?: readonly string[];
  /** Set when the claim's progress was recovered from somewhere other than itself (`business-row`). */
  readonly recoveredFrom?: string;
  /**
   * The step's effect was called but how the call ended is unknown (it timed out, or an earlier
   * attempt stopped between the call and its marker): it joins `unresumedEffects`, with why.
   */
  readonly inDoubt?: { readonly effect: string; readonly reason: string };
}

/** The attributes of an effect call in progress (see {@link ClaimRecord.effectAttempt}). */
const EFFECT_ATTEMPT = 'effectAttempt, effectAttemptAt';

/** How a failed attempt's record changes beyond its error. */
export interface FailureOptions {
  /**
   * The attempt failed in the effect call it had recorded (`effectAttempt`), and the call certainly
   * did not act (refused): the record is removed, so the next attempt calls the effect again.
   */
  readonly effectNotPerformed?: boolean;
}

export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
  constructor(readonly key: string) {
    super(`processing lease on ${key} is no longer ours`);
  }
}

/** A claim a worker may take: queued or failed, or processing under a lease that ran out. */
const TAKEABLE =
  '(#status IN (:received, :enqueued, :failed) OR (#status = :processing AND leaseExpiresAt <= :nowMs))';
const TAKEABLE_VALUES = {
  ':received': ClaimStatus.Received,
  ':enqueued': ClaimStatus.Enqueued,
  ':failed': ClaimStatus.Failed,
} as const;

/** `, archiveKey = <value>` for an update's SET clause with its value, or nothing without a key. */
function archiveAssignment(
  archiveKey: string | undefined,
  value: string,
): { readonly set: string; readonly values: Readonly<Record<string, string>> } {
  return archiveKey
    ? { set: `, archiveKey = ${value}`, values: { ':archiveKey': archiveKey } }
    : { set: '', values: {} };
}

/** TAKEABLE, for a claim known not to be DONE: any status but PROCESSING, or a lease that ran out. */
function isTakeableUnlessDone(claim: ClaimRecord, nowMs: number): boolean {
  return claim.status !== ClaimStatus.Processing || (claim.leaseExpiresAt ?? 0) <= nowMs;
}

export class ProcessingClaims extends ClaimsTable {
  constructor(client: DynamoDBClient, tableName: string) {
    super(client, tableName);
  }

  /**
   * Takes the processing lease: from RECEIVED (the receiver's mark may not have landed yet: the
   * message exists, so the event is queued), ENQUEUED, FAILED (a redrive or a provider retry), or
   * PROCESSING whose lease ran out (a worker died). When no live claim exists (it expired, or a
   * replay outlived it), one is created from the message, keeping what an expired claim of the same
   * event still records of its progress (./new-claim.ts).
   *
   * The claim's TTL is raised to `retainUntil` (never lowered): whatever happens to this attempt, the
   * claim must outlive every copy of the message, the DLQ's included (docs/rules.md, claim TTL).
   */
  async beginProcessing(
    claim: NewClaim,
    lease: Lease,
    nowMs: number,
    retainUntil: number,
    archiveKey?: string,
  ): Promise<BeginProcessingResult> {
    // A claim that names an archive object already keeps it (a claim check's, an earlier attempt's).
    const archive = archiveAssignment(archiveKey, 'if_not_exists(archiveKey, :archiveKey)');
    // At most one retry: with the claim's own later TTL, when it is takeable.
    for (let retried = false; ; retried = true) {
      try {
        const result = await this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: claim.pk },
            UpdateExpression:
              // if_not_exists: a claim already in the index keeps its keys (no index write); a FAILED
              // one taken by a redrive comes back into it.
              `SET #status = :processing, leaseToken = :token, leaseExpiresAt = :leaseUntil, leaseOwner = :owner, processingStartedAt = :now, expiresAt = :retainUntil, sweepShard = if_not_exists(sweepShard, :shard), sweepAt = if_not_exists(sweepAt, :leaseUntil)${archive.set} ADD processingAttempts :one`,
            ConditionExpression: `attribute_exists(pk) AND expiresAt > :nowS AND expiresAt <= :retainUntil AND ${TAKEABLE}`,
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ...TAKEABLE_VALUES,
              ':processing': ClaimStatus.Processing,
              ':token': lease.token,
              ':leaseUntil': lease.expiresAt,
              ':owner': lease.owner,
              ':shard': pendingShard(claim.pk),
              ':now': iso(nowMs),
              ':one': 1,
              ':nowS': seconds(nowMs),
              ':nowMs': nowMs,
              ':retainUntil': retainUntil,
              ...archive.values,
            },
            ReturnValues: 'ALL_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { kind: 'claimed', claim: result.Attributes as ClaimRecord };
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        const existing = error.Item ? (unmarshall(error.Item) as ClaimRecord) : undefined;
        // Our own update, committed before its response was lost and the SDK retried it.
        if (existing !== undefined && existing.leaseToken === lease.token)
          return { kind: 'claimed', claim: existing };
        if (existing === undefined || isExpired(existing, nowMs))
          return this.createProcessing({ ...claim, expiresAt: retainUntil }, lease, nowMs, archiveKey);
        if (existing.status === ClaimStatus.Done) return { kind: 'done', claim: existing };
        // Takeable, so its TTL is already later than ours (the only other conjunct that can fail):
        // keep that one, never lowering it.
        if (!retried && isTakeableUnlessDone(existing, nowMs)) {
          retainUntil = Math.max(retainUntil, existing.expiresAt);
          continue;
        }
        return { kind: 'busy', claim: existing };
      }
    }
  }

  private async createProcessing(
    claim: NewClaim,
    lease: Lease,
    nowMs: number,
    archiveKey: string | undefined,
  ): Promise<BeginProcessingResult> {
    const record: ClaimRecord = {
      ...newClaimRecord(claim, lease, ClaimStatus.Processing, nowMs),
      // Undefined when there is none: writeNewClaim writes no undefined attribute.
      archiveKey,
      processingAttempts: 1,
      processingStartedAt: iso(nowMs),
    };
    const written = await writeNewClaim(this.doc, this.tableName, record, nowMs);
    // A receiver (or another worker) created a live claim in between: retry the message later.
    return written.created
      ? { kind: 'claimed', claim: written.claim }
      : { kind: 'busy', claim: written.existing ?? record };
  }

  /**
   * Marks FAILED a claim nobody holds, for a message whose processor could not even start (its
   * initialisation failed) on the attempt SQS will not redeliver. Never takes a live lease from a
   * worker; false when the claim is absent, expired, DONE or held.
   */
  async failUnheld(pk: string, error: string, nowMs: number, retainUntil: number): Promise<boolean> {
    return this.updateIf({
      Key: { pk },
      UpdateExpression: `SET #status = :failed, failedAt = :now, lastError = :error, lastErrorAt = :now, expiresAt = :retainUntil REMOVE leaseToken, leaseExpiresAt, leaseOwner, ${LEAVE_INDEX}`,
      ConditionExpression: `attribute_exists(pk) AND expiresAt > :nowS AND ${TAKEABLE}`,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ...TAKEABLE_VALUES,
        ':processing': ClaimStatus.Processing,
        ':failed': ClaimStatus.Failed,
        ':now': iso(nowMs),
        ':error': claimErrorText(error),
        ':nowS': seconds(nowMs),
        ':nowMs': nowMs,
        ':retainUntil': retainUntil,
      },
    });
  }

  /** The fenced update recording a completed step (and DONE, when `mark.done` is set). */
  stepUpdate(pk: string, leaseToken: string, mark: StepMark, nowMs: number): ClaimStepUpdate {
    const sets = ['lastCompletedStep = :step', 'lastStepAt = :now'];
    // Every step ends the effect call in progress, if any: its outcome is now recorded.
    const removes: string[] = [EFFECT_ATTEMPT];
    const values: Record<string, unknown> = {
      ':step': mark.step,
      ':now': iso(nowMs),
      ':token': leaseToken,
      ':processing': ClaimStatus.Processing,
    };
    if (mark.plannedEffects !== undefined) {
      sets.push('plannedEffects = :planned');
      values[':planned'] = [...mark.plannedEffects];
    }
    if (mark.writtenRows !== undefined && mark.writtenRows.length > 0) {
      sets.push('writtenRows = :rows');
      values[':rows'] = [...mark.writtenRows];
    }
    if (mark.archiveKey !== undefined) {
      sets.push('archiveKey = :archiveKey');
      values[':archiveKey'] = mark.archiveKey;
    }
    if (mark.unresumedEffects !== undefined && mark.unresumedEffects.length > 0) {
      sets.push('unresumedEffects = :unresumed');
      values[':unresumed'] = [...mark.unresumedEffects];
    }
    if (mark.recoveredFrom !== undefined) {
      sets.push('recoveredFrom = :recoveredFrom');
      values[':recoveredFrom'] = mark.recoveredFrom;
    }
    if (mark.inDoubt !== undefined) {
      sets.push(
        'unresumedEffects = list_append(if_not_exists(unresumedEffects, :noEffects), :inDoubt)',
        'unresumedReason = :inDoubtReason',
      );
      values[':noEffects'] = [];
      values[':inDoubt'] = [mark.inDoubt.effect];
      values[':inDoubtReason'] = claimErrorText(mark.inDoubt.reason);
    }
    // A forced replay's request to plan again: every step is written after this attempt planned
    // (the state step, or a resume that found the state committed), which answers it.
    removes.push('replan');
    if (mark.done !== undefined) {
      sets.push('#status = :done', 'outcome = :outcome', 'completedAt = :now');
      values[':done'] = ClaimStatus.Done;
      values[':outcome'] = mark.done;
      removes.push('leaseToken', 'leaseExpiresAt', 'leaseOwner', 'lastError', ...UNFINISHED_ATTRIBUTES);
    }
    return {
      TableName: this.tableName,
      Key: { pk },
      UpdateExpression: `SET ${sets.join(', ')} REMOVE ${removes.join(', ')}`,
      ConditionExpression: 'leaseToken = :token AND #status = :processing',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: values,
    };
  }

  /** Records a step (alone, outside a transaction). Throws LeaseLostError if the lease is not ours. */
  async markStep(pk: string, leaseToken: string, mark: StepMark, nowMs: number): Promise<void> {
    await this.fenced(pk, this.stepUpdate(pk, leaseToken, mark, nowMs));
  }

  /**
   * Records, fenced, that `effect` is about to be called, and renews the lease to `leaseUntil`: the
   * call starts only after this write, with the whole lease ahead of it. A worker that later finds
   * the record without the effect's marker never calls the effect again (docs/rules.md, "Effects in
   * doubt"). Throws LeaseLostError when another worker holds the claim: then the effect is not called.
   */
  async beginEffect(
    pk: string,
    leaseToken: string,
    effect: string,
    nowMs: number,
    leaseUntil: number,
  ): Promise<void> {
    await this.fenced(pk, {
      TableName: this.tableName,
      Key: { pk },
      UpdateExpression: 'SET effectAttempt = :effect, effectAttemptAt = :now, leaseExpiresAt = :leaseUntil',
      ConditionExpression: 'leaseToken = :token AND #status = :processing',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':effect': effect,
        ':now': iso(nowMs),
        ':leaseUntil': leaseUntil,
        ':token': leaseToken,
        ':processing': ClaimStatus.Processing,
      },
    });
  }

  /**
   * After a failed attempt: ends our lease now so the redelivery can take the claim at once, keeping
   * PROCESSING and the step marker so it resumes where this attempt stopped.
   */
  async releaseProcessing(
    pk: string,
    leaseToken: string,
    error: string,
    nowMs: number,
    archiveKey?: string,
    options: FailureOptions = {},
  ) {
    await this.recordFailure(pk, leaseToken, error, nowMs, archiveKey, options, {
      set: 'leaseExpiresAt = :nowMs',
      values: { ':nowMs': nowMs },
    });
  }

  /**
   * The last attempt failed (or the message can never succeed): the message goes to the DLQ, the
   * claim says FAILED and why, and lives until `retainUntil` at least, so that a redrive within the
   * DLQ's retention still finds it with its step markers.
   */
  async failProcessing(
    pk: string,
    leaseToken: string,
    error: string,
    nowMs: number,
    retainUntil: number,
    archiveKey?: string,
    options: FailureOptions = {},
  ) {
    await this.recordFailure(pk, leaseToken, error, nowMs, archiveKey, options, {
      set: '#status = :failed, failedAt = :now, expiresAt = :retainUntil',
      remove: `leaseToken, leaseExpiresAt, leaseOwner, ${LEAVE_INDEX}`,
      values: { ':failed': ClaimStatus.Failed, ':retainUntil': retainUntil },
    });
  }

  /** A fenced update recording an attempt's error, plus what releasing or failing changes. */
  private async recordFailure(
    pk: string,
    leaseToken: string,
    error: string,
    nowMs: number,
    archiveKey: string | undefined,
    options: FailureOptions,
    change: { set: string; remove?: string; values: Record<string, unknown> },
  ): Promise<void> {
    const archive = archiveAssignment(archiveKey, ':archiveKey');
    const removes = [
      ...(change.remove === undefined ? [] : [change.remove]),
      ...(options.effectNotPerformed ? [EFFECT_ATTEMPT] : []),
    ];
    await this.fenced(pk, {
      TableName: this.tableName,
      Key: { pk },
      UpdateExpression: `SET ${change.set}, lastError = :error, lastErrorAt = :now${archive.set}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
      ConditionExpression: 'leaseToken = :token AND #status = :processing',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ...change.values,
        ':error': claimErrorText(error),
        ':now': iso(nowMs),
        ':token': leaseToken,
        ':processing': ClaimStatus.Processing,
        ...archive.values,
      },
    });
  }

  private async fenced(pk: string, update: ClaimStepUpdate): Promise<void> {
    const { TableName: _table, ...input } = update;
    if (!(await this.updateIf(input))) throw new LeaseLostError(pk);
  }

  /** The same table as Shopify's redactions use it (./redaction-claims.ts). */
  redactions(): RedactionClaims {
    return new RedactionClaims(this.doc, this.tableName);
  }
}
