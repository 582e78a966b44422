/**
 * The DynamoDB claim store: the only code that knows how claims are laid out in the table.
 * Each method is a single request. Every condition treats an item whose `expiresAt` has passed as
 * absent, because DynamoDB deletes expired items lazily (hours, sometimes days, after expiry):
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  type ClaimRecord,
  ClaimStatus,
  type ClaimStore,
  type CreateClaimResult,
  claimErrorText,
  isExpired,
  type Lease,
  type NewClaim,
  newClaimRecord,
  type TakeOverExpectation,
  type TakeOverOptions,
} from './claim.js';
import { ClaimsTable, epochSeconds, isoTime as iso } from './claims-table.js';
import { writeNewClaim } from './new-claim.js';
import { pendingShard } from './unfinished-index.js';

export interface DynamoClaimStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
}

/** Condition fragment: the item exists and is inside its TTL window. */
const LIVE = 'attribute_exists(pk) AND expiresAt > :nowS';

export class DynamoClaimStore extends ClaimsTable implements ClaimStore {
  constructor(options: DynamoClaimStoreOptions) {
    super(options.client, options.tableName);
  }

  async createClaim(claim: NewClaim, lease: Lease, nowMs: number): Promise<CreateClaimResult> {
    return writeNewClaim(
      this.doc,
      this.tableName,
      newClaimRecord(claim, lease, ClaimStatus.Received, nowMs),
      nowMs,
    );
  }

  async recordDuplicate(pk: string, nowMs: number): Promise<ClaimRecord | undefined> {
    return this.updateReturning({
      Key: { pk },
      UpdateExpression: 'ADD deliveries :one SET lastSeenAt = :now',
      ConditionExpression: LIVE,
      ExpressionAttributeValues: { ':one': 1, ':now': iso(nowMs), ':nowS': epochSeconds(nowMs) },
    });
  }

  async getClaim(pk: string, nowMs: number): Promise<ClaimRecord | undefined> {
    const item = await this.readItem(pk);
    return item && !isExpired(item, nowMs) ? item : undefined;
  }

  async takeOver(
    pk: string,
    expected: TakeOverExpectation,
    lease: Lease,
    nowMs: number,
    options: TakeOverOptions = {},
  ): Promise<ClaimRecord | undefined> {
    const unmarked = options.unmarked === true;
    const token =
      expected.leaseToken === undefined
        ? { condition: 'attribute_not_exists(leaseToken)', values: {} }
        : { condition: 'leaseToken = :oldToken', values: { ':oldToken': expected.leaseToken } };
    return this.updateReturning({
      Key: { pk },
      // Back in the index of unfinished claims (a FAILED claim had left it), out of any stuck report.
      UpdateExpression: `SET #status = :received, leaseToken = :token, leaseExpiresAt = :leaseUntil, leaseOwner = :owner, sweepShard = :shard, sweepAt = :leaseUntil${unmarked ? ', unmarked = :true' : ''} REMOVE stuckAt, stuckReason, sweepResend${unmarked ? '' : ', unmarked'}`,
      // A live lease is never taken, whatever the caller saw: the lease check is in the condition.
      ConditionExpression: `${LIVE} AND #status = :expected AND ${token.condition} AND (attribute_not_exists(leaseExpiresAt) OR leaseExpiresAt <= :nowMs)`,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':received': ClaimStatus.Received,
        ':expected': expected.status,
        ':token': lease.token,
        ':leaseUntil': lease.expiresAt,
        ':owner': lease.owner,
        ':shard': pendingShard(pk),
        ':nowS': epochSeconds(nowMs),
        ':nowMs': nowMs,
        ...token.values,
        ...(unmarked ? { ':true': true } : {}),
      },
    });
  }

  async markEnqueued(
    pk: string,
    leaseToken: string,
    messageId: string | undefined,
    nowMs: number,
    archiveKey?: string,
  ): Promise<boolean> {
    const sets = [
      '#status = :enqueued',
      'enqueuedAt = :now',
      ...(messageId ? ['messageId = :messageId'] : []),
      ...(archiveKey ? ['archiveKey = :archiveKey'] : []),
    ];
    const updated = await this.updateReturning({
      Key: { pk },
      UpdateExpression: `SET ${sets.join(', ')} REMOVE leaseToken, leaseExpiresAt, leaseOwner, lastError`,
      ConditionExpression: 'leaseToken = :token AND #status = :received',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':enqueued': ClaimStatus.Enqueued,
        ':received': ClaimStatus.Received,
        ':token': leaseToken,
        ':now': iso(nowMs),
        ...(messageId ? { ':messageId': messageId } : {}),
        ...(archiveKey ? { ':archiveKey': archiveKey } : {}),
      },
    });
    return updated !== undefined;
  }

  async releaseClaim(pk: string, leaseToken: string, reason: string, nowMs: number): Promise<boolean> {
    const updated = await this.updateReturning({
      Key: { pk },
      // The lease ends now: the next delivery of the key takes the claim over and enqueues. Nothing
      // was queued, so the claim is no longer `unmarked` (a duplicate must take it, not copy it).
      UpdateExpression: 'SET leaseExpiresAt = :nowMs, lastError = :reason REMOVE unmarked',
      ConditionExpression: 'leaseToken = :token AND #status = :received',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':received': ClaimStatus.Received,
        ':token': leaseToken,
        ':nowMs': nowMs,
        ':reason': claimErrorText(reason),
      },
    });
    return updated !== undefined;
  }
}
