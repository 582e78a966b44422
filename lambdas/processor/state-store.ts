/**
 * The business tables: strongly consistent reads for planning, and the commit of a plan's writes in
 * one TransactWriteItems with the claim's step marker, so either both land or neither does.
 */
import {
  type CreateTableCommandInput,
  type DynamoDBClient,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { type ClaimStepUpdate, LeaseLostError } from '../store/processing-claims.js';
import { DEFAULT_GUARD, guardAttributes } from './sdk/order.js';
import type { EventOrder, GuardedWrite, TableRef } from './types.js';

export { DEFAULT_GUARD, guardAttributes, isNewer } from './sdk/order.js';

/**
 * A business table as the processor addresses its rows: by the string partition key `pk` alone
 * (`Key: { pk }` below). The construct refuses a table built otherwise; tests and the testing entry
 * point create theirs with this.
 */
export function businessTableDefinition(): Pick<
  CreateTableCommandInput,
  'AttributeDefinitions' | 'KeySchema'
> {
  return {
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
  };
}

/** An applier read or wrote a business table the processor was not configured with. */
export class UnknownTableError extends Error {
  override readonly name = 'UnknownTableError';
}

/**
 * An applier keyed a row with a value DynamoDB cannot store: empty, or over its 2,048-byte partition
 * key limit. Found before the call, so the claim's `lastError` names the table and the size rather
 * than a bare ValidationException. An applier that keys rows by provider ids should hash ids that
 * long (docs/processor.md).
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html
 */
export class RowKeyError extends Error {
  override readonly name = 'RowKeyError';
}

/** DynamoDB's limit on a partition key value, in UTF-8 bytes. */
export const MAX_ROW_KEY_BYTES = 2048;

function checkRowKey(table: TableRef, pk: string): void {
  const bytes = Buffer.byteLength(pk);
  if (bytes === 0) throw new RowKeyError(`${table} row key is empty`);
  if (bytes > MAX_ROW_KEY_BYTES)
    throw new RowKeyError(
      `${table} row key is ${bytes} bytes, over DynamoDB's 2,048-byte limit (starts ${JSON.stringify(pk.slice(0, 40))})`,
    );
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

  /** The real name of a business table; an applier naming a table the construct was not given is a bug. */
  private tableName(table: TableRef): string {
    const name = Object.hasOwn(this.tableNames, table) ? this.tableNames[table] : undefined;
    if (name === undefined) {
      const known = Object.keys(this.tableNames);
      throw new UnknownTableError(
        `no business table ${JSON.stringify(table)}: the processor was given ${known.length ? known.map((k) => JSON.stringify(k)).join(', ') : 'none'} (the construct's \`tables\` prop, BUSINESS_TABLES)`,
      );
    }
    return name;
  }

  async get(table: TableRef, pk: string): Promise<Record<string, unknown> | undefined> {
    checkRowKey(table, pk);
    const result = await this.doc.send(
      new GetCommand({ TableName: this.tableName(table), Key: { pk }, ConsistentRead: true }),
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
    checkRowKey(write.table, write.pk);
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
      TableName: this.tableName(write.table),
      Key: { pk: write.pk },
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: attributeNames,
      ExpressionAttributeValues: values,
    };
  }
}
