/**
 * The business tables: strongly consistent reads for planning, and the commit of a plan's writes in
 * one TransactWriteItems with the claim's step marker, so either both land or neither does.
 */
import { type DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { type ClaimStepUpdate, LeaseLostError } from '../store/processing-claims.js';
import type { EventOrder, GuardedWrite, TableRef } from './types.js';

export const DEFAULT_GUARD = 'lastEvent';

/**
 * Guard attribute names for a prefix: `lastEventId`, `lastEventCreated`, `lastEventRank`, and
 * `lastEventEffects`, the effects the writer planned (read back when its claim's markers are lost).
 */
export function guardAttributes(guard: string = DEFAULT_GUARD) {
  return {
    id: `${guard}Id`,
    at: `${guard}Created`,
    rank: `${guard}Rank`,
    effects: `${guard}Effects`,
  } as const;
}

/** The stale-order rule (pure): later time wins; same second, higher rank wins; otherwise the row stays. */
export function isNewer(
  order: EventOrder,
  row: Readonly<Record<string, unknown>> | undefined,
  guard?: string,
): boolean {
  if (row === undefined) return true;
  const names = guardAttributes(guard);
  const at = row[names.at];
  const rank = row[names.rank];
  if (typeof at !== 'number') return true;
  if (order.at !== at) return order.at > at;
  return order.rank > (typeof rank === 'number' ? rank : Number.NEGATIVE_INFINITY);
}

/** A business row changed between the plan's read and the commit: plan again. */
export class WriteConflictError extends Error {
  override readonly name = 'WriteConflictError';
}

/** What the plan read of one row: the basis of the commit's optimistic check. */
export interface ReadMark {
  readonly table: TableRef;
  readonly pk: string;
  readonly guard: string;
  readonly exists: boolean;
  readonly lastEventId: string | undefined;
  /** The row's last writer under this guard is the event being planned. */
  readonly writtenByThisEvent: boolean;
  /** The effects that writer planned, when the row records them. */
  readonly recordedEffects: readonly string[] | undefined;
}

/** What a plan's read sees of a row under a guard, for the event whose order is `order`. */
export function readMark(
  table: TableRef,
  pk: string,
  row: Readonly<Record<string, unknown>> | undefined,
  order: EventOrder,
  guard: string = DEFAULT_GUARD,
): ReadMark {
  const names = guardAttributes(guard);
  const lastEventId = row?.[names.id];
  const effects = row?.[names.effects];
  return {
    table,
    pk,
    guard,
    exists: row !== undefined,
    lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined,
    writtenByThisEvent: lastEventId === order.eventId,
    recordedEffects:
      Array.isArray(effects) && effects.every((e) => typeof e === 'string')
        ? (effects as string[])
        : undefined,
  };
}

export class StateStore {
  private readonly doc: DynamoDBDocumentClient;

  constructor(
    client: DynamoDBClient,
    private readonly tableNames: Readonly<Record<TableRef, string>>,
  ) {
    this.doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  }

  async get(table: TableRef, pk: string): Promise<Record<string, unknown> | undefined> {
    const result = await this.doc.send(
      new GetCommand({ TableName: this.tableNames[table], Key: { pk }, ConsistentRead: true }),
    );
    return result.Item;
  }

  /**
   * Commits the writes and the claim update atomically. Each write is conditioned on the stale-order
   * guard and, when the plan read the row, on the row's last writer being the one it read.
   * Throws WriteConflictError (plan again) or LeaseLostError (the claim is no longer ours).
   */
  async commit(
    writes: readonly GuardedWrite[],
    reads: readonly ReadMark[],
    claimUpdate: ClaimStepUpdate,
    nowMs: number,
    plannedEffects: readonly string[] = [],
  ): Promise<void> {
    const items = writes.map((write) => ({
      Update: this.updateFor(write, reads, nowMs, plannedEffects),
    }));
    try {
      await this.doc.send(new TransactWriteCommand({ TransactItems: [...items, { Update: claimUpdate }] }));
    } catch (error) {
      if (error instanceof TransactionCanceledException) {
        const reasons = error.CancellationReasons ?? [];
        if (reasons[items.length]?.Code === 'ConditionalCheckFailed')
          throw new LeaseLostError(claimUpdate.Key.pk);
        if (reasons.some((r) => r.Code === 'ConditionalCheckFailed' || r.Code === 'TransactionConflict')) {
          throw new WriteConflictError('a business row changed while the event was planned');
        }
      }
      throw error;
    }
  }

  private updateFor(
    write: GuardedWrite,
    reads: readonly ReadMark[],
    nowMs: number,
    plannedEffects: readonly string[],
  ) {
    const guard = write.guard ?? DEFAULT_GUARD;
    const names = guardAttributes(guard);
    const attributeNames: Record<string, string> = {
      '#gid': names.id,
      '#gat': names.at,
      '#grank': names.rank,
      '#geff': names.effects,
    };
    const values: Record<string, unknown> = {
      ':gid': write.order.eventId,
      ':gat': write.order.at,
      ':grank': write.order.rank,
      // With the state, in the same transaction: what a resume needs if the claim's markers are lost.
      ':geff': [...plannedEffects],
      ':updatedAt': new Date(nowMs).toISOString(),
    };
    const sets = ['#gid = :gid', '#gat = :gat', '#grank = :grank', '#geff = :geff', 'updatedAt = :updatedAt'];
    Object.entries(write.attributes).forEach(([name, value], index) => {
      if (value === undefined || name === 'pk') return;
      attributeNames[`#a${index}`] = name;
      values[`:a${index}`] = value;
      sets.push(`#a${index} = :a${index}`);
    });
    // Stale-order guard, enforced by DynamoDB whatever the handler decided.
    const conditions = ['(attribute_not_exists(#gat) OR #gat < :gat OR (#gat = :gat AND #grank < :grank))'];
    if (write.owner) {
      attributeNames['#own'] = write.owner.attribute;
      values[':own'] = write.owner.value;
      sets.push('#own = if_not_exists(#own, :own)');
      conditions.push('(attribute_not_exists(#own) OR #own = :own)');
    }
    const read = reads.find((r) => r.table === write.table && r.pk === write.pk && r.guard === guard);
    if (read) {
      if (!read.exists) conditions.push('attribute_not_exists(pk)');
      else if (read.lastEventId === undefined) conditions.push('attribute_not_exists(#gid)');
      else {
        conditions.push('#gid = :seen');
        values[':seen'] = read.lastEventId;
      }
    }
    return {
      TableName: this.tableNames[write.table],
      Key: { pk: write.pk },
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: attributeNames,
      ExpressionAttributeValues: values,
    };
  }
}
