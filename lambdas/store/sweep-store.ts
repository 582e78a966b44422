/**
 * The sweeper's side of the claims table: list the unfinished claims that are due (the sparse index,
 * never a Scan), read each one, and move it on with a write fenced on what was read, so a receiver,
 * a processor or another sweep that moved the claim in between always wins. Layout: ./claim.ts and
 * ./unfinished-index.ts.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { type ClaimRecord, ClaimStatus, claimErrorText } from './claim.js';
import { ClaimsTable, isoTime as iso, epochSeconds as seconds } from './claims-table.js';
import { pendingShard, pendingShards, STUCK_SHARD, UNFINISHED_INDEX } from './unfinished-index.js';

/** An index entry: a claim's key and when it was due. */
export interface DueClaim {
  readonly pk: string;
  readonly sweepAt: number;
}

export interface DueClaims {
  readonly claims: readonly DueClaim[];
  /** More were due than `limit`: the next run takes them. */
  readonly truncated: boolean;
}

/** Queries in flight at once while listing the shards. */
const SHARD_QUERY_CONCURRENCY = 8;
/** Stuck claims read (or counted) a query page. */
const STUCK_PAGE = 1_000;

export class SweepStore extends ClaimsTable {
  constructor(client: DynamoDBClient | DynamoDBDocumentClient, tableName: string) {
    super(client, tableName);
  }

  /** Unfinished claims due by `nowMs`, oldest first within each shard, at most `limit` in all. */
  async listDue(nowMs: number, limit: number): Promise<DueClaims> {
    const waiting = pendingShards();
    const perShard = Math.max(1, Math.ceil(limit / waiting.length));
    const found: DueClaim[] = [];
    let truncated = false;
    while (waiting.length > 0) {
      const pages = await Promise.all(
        waiting.splice(0, SHARD_QUERY_CONCURRENCY).map((shard) =>
          this.doc.send(
            new QueryCommand({
              TableName: this.tableName,
              IndexName: UNFINISHED_INDEX,
              KeyConditionExpression: 'sweepShard = :shard AND sweepAt <= :nowMs',
              ExpressionAttributeValues: { ':shard': shard, ':nowMs': nowMs },
              // One more than taken: a full page then means more are due (LastEvaluatedKey
              // alone is also set when exactly `Limit` matched).
              Limit: perShard + 1,
            }),
          ),
        ),
      );
      for (const page of pages) {
        const items = page.Items ?? [];
        if (items.length > perShard) truncated = true;
        for (const item of items.slice(0, perShard))
          found.push({ pk: String(item.pk), sweepAt: Number(item.sweepAt) });
      }
    }
    return { claims: found.slice(0, limit), truncated: truncated || found.length > limit };
  }

  /** The claim, strongly consistent; undefined when absent. Expired claims are returned (see dropExpired). */
  async get(pk: string): Promise<ClaimRecord | undefined> {
    return this.readItem(pk);
  }

  /** Not due yet (a live lease, a young ENQUEUED claim): look again at `sweepAt`. */
  async defer(claim: ClaimRecord, sweepAtMs: number, nowMs: number): Promise<boolean> {
    return this.fenced(claim, nowMs, 'SET sweepAt = :next', { ':next': sweepAtMs });
  }

  /**
   * Puts the claim back to ENQUEUED before its event is sent again: RECEIVED whose receiver never
   * sent, PROCESSING whose lease ran out with no redelivery, or ENQUEUED whose message never came.
   * Step markers stay, so the processor resumes where the last attempt stopped. False when the
   * claim moved since it was read (someone else is handling it).
   */
  async requeue(
    claim: ClaimRecord,
    archiveKey: string,
    nextSweepAtMs: number,
    nowMs: number,
  ): Promise<boolean> {
    return this.fenced(
      claim,
      nowMs,
      'SET #status = :enqueued, enqueuedAt = :now, lastSweptAt = :now, sweepAt = :next, archiveKey = :archiveKey ADD sweeps :one REMOVE leaseToken, leaseExpiresAt, leaseOwner, sweepResend',
      {
        ':enqueued': ClaimStatus.Enqueued,
        ':now': iso(nowMs),
        ':next': nextSweepAtMs,
        ':archiveKey': archiveKey,
        ':one': 1,
      },
    );
  }

  /**
   * Before the event of a DONE claim whose deferred redaction is not finished is sent again (the
   * processor finishes it): due again after `nextSweepAtMs` in case that does not work either,
   * counted in `sweeps`. The status stays DONE. False when the claim moved since it was read.
   */
  async resendForRedaction(claim: ClaimRecord, nextSweepAtMs: number, nowMs: number): Promise<boolean> {
    return this.fenced(claim, nowMs, 'SET sweepAt = :next, lastSweptAt = :now ADD sweeps :one', {
      ':next': nextSweepAtMs,
      ':now': iso(nowMs),
      ':one': 1,
    });
  }

  /**
   * After a failed send of a requeued event: due again now, and marked so the next run sends it
   * without waiting out the ENQUEUED staleness (the claim says it was just queued; it was not).
   */
  async dueNow(pk: string, sweepAtMs: number, nowMs: number, error: string): Promise<void> {
    await this.updateIf({
      Key: { pk },
      UpdateExpression: 'SET sweepAt = :nowMs, sweepResend = :true, lastError = :error, lastErrorAt = :now',
      ConditionExpression: 'sweepAt = :seen AND #status = :enqueued',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':nowMs': nowMs,
        ':true': true,
        ':seen': sweepAtMs,
        ':enqueued': ClaimStatus.Enqueued,
        ':error': claimErrorText(error),
        ':now': iso(nowMs),
      },
    });
  }

  /**
   * Reports a claim the sweeper cannot recover: it moves to the stuck shard, keyed by its TTL, until
   * a take-over (a provider retry), a replay that finishes it, or its TTL. The claim is not changed
   * otherwise: whatever could still finish it may.
   */
  async markStuck(claim: ClaimRecord, reason: string, nowMs: number): Promise<boolean> {
    return this.fenced(
      claim,
      nowMs,
      'SET sweepShard = :stuck, sweepAt = :ttlMs, stuckAt = :now, stuckReason = :reason',
      {
        ':stuck': STUCK_SHARD,
        ':ttlMs': claim.expiresAt * 1000,
        ':now': iso(nowMs),
        // The operator's whole explanation: written once, on a claim nothing else is moving, so
        // its size costs a unit or two once, not on every later write (unlike `lastError`).
        ':reason': reason.slice(0, 1000),
      },
    );
  }

  /** An expired claim still in the index (TTL deletes lazily): take it out, so sweeps stop reading it. */
  async dropExpired(pk: string, nowMs: number): Promise<void> {
    await this.updateIf({
      Key: { pk },
      UpdateExpression: 'REMOVE sweepShard, sweepAt',
      ConditionExpression: 'attribute_exists(pk) AND expiresAt <= :nowS',
      ExpressionAttributeValues: { ':nowS': seconds(nowMs) },
    });
  }

  /** Keys of the stuck claims whose TTL has not passed, soonest TTL first, at most `limit`. */
  async listStuck(nowMs: number, limit = 1_000): Promise<DueClaim[]> {
    const found: DueClaim[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.stuckPage(nowMs, start, { Limit: Math.min(limit - found.length, STUCK_PAGE) });
      for (const item of page.Items ?? []) found.push({ pk: String(item.pk), sweepAt: Number(item.sweepAt) });
      start = page.LastEvaluatedKey;
    } while (start !== undefined && found.length < limit);
    return found;
  }

  /** How many live claims are reported stuck (a count over the index keys, no item read). */
  async countStuck(nowMs: number): Promise<number> {
    let count = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.stuckPage(nowMs, start, { Select: 'COUNT', Limit: STUCK_PAGE });
      count += page.Count ?? 0;
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    return count;
  }

  /** One page of the stuck shard's live entries, from `start`. */
  private stuckPage(
    nowMs: number,
    start: Record<string, unknown> | undefined,
    page: { readonly Limit: number; readonly Select?: 'COUNT' },
  ) {
    return this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: UNFINISHED_INDEX,
        KeyConditionExpression: 'sweepShard = :stuck AND sweepAt > :nowMs',
        ExpressionAttributeValues: { ':stuck': STUCK_SHARD, ':nowMs': nowMs },
        ExclusiveStartKey: start,
        ...page,
      }),
    );
  }

  /**
   * An update that applies only if the claim is as the sweeper read it: same status, same lease
   * token (or none), same due time, in a pending shard, not expired, and no live lease. Every move
   * of a receiver, a processor or another sweep changes one of these.
   */
  private async fenced(
    claim: ClaimRecord,
    nowMs: number,
    update: string,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    const token =
      claim.leaseToken === undefined
        ? { condition: 'attribute_not_exists(leaseToken)', values: {} }
        : { condition: 'leaseToken = :seenToken', values: { ':seenToken': claim.leaseToken } };
    return this.updateIf({
      Key: { pk: claim.pk },
      UpdateExpression: update,
      ConditionExpression: `#status = :seenStatus AND ${token.condition} AND sweepAt = :seenSweepAt AND sweepShard = :pending AND expiresAt > :nowS AND (attribute_not_exists(leaseExpiresAt) OR leaseExpiresAt <= :nowMs)`,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ...values,
        ...token.values,
        ':seenStatus': claim.status,
        ':seenSweepAt': claim.sweepAt,
        ':pending': pendingShard(claim.pk),
        ':nowS': seconds(nowMs),
        ':nowMs': nowMs,
      },
    });
  }
}
