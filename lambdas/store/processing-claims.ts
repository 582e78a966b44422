/**
 * The processor's side of the claims table: take the processing lease, record step markers, complete
 * or fail, all fenced by the lease token the worker took. Item layout: see ./claim.ts.
 */
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import {
  CLAIM_ABSENT_OR_EXPIRED,
  type ClaimRecord,
  ClaimStatus,
  isExpired,
  type Lease,
  type NewClaim,
  newClaimRecord,
} from './claim';

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
  /** Name of the step just completed (`state`, `ledger`, `receipt`, ...). */
  readonly step: string;
  /** The external effects planned for this event (written with the first step, read on resume). */
  readonly plannedEffects?: readonly string[];
  /** When set, the claim becomes DONE with this outcome. */
  readonly done?: ProcessingOutcome;
  /** Business rows the step wrote (`<table>:<pk>`), recorded for `webhooks inspect`. */
  readonly writtenRows?: readonly string[];
  /** Where the payload archive object is (S3 key). */
  readonly archiveKey?: string;
}

export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
  constructor(readonly key: string) {
    super(`processing lease on ${key} is no longer ours`);
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();
const seconds = (ms: number): number => Math.floor(ms / 1000);

export class ProcessingClaims {
  private readonly doc: DynamoDBDocumentClient;

  constructor(
    client: DynamoDBClient,
    readonly tableName: string,
  ) {
    this.doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  }

  /**
   * Takes the processing lease: from RECEIVED (the receiver's mark may not have landed yet: the
   * message exists, so the event is queued), ENQUEUED, FAILED (a redrive or a provider retry), or
   * PROCESSING whose lease ran out (a worker died). When no live claim exists (it expired, or a
   * replay outlived it), one is created from the message.
   */
  async beginProcessing(claim: NewClaim, lease: Lease, nowMs: number): Promise<BeginProcessingResult> {
    try {
      const result = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: claim.pk },
          UpdateExpression:
            'SET #status = :processing, leaseToken = :token, leaseExpiresAt = :leaseUntil, leaseOwner = :owner, processingStartedAt = :now ADD processingAttempts :one',
          ConditionExpression:
            'attribute_exists(pk) AND expiresAt > :nowS AND (#status IN (:received, :enqueued, :failed) OR (#status = :processing AND leaseExpiresAt <= :nowMs))',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':processing': ClaimStatus.Processing,
            ':received': ClaimStatus.Received,
            ':enqueued': ClaimStatus.Enqueued,
            ':failed': ClaimStatus.Failed,
            ':token': lease.token,
            ':leaseUntil': lease.expiresAt,
            ':owner': lease.owner,
            ':now': iso(nowMs),
            ':one': 1,
            ':nowS': seconds(nowMs),
            ':nowMs': nowMs,
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { kind: 'claimed', claim: result.Attributes as ClaimRecord };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const existing = error.Item ? (unmarshall(error.Item) as ClaimRecord) : undefined;
      if (existing === undefined || isExpired(existing, nowMs))
        return this.createProcessing(claim, lease, nowMs);
      if (existing.status === ClaimStatus.Done) return { kind: 'done', claim: existing };
      return { kind: 'busy', claim: existing };
    }
  }

  private async createProcessing(
    claim: NewClaim,
    lease: Lease,
    nowMs: number,
  ): Promise<BeginProcessingResult> {
    const record: ClaimRecord & { processingStartedAt: string } = {
      ...newClaimRecord(claim, lease, ClaimStatus.Processing, nowMs),
      processingAttempts: 1,
      processingStartedAt: iso(nowMs),
    };
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: record,
          ConditionExpression: CLAIM_ABSENT_OR_EXPIRED,
          ExpressionAttributeValues: { ':nowS': seconds(nowMs) },
        }),
      );
      return { kind: 'claimed', claim: record };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        // A receiver (or another worker) created it in between: start over on the next delivery.
        return { kind: 'busy', claim: record };
      }
      throw error;
    }
  }

  /** The fenced update recording a completed step (and DONE, when `mark.done` is set). */
  stepUpdate(pk: string, leaseToken: string, mark: StepMark, nowMs: number): ClaimStepUpdate {
    const sets = ['lastCompletedStep = :step', 'lastStepAt = :now'];
    const removes: string[] = [];
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
    if (mark.done !== undefined) {
      sets.push('#status = :done', 'outcome = :outcome', 'completedAt = :now');
      values[':done'] = ClaimStatus.Done;
      values[':outcome'] = mark.done;
      removes.push('leaseToken', 'leaseExpiresAt', 'leaseOwner', 'lastError');
    }
    return {
      TableName: this.tableName,
      Key: { pk },
      UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
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
   * After a failed attempt: ends our lease now so the redelivery can take the claim at once, keeping
   * PROCESSING and the step marker so it resumes where this attempt stopped.
   */
  async releaseProcessing(pk: string, leaseToken: string, error: string, nowMs: number, archiveKey?: string) {
    await this.recordFailure(pk, leaseToken, error, nowMs, archiveKey, {
      set: 'leaseExpiresAt = :nowMs',
      values: { ':nowMs': nowMs },
    });
  }

  /** The last attempt failed: the message goes to the DLQ, the claim says FAILED and why. */
  async failProcessing(pk: string, leaseToken: string, error: string, nowMs: number, archiveKey?: string) {
    await this.recordFailure(pk, leaseToken, error, nowMs, archiveKey, {
      set: '#status = :failed, failedAt = :now',
      remove: 'REMOVE leaseToken, leaseExpiresAt, leaseOwner',
      values: { ':failed': ClaimStatus.Failed },
    });
  }

  /** A fenced update recording an attempt's error, plus what releasing or failing changes. */
  private async recordFailure(
    pk: string,
    leaseToken: string,
    error: string,
    nowMs: number,
    archiveKey: string | undefined,
    change: { set: string; remove?: string; values: Record<string, unknown> },
  ): Promise<void> {
    const archive = archiveKey ? ', archiveKey = :archiveKey' : '';
    await this.fenced(pk, {
      TableName: this.tableName,
      Key: { pk },
      UpdateExpression:
        `SET ${change.set}, lastError = :error, lastErrorAt = :now${archive} ${change.remove ?? ''}`.trim(),
      ConditionExpression: 'leaseToken = :token AND #status = :processing',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ...change.values,
        ':error': error.slice(0, 1000),
        ':now': iso(nowMs),
        ':token': leaseToken,
        ':processing': ClaimStatus.Processing,
        ...(archiveKey ? { ':archiveKey': archiveKey } : {}),
      },
    });
  }

  private async fenced(pk: string, update: ClaimStepUpdate): Promise<void> {
    try {
      await this.doc.send(new UpdateCommand(update));
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new LeaseLostError(pk);
      throw error;
    }
  }
}
