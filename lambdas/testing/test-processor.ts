/**
 * The processor as deployed, for an app's own tests: the real core (`processMessage`) with the real
 * claims (`ProcessingClaims`) and business tables (`StateStore`) in DynamoDB Local, so the stale-order
 * guard, the check that a row did not change between plan and commit, the step markers, effects in
 * doubt and failing an event now all behave as they do in AWS. Only the queue is left out: a test
 * hands each message to `process` itself (and says which receive it is).
 */
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import {
  type ProcessorDeps,
  type ProcessorLog,
  type ProcessResult,
  processMessage,
  readEvent,
} from '../processor/core.js';
import { businessTableDefinition, StateStore } from '../processor/state-store.js';
import type {
  AdaptersOf,
  ApplierRegistry,
  EffectAdapter,
  ProcessingEvent,
  RuntimeApplierRegistry,
  TablesOf,
  WebhookAppTypes,
} from '../processor/types.js';
import type { EventMessage } from '../queue/event-message.js';
import { CLAIM_RETENTION_DEFAULT_SECONDS } from '../shared/claim-retention.js';
import type { ClaimRecord } from '../store/claim.js';
import { ProcessingClaims } from '../store/processing-claims.js';
import { claimsTableDefinition } from '../store/schema.js';
import { queueMessage, type ReceiveOptions, type SignedDelivery } from './delivery.js';
import { memoryDynamoDbClient } from './memory-dynamodb.js';

/** DynamoDB Local accepts any credentials; these keep the SDK from looking for real ones. */
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

export interface TestProcessorOptions<App extends WebhookAppTypes = WebhookAppTypes> {
  /** The appliers under test, as `createProcessor` takes them. */
  readonly appliers: ApplierRegistry<App>;
  /**
   * Effect adapters by name, as `createProcessor` takes them (and the construct's `effects` would
   * configure): `recordingAdapter()` records each call. @default none: `context.adapters.x` is undefined
   */
  readonly adapters?: { readonly [Name in AdaptersOf<App>]?: EffectAdapter };
  /** The business tables the appliers read and write (the construct's `tables` keys); each is created. */
  readonly tables: readonly TablesOf<App>[];
  /**
   * Where the tables are: DynamoDB Local's endpoint (`startDynamoDbLocal()`), a client of your own,
   * or `'memory'`: DynamoDB in memory at the wire (./memory-dynamodb.ts), which evaluates the very
   * condition and update expressions the processor sends; no Java, and a subset of DynamoDB.
   */
  readonly dynamodb:
    | { readonly endpoint: string; readonly region?: string }
    | { readonly client: DynamoDBClient }
    | 'memory';
  /** The processing lease. @default 30 */
  readonly leaseSeconds?: number;
  /** The queue's `maxReceiveCount`: a failure on this receive fails the claim. @default 3 */
  readonly maxReceiveCount?: number;
  /** The processor's clock, epoch milliseconds (lease times, claim times). @default Date.now */
  readonly clock?: () => number;
  /** Where the processor logs. @default kept in `logs` */
  readonly log?: ProcessorLog;
}

/** What `process` takes: a signed delivery (through the receiver), a `processingEvent`, or a queue message. */
export type ProcessInput = SignedDelivery | ProcessingEvent<unknown> | EventMessage;

export interface ProcessCallOptions extends ReceiveOptions {
  /** Which receive of the message this is (SQS's `ApproximateReceiveCount`). @default 1 */
  readonly receiveCount?: number;
}

export interface LogEntry {
  readonly level: 'info' | 'warn' | 'error';
  readonly message: string;
  readonly details: Record<string, unknown>;
}

export interface TestProcessor<App extends WebhookAppTypes = WebhookAppTypes> {
  /**
   * Processes one message as the processor Lambda does one SQS record, and resolves to the core's
   * result: `done` (with its `outcome`: `applied`, `stale`, `noop`, `unhandled`), `already-done` (a
   * duplicate), or `failed` (the event can never succeed: its claim is FAILED and the message went
   * to `deadLetters`). Rejects as the Lambda's record would fail (SQS would redeliver): an applier's
   * error, a busy claim; then call it again with `receiveCount` one higher.
   */
  process(input: ProcessInput, options?: ProcessCallOptions): Promise<ProcessResult>;
  /** The queue message `process` would be given for `input`. */
  message(input: ProcessInput, options?: ReceiveOptions): Promise<EventMessage>;
  /** A business row as stored (strongly consistent), or undefined. */
  row(table: TablesOf<App>, pk: string): Promise<Record<string, unknown> | undefined>;
  /** Every row of a business table. */
  rows(table: TablesOf<App>): Promise<Record<string, unknown>[]>;
  /** Writes a row as it stands before the test (plain put: no guard). */
  putRow(
    table: TablesOf<App>,
    item: Readonly<Record<string, unknown>> & { readonly pk: string },
  ): Promise<void>;
  /** The event's claim (its `status`, `outcome`, step markers, `unresumedEffects`, ...), or undefined. */
  claim(key: string): Promise<ClaimRecord | undefined>;
  /** The real names of the tables it created (claims included). */
  readonly tableNames: Readonly<Record<TablesOf<App> | 'claims', string>>;
  /** Messages moved to the DLQ by events that failed now, as they were received. */
  readonly deadLetters: readonly string[];
  /** What the processor logged (unless a `log` of your own was given). */
  readonly logs: readonly LogEntry[];
  /** The dependencies the core runs with, for what this API does not cover. */
  readonly deps: ProcessorDeps;
  /** Deletes the tables it created. */
  stop(): Promise<void>;
}

/** A DynamoDB table name for `ref` (a table's name allows letters, digits, `_`, `-` and `.`). */
function tableNameFor(ref: string, suffix: string): string {
  return `iwr-test-${ref.replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 200)}-${suffix}`;
}

function isEventMessage(input: ProcessInput): input is EventMessage {
  return (input as Partial<EventMessage>).v === 1 && typeof (input as Partial<EventMessage>).key === 'string';
}

/**
 * The processor with `appliers` against tables of its own in DynamoDB Local (the claims table as the
 * stack declares it, and one per `tables` entry, uniquely named): `stop()` deletes them.
 */
export async function createTestProcessor<App extends WebhookAppTypes = WebhookAppTypes>(
  options: TestProcessorOptions<App>,
): Promise<TestProcessor<App>> {
  const { dynamodb } = options;
  const external = typeof dynamodb === 'object' && 'client' in dynamodb ? dynamodb.client : undefined;
  const where =
    dynamodb === 'memory'
      ? 'memory'
      : 'endpoint' in dynamodb
        ? `DynamoDB Local at ${dynamodb.endpoint}`
        : 'your client';
  const client =
    external ??
    (dynamodb === 'memory'
      ? memoryDynamoDbClient()
      : new DynamoDBClient({
          endpoint: (dynamodb as { endpoint: string }).endpoint,
          region: (dynamodb as { region?: string }).region ?? 'us-east-1',
          credentials: LOCAL_CREDENTIALS,
        }));
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  const suffix = randomBytes(5).toString('hex');
  const claimsTable = tableNameFor('claims', suffix);
  const businessTables = Object.fromEntries(
    options.tables.map((table) => [table, tableNameFor(table, suffix)]),
  ) as Record<TablesOf<App>, string>;
  const created: string[] = [];
  try {
    await client.send(
      new CreateTableCommand({
        TableName: claimsTable,
        BillingMode: 'PAY_PER_REQUEST',
        ...claimsTableDefinition(),
      }),
    );
    created.push(claimsTable);
    for (const name of Object.values<string>(businessTables)) {
      await client.send(
        new CreateTableCommand({
          TableName: name,
          BillingMode: 'PAY_PER_REQUEST',
          ...businessTableDefinition(),
        }),
      );
      created.push(name);
    }
  } catch (error) {
    await dropTables(client, created);
    if (!external) client.destroy();
    throw new Error(
      `createTestProcessor could not create its tables (${where}): ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }

  const logs: LogEntry[] = [];
  const keep =
    (level: LogEntry['level']) =>
    (message: string, details: Record<string, unknown>): void => {
      logs.push({ level, message, details });
    };
  const deadLetters: string[] = [];
  const adapters = Object.fromEntries(
    Object.entries(options.adapters ?? {}).filter(([, adapter]) => adapter !== undefined),
  ) as Record<string, EffectAdapter>;
  for (const [name, adapter] of Object.entries(adapters)) {
    if (typeof adapter.call !== 'function' || typeof adapter.honoursIdempotencyKey !== 'boolean')
      throw new Error(
        `adapters.${name} must have call(body, idempotencyKey, options) and honoursIdempotencyKey`,
      );
  }
  const deps: ProcessorDeps = {
    claims: new ProcessingClaims(client, claimsTable),
    state: new StateStore(client, businessTables),
    // The compiler checked the registry against the app's types, as createProcessor's does.
    appliers: options.appliers as RuntimeApplierRegistry,
    leaseSeconds: options.leaseSeconds ?? 30,
    maxReceiveCount: options.maxReceiveCount ?? 3,
    claimRetentionSeconds: CLAIM_RETENTION_DEFAULT_SECONDS,
    effects: adapters,
    log: options.log ?? { info: keep('info'), warn: keep('warn'), error: keep('error') },
    deadLetters: {
      send: async (body) => {
        deadLetters.push(body);
      },
    },
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  };

  const message = async (input: ProcessInput, receive: ReceiveOptions = {}): Promise<EventMessage> => {
    if ('verifySecret' in input) return queueMessage(input, receive);
    if (!isEventMessage(input))
      throw new Error('process takes a signedDelivery, a processingEvent or a queue message');
    if (!('payload' in input)) return input;
    // A processing event: its message is the event without the payload, which the processor reads
    // again from the body. A payload changed by hand would be silently ignored: refuse it.
    const { payload, ...queued } = input as ProcessingEvent<unknown>;
    const read = readEvent(queued as EventMessage).payload;
    if (!isDeepStrictEqual(read, payload))
      throw new Error(
        "the event's payload is not what its body says: the processor reads the payload from the body, so build the event from the body you want (processingEvent(provider, body))",
      );
    return queued as EventMessage;
  };

  const tableOf = (table: string): string => {
    const name = Object.hasOwn(businessTables, table) ? businessTables[table as TablesOf<App>] : undefined;
    if (name === undefined)
      throw new Error(
        `no business table ${JSON.stringify(table)}: the test processor has ${options.tables.join(', ') || 'none'}`,
      );
    return name;
  };

  return {
    deps,
    deadLetters,
    logs,
    tableNames: { ...businessTables, claims: claimsTable },
    message,
    async process(input, call = {}) {
      const queued = await message(input, call);
      return processMessage(JSON.stringify(queued), call.receiveCount ?? 1, deps);
    },
    async row(table, pk) {
      const result = await doc.send(
        new GetCommand({ TableName: tableOf(table), Key: { pk }, ConsistentRead: true }),
      );
      return result.Item;
    },
    async rows(table) {
      const items: Record<string, unknown>[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await doc.send(
          new ScanCommand({ TableName: tableOf(table), ConsistentRead: true, ExclusiveStartKey: start }),
        );
        items.push(...(page.Items ?? []));
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
      return items;
    },
    async putRow(table, item) {
      await doc.send(new PutCommand({ TableName: tableOf(table), Item: { ...item } }));
    },
    async claim(key) {
      const result = await doc.send(
        new GetCommand({ TableName: claimsTable, Key: { pk: key }, ConsistentRead: true }),
      );
      return result.Item as ClaimRecord | undefined;
    },
    async stop() {
      await dropTables(client, created);
      if (!external) client.destroy();
    },
  };
}

async function dropTables(client: DynamoDBClient, names: readonly string[]): Promise<void> {
  await Promise.all(
    names.map((name) =>
      client.send(new DeleteTableCommand({ TableName: name })).catch(() => {
        // Gone already, or the server stopped first: nothing to clean.
      }),
    ),
  );
}
