/**
 * Counts DynamoDB capacity units per request without touching the code under test: middleware on
 * the DynamoDBClient that is injected into our store (and into the baselines) asks every request for
 * `ReturnConsumedCapacity: 'TOTAL'` and adds up what comes back.
 *
 * Two things DynamoDB (Local or not) does not report, and which are therefore modelled here:
 * - A failed conditional write answers with ConditionalCheckFailedException and no ConsumedCapacity,
 *   yet it is billed: "the amount consumed is dependent on the size of the existing item (or a minimum
 *   of 1)" (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html).
 *   Counted as max(1, ceil(larger of existing and new item / 1 KB)).
 * - TransactWriteItems costs 2 write units per item per KB (prepare + commit). DynamoDB Local reports 2
 *   for a whole transaction whatever its size (measured), so transactions are counted from the request:
 *   2 x max(1, ceil(item / 1 KB)) per item; items written by Update are taken as <= 1 KB, which the
 *   bench checks afterwards by scanning the tables (see maxItemBytes).
 */
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';

export type UnitBasis = 'reported' | 'failed-condition' | 'transaction';

export interface OperationUnits {
  readonly command: string;
  readonly writeUnits: number;
  readonly readUnits: number;
  readonly basis: UnitBasis;
  /** What DynamoDB returned in ConsumedCapacity, when it returned anything. */
  readonly reportedUnits?: number;
}

export interface CapacityTally {
  readonly writeUnits: number;
  readonly readUnits: number;
  readonly operations: readonly OperationUnits[];
}

const READ_COMMANDS = new Set([
  'GetItemCommand',
  'BatchGetItemCommand',
  'QueryCommand',
  'ScanCommand',
  'TransactGetItemsCommand',
]);
const WRITE_COMMANDS = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);

const KB = 1024;

/** Item size by DynamoDB's rules: attribute name bytes plus value bytes (numbers approximated). */
export function itemSizeBytes(item: Readonly<Record<string, AttributeValue>> | undefined): number {
  if (!item) return 0;
  let size = 0;
  for (const [name, value] of Object.entries(item)) size += Buffer.byteLength(name) + valueSize(value);
  return size;
}

function numberSize(text: string): number {
  const digits = text.replace(/[^0-9]/g, '').replace(/^0+/, '').length;
  return Math.ceil(digits / 2) + 1;
}

function valueSize(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return numberSize(value.N);
  if (value.B !== undefined) return value.B.length;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((sum, s) => sum + Buffer.byteLength(s), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, n) => sum + numberSize(n), 0);
  if (value.BS !== undefined) return value.BS.reduce((sum, b) => sum + b.length, 0);
  if (value.M !== undefined) return 3 + itemSizeBytes(value.M) + Object.keys(value.M).length;
  if (value.L !== undefined) return 3 + value.L.reduce((sum, v) => sum + valueSize(v) + 1, 0);
  return 0;
}

const writeUnitsFor = (bytes: number): number => Math.max(1, Math.ceil(bytes / KB));

interface ConsumedCapacityLike {
  readonly CapacityUnits?: number;
}

function reportedUnits(consumed: unknown): number | undefined {
  if (consumed === undefined || consumed === null) return undefined;
  const list = (Array.isArray(consumed) ? consumed : [consumed]) as ConsumedCapacityLike[];
  return list.reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
}

interface TransactItem {
  readonly Put?: { readonly Item?: Record<string, AttributeValue> };
  readonly Update?: unknown;
  readonly Delete?: unknown;
  readonly ConditionCheck?: unknown;
}

function transactionUnits(input: Record<string, unknown>): number {
  const items = (input.TransactItems as TransactItem[] | undefined) ?? [];
  return items.reduce((sum, item) => sum + 2 * writeUnitsFor(itemSizeBytes(item.Put?.Item)), 0);
}

/** Attach to one or more DynamoDB clients; read the units spent since the last take() with take(). */
export class CapacityMeter {
  private operations: OperationUnits[] = [];

  attach(client: DynamoDBClient): DynamoDBClient {
    // Before serialization, so the flag is sent (the document client keeps top-level fields as they are).
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const command = context.commandName ?? '';
        if (READ_COMMANDS.has(command) || WRITE_COMMANDS.has(command)) {
          (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
        }
        return next(args);
      },
      { step: 'initialize', name: 'benchReturnConsumedCapacity', override: true },
    );
    // After serialization: the input seen here is in AttributeValue form, whichever client sent it.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const command = context.commandName ?? '';
        const input = args.input as Record<string, unknown>;
        try {
          const result = await next(args);
          this.recordSuccess(
            command,
            input,
            (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity,
          );
          return result;
        } catch (error) {
          this.recordFailure(command, input, error);
          throw error;
        }
      },
      { step: 'build', name: 'benchConsumedCapacity', override: true },
    );
    return client;
  }

  /** Units spent since the previous call. */
  take(): CapacityTally {
    const operations = this.operations;
    this.operations = [];
    return {
      writeUnits: operations.reduce((sum, o) => sum + o.writeUnits, 0),
      readUnits: operations.reduce((sum, o) => sum + o.readUnits, 0),
      operations,
    };
  }

  private recordSuccess(command: string, input: Record<string, unknown>, consumed: unknown): void {
    const reported = reportedUnits(consumed);
    const extra = reported === undefined ? {} : { reportedUnits: reported };
    if (command === 'TransactWriteItemsCommand') {
      const units = transactionUnits(input);
      this.operations.push({ command, writeUnits: units, readUnits: 0, basis: 'transaction', ...extra });
    } else if (WRITE_COMMANDS.has(command)) {
      this.operations.push({ command, writeUnits: reported ?? 0, readUnits: 0, basis: 'reported', ...extra });
    } else if (READ_COMMANDS.has(command)) {
      this.operations.push({ command, writeUnits: 0, readUnits: reported ?? 0, basis: 'reported', ...extra });
    }
  }

  private recordFailure(command: string, input: Record<string, unknown>, error: unknown): void {
    const name = (error as { name?: string } | undefined)?.name;
    if (name === 'ConditionalCheckFailedException' && WRITE_COMMANDS.has(command)) {
      const existing = (error as { Item?: Record<string, AttributeValue> }).Item;
      const written = input.Item as Record<string, AttributeValue> | undefined;
      const units = writeUnitsFor(Math.max(itemSizeBytes(existing), itemSizeBytes(written)));
      this.operations.push({ command, writeUnits: units, readUnits: 0, basis: 'failed-condition' });
    } else if (name === 'TransactionCanceledException') {
      // A cancelled transaction is billed too; counted like a committed one.
      this.operations.push({
        command,
        writeUnits: transactionUnits(input),
        readUnits: 0,
        basis: 'transaction',
      });
    }
  }
}

/** Counts the requests a client sends, by command (for S3, where each request is billed). */
export class RequestCounter {
  private counts = new Map<string, number>();

  attach(client: S3Client): S3Client {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const command = (context.commandName ?? '').replace(/Command$/, '');
        this.counts.set(command, (this.counts.get(command) ?? 0) + 1);
        return next(args);
      },
      { step: 'initialize', name: 'benchRequestCounter', override: true },
    );
    return client;
  }

  /** Requests since the previous call, by command. */
  take(): Record<string, number> {
    const counts = Object.fromEntries(this.counts);
    this.counts = new Map();
    return counts;
  }
}
