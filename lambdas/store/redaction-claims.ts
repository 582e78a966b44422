/**
 * A Shopify redaction's side of the claims table: an archived event's body is removed only once
 * its claim is DONE (docs/rules.md section 11, "Events not applied yet").
 *
 * - The request asks each matched event's claim first (`settle`): a claim that is not DONE is marked
 *   pending redaction by the request, in one write conditional on it not being DONE, and its body is
 *   kept; a DONE claim is marked redacted and its body removed; no live claim means no message can
 *   still need the body (a claim outlives every copy of its message, section 4), so it is removed.
 * - The processor, right after DONE, reads the claim (`pending`), puts it back in the sweeper's
 *   index (`holdInIndex`) so that a crash cannot forget it, removes the body, and marks it redacted,
 *   leaving the index (`complete`).
 * Item layout: ./claim.ts.
 */
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { type ClaimRecord, ClaimStatus, isExpired } from './claim.js';
import { ClaimsTable, isoTime as iso, epochSeconds as seconds } from './claims-table.js';
import { pendingShard, UNFINISHED_ATTRIBUTES } from './unfinished-index.js';

/** What a redaction may do with an event's archived body, as its claim says. */
export type RedactionVerdict =
  /** The claim is not DONE: it is marked pending redaction; keep the body. */
  | 'deferred'
  /** The claim is DONE: it is marked redacted; remove the body. */
  | 'redacted'
  /** No live claim (absent or past its TTL): no message can still need the body; remove it. */
  | 'gone';

/** The compliance request asking: its idempotency key, and when it began (epoch ms). */
export interface RedactionRequest {
  readonly by: string;
  readonly startedAtMs: number;
}

/** A claim whose event's body a compliance request left until the event is DONE. */
export interface PendingRedaction {
  readonly pk: string;
  readonly provider: string;
  readonly status: ClaimRecord['status'];
  readonly firstSeenAt: string;
  readonly archiveKey?: string;
  /** The request that deferred it, and when that request began. */
  readonly by: string;
  readonly since: string;
  /** The archive objects the request found the event in and kept, in no particular order (a set). */
  readonly objects: readonly string[];
}

/** How many times `settle` asks again when the claim moves between its two writes. */
const MAX_SETTLE_ROUNDS = 3;

export class RedactionClaims extends ClaimsTable {
  constructor(client: DynamoDBClient | DynamoDBDocumentClient, tableName: string) {
    super(client, tableName);
  }

  /**
   * Decides whether `request` may remove the event `pk`'s body from `objectKey` now. Repeat-safe:
   * the first request and its start time are kept, each object the event was kept in is added.
   */
  async settle(
    pk: string,
    request: RedactionRequest,
    objectKey: string,
    nowMs: number,
  ): Promise<RedactionVerdict> {
    for (let round = 1; round <= MAX_SETTLE_ROUNDS; round++) {
      try {
        await this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk },
            UpdateExpression:
              'SET redactionPendingBy = if_not_exists(redactionPendingBy, :by), redactionPendingAt = if_not_exists(redactionPendingAt, :since) ADD redactionObjects :object',
            // The one condition that keeps a body some attempt, redrive or sweep still needs.
            ConditionExpression: 'attribute_exists(pk) AND expiresAt > :nowS AND #status <> :done',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':by': request.by,
              ':since': iso(request.startedAtMs),
              ':object': new Set([objectKey]),
              ':nowS': seconds(nowMs),
              ':done': ClaimStatus.Done,
            },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return 'deferred';
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        // lib-dynamodb does not unmarshall the item carried by the error.
        const existing = error.Item ? (unmarshall(error.Item) as ClaimRecord) : undefined;
        if (existing === undefined || isExpired(existing, nowMs)) return 'gone';
      }
      // DONE when the mark was refused: record the redaction, unless it left DONE in between (a
      // forced replay reopened it), then ask again.
      const marked = await this.updateIf({
        Key: { pk },
        UpdateExpression: 'SET redactedBy = :by, redactedAt = :now',
        ConditionExpression: '#status = :done AND expiresAt > :nowS',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':by': request.by,
          ':now': iso(nowMs),
          ':done': ClaimStatus.Done,
          ':nowS': seconds(nowMs),
        },
      });
      if (marked) return 'redacted';
    }
    throw new Error(
      `claim ${pk} kept changing while a compliance redaction asked whether it is DONE; the request is retried`,
    );
  }

  /** The claim's pending redaction (strongly consistent), or undefined when it has none. */
  async pending(pk: string): Promise<PendingRedaction | undefined> {
    const claim = await this.readItem(pk);
    if (claim?.redactionPendingBy === undefined) return undefined;
    return {
      pk,
      provider: claim.provider,
      status: claim.status,
      firstSeenAt: claim.firstSeenAt,
      ...(claim.archiveKey === undefined ? {} : { archiveKey: claim.archiveKey }),
      by: claim.redactionPendingBy,
      since: claim.redactionPendingAt ?? claim.firstSeenAt,
      objects: [...(claim.redactionObjects ?? [])],
    };
  }

  /**
   * Puts a DONE claim whose redaction is pending back in the sweeper's index, due at `dueAtMs`:
   * whoever removes the body next (this worker, a redelivery, the sweeper) finds it there until it
   * is done. False when there is nothing pending any more (done by someone else) or it is not DONE.
   */
  async holdInIndex(pk: string, dueAtMs: number, nowMs: number): Promise<boolean> {
    return this.updateIf({
      Key: { pk },
      UpdateExpression: 'SET sweepShard = :shard, sweepAt = :due',
      ConditionExpression: '#status = :done AND attribute_exists(redactionPendingBy) AND expiresAt > :nowS',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':shard': pendingShard(pk),
        ':due': dueAtMs,
        ':done': ClaimStatus.Done,
        ':nowS': seconds(nowMs),
      },
    });
  }

  /**
   * The body is removed: the claim records by which request and when, drops the pending mark and
   * leaves the sweeper's index. False when the mark was gone already (another worker finished).
   */
  async complete(pk: string, by: string, nowMs: number): Promise<boolean> {
    return this.updateIf({
      Key: { pk },
      UpdateExpression: `SET redactedBy = :by, redactedAt = :now REMOVE redactionPendingBy, redactionPendingAt, redactionObjects, ${UNFINISHED_ATTRIBUTES.join(', ')}`,
      ConditionExpression: '#status = :done AND attribute_exists(redactionPendingBy)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':by': by, ':now': iso(nowMs), ':done': ClaimStatus.Done },
    });
  }
}
