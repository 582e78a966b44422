/**
 * StateStore on DynamoDB Local, and readMark: the commit's conditions row by row (which read mark
 * guards which write, rows under two guards, one key in two tables, a row created or changed since
 * the plan read it, a row owned by another tenant), what a write skips, and how a cancelled
 * transaction is reported. The processor's tests reach most of these only on their common side;
 * the mutation run (docs/mutation.md) found each untested.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  MAX_ROW_KEY_BYTES,
  type ReadMark,
  RowKeyError,
  readMark,
  StateStore,
  UnknownTableError,
  WriteConflictError,
} from '../../lambdas/processor/state-store.js';
import type { EventOrder, GuardedWrite } from '../../lambdas/processor/types.js';
import { CLAIM_RETENTION_DEFAULT_SECONDS } from '../../lambdas/shared/claim-retention.js';
import { type ClaimStepUpdate, ProcessingClaims } from '../../lambdas/store/processing-claims.js';
import {
  createClaimsTable,
  createTable,
  documentClient,
  dynamoClient,
  getItem,
  putItem,
  withEachCommand,
} from '../helpers/aws.js';

const NOW = Date.parse('2026-12-04T12:00:00Z');
const dynamo = dynamoClient();
const doc = documentClient(dynamo);

let tables: { payments: string; orders: string };
let claims: ProcessingClaims;
let state: StateStore;
beforeEach(async () => {
  const [claimsTable, payments, orders] = await Promise.all([
    createClaimsTable(dynamo),
    createTable(dynamo, 'payments'),
    createTable(dynamo, 'orders'),
  ]);
  tables = { payments, orders };
  claims = new ProcessingClaims(dynamo, claimsTable);
  state = new StateStore(dynamo, tables);
});

let sequence = 0;
/** A claim held by a worker, and the `state` step update its commit carries. */
async function heldClaim(): Promise<ClaimStepUpdate> {
  sequence += 1;
  const pk = `stripe:platform:evt_state_${sequence}`;
  const retain = Math.floor(NOW / 1000) + CLAIM_RETENTION_DEFAULT_SECONDS;
  await claims.beginProcessing(
    {
      pk,
      provider: 'stripe',
      account: 'platform',
      eventId: `evt_${sequence}`,
      eventType: 't',
      expiresAt: retain,
    },
    { token: 'worker', expiresAt: NOW + 30_000, owner: 'processor' },
    NOW,
    retain,
  );
  return claims.stepUpdate(pk, 'worker', { step: 'state' }, NOW);
}

const order = (at: number, eventId: string, rank = 0): EventOrder => ({ at, rank, eventId });
const row = (table: keyof typeof tables, pk: string) => getItem(doc, tables[table], pk);
/** What a plan's read of `pk` sees now. */
async function read(
  table: keyof typeof tables,
  pk: string,
  at: EventOrder,
  guard?: string,
): Promise<ReadMark> {
  return readMark(table, pk, await state.get(table, pk), at, guard);
}
const write = (
  table: keyof typeof tables,
  pk: string,
  at: EventOrder,
  attributes: Record<string, unknown>,
  extra: Partial<GuardedWrite> = {},
): GuardedWrite => ({ table, pk, order: at, attributes, ...extra });

/**
 * What DynamoDB answers when it cancels a transaction for a reason DynamoDB Local cannot be made to
 * give on demand (another transaction holding the item, throttling): the write item's reason, then
 * the claim update's.
 */
const cancelled = (code: string) =>
  new TransactionCanceledException({
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${code}, None]`,
    $metadata: {},
    CancellationReasons: [{ Code: code }, { Code: 'None' }],
  });

const withTransactionsCancelled = (error: TransactionCanceledException, fn: () => Promise<void>) =>
  withEachCommand(
    dynamo,
    (command) => {
      if (command === 'TransactWriteItemsCommand') throw error;
    },
    fn,
  );

describe('readMark', () => {
  const at = order(100, 'evt_b');

  it('reads the last writer and the effects it recorded under the guard', () => {
    expect(
      readMark('payments', 'p', { lastEventId: 'evt_a', lastEventEffects: ['ledger', 'receipt'] }, at),
    ).toEqual({
      table: 'payments',
      pk: 'p',
      guard: 'lastEvent',
      exists: true,
      lastEventId: 'evt_a',
      writtenByThisEvent: false,
      recordedEffects: ['ledger', 'receipt'],
    });
    expect(readMark('payments', 'p', { refundEventId: 'evt_b' }, at, 'refundEvent')).toMatchObject({
      guard: 'refundEvent',
      lastEventId: 'evt_b',
      writtenByThisEvent: true,
      recordedEffects: undefined,
    });
  });

  it('takes no recorded effects from a list holding anything but names, nor a last writer that is not a string', () => {
    expect(
      readMark('payments', 'p', { lastEventEffects: ['ledger', 7] }, at).recordedEffects,
    ).toBeUndefined();
    expect(readMark('payments', 'p', { lastEventEffects: 'ledger' }, at).recordedEffects).toBeUndefined();
    expect(readMark('payments', 'p', { lastEventEffects: [] }, at).recordedEffects).toEqual([]);
    expect(readMark('payments', 'p', { lastEventId: 100 }, order(1, '100'))).toMatchObject({
      exists: true,
      lastEventId: undefined,
    });
  });

  it('marks an absent row as absent', () => {
    expect(readMark('payments', 'p', undefined, at)).toMatchObject({
      exists: false,
      lastEventId: undefined,
      writtenByThisEvent: false,
      recordedEffects: undefined,
    });
  });
});

describe('StateStore tables', () => {
  it('refuses a table the processor was not given, naming the ones it was', async () => {
    const error = await state.get('invoices', 'x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnknownTableError);
    expect((error as Error).name).toBe('UnknownTableError');
    expect((error as Error).message).toBe(
      'no business table "invoices": the processor was given "payments", "orders" (the construct\'s `tables` prop, BUSINESS_TABLES)',
    );
    // Names an object has of its own (`constructor`) are not tables.
    await expect(state.get('constructor', 'x')).rejects.toBeInstanceOf(UnknownTableError);
    await expect(new StateStore(dynamo, {}).get('payments', 'x')).rejects.toThrow(
      'no business table "payments": the processor was given none (',
    );
  });
});

describe('StateStore.get', () => {
  // DynamoDB Local reads are always consistent, so no read here can show a stale row: the request
  // itself is checked. An eventually consistent read could plan from a row a moment old, and the
  // commit's read mark would then refuse every attempt until the replica caught up.
  it('reads strongly consistent', async () => {
    const inputs: Readonly<Record<string, unknown>>[] = [];
    await withEachCommand(
      dynamo,
      (_command, input) => inputs.push(input),
      () => state.get('payments', 'p'),
    );
    expect(inputs).toEqual([{ TableName: tables.payments, Key: { pk: 'p' }, ConsistentRead: true }]);
  });
});

describe('StateStore row keys', () => {
  // DynamoDB's own limit, inclusive: a key of exactly 2,048 bytes is stored, one more byte is not.
  // The check runs before the call so the claim's lastError names the table and the size.
  const longest = `${'k'.repeat(MAX_ROW_KEY_BYTES - 2)}é`; // 2,046 + 2 bytes
  it('reads and writes a row keyed with exactly 2,048 bytes', async () => {
    expect(Buffer.byteLength(longest)).toBe(2048);
    expect(await state.get('payments', longest)).toBeUndefined();
    await state.commit(
      [write('payments', longest, order(100, 'evt_1'), { n: 1 })],
      [],
      await heldClaim(),
      NOW,
    );
    expect(await state.get('payments', longest)).toMatchObject({ pk: longest, n: 1 });
  });

  it('refuses an empty key and one of 2,049 bytes before calling DynamoDB, naming the table and size', async () => {
    const tooLong = `${longest}x`;
    for (const [pk, message] of [
      ['', 'payments row key is empty'],
      [tooLong, /^payments row key is 2049 bytes, over DynamoDB's 2,048-byte limit \(starts "k{40}"\)$/],
    ] as const) {
      const sent: string[] = [];
      await withEachCommand(
        dynamo,
        (command) => sent.push(command),
        () => expect(state.get('payments', pk)).rejects.toThrow(message),
      );
      expect(sent).toEqual([]);
      const error = await state
        .commit([write('orders', pk, order(100, 'evt_1'), { n: 1 })], [], await heldClaim(), NOW)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RowKeyError);
      expect((error as Error).name).toBe('RowKeyError');
      expect((error as Error).message).toMatch(
        pk === '' ? 'orders row key is empty' : /^orders row key is 2049 bytes/,
      );
    }
  });
});

describe('StateStore.commit', () => {
  it('writes the attributes with the guard, skipping the key and undefined values, in nested maps too', async () => {
    const claim = await heldClaim();
    await state.commit(
      [
        write('payments', 'p1', order(100, 'evt_1', 3), {
          pk: 'someone-else',
          status: 'paid',
          customer: undefined,
          card: { brand: 'visa', last4: undefined },
        }),
      ],
      [],
      claim,
      NOW,
      ['ledger'],
    );
    expect(await row('payments', 'p1')).toEqual({
      pk: 'p1',
      status: 'paid',
      card: { brand: 'visa' },
      lastEventId: 'evt_1',
      lastEventCreated: 100,
      lastEventRank: 3,
      lastEventEffects: ['ledger'],
      updatedAt: new Date(NOW).toISOString(),
    });
  });

  it('checks each write against its own row’s read mark: two rows, one absent', async () => {
    await putItem(doc, tables.payments, { pk: 'a', lastEventId: 'evt_0', lastEventCreated: 50 });
    const at = order(100, 'evt_1');
    const reads = [await read('payments', 'a', at), await read('payments', 'b', at)];
    await state.commit(
      [write('payments', 'b', at, { n: 2 }), write('payments', 'a', at, { n: 1 })],
      reads,
      await heldClaim(),
      NOW,
    );
    // Effects not given: none recorded.
    expect(await row('payments', 'a')).toMatchObject({ n: 1, lastEventId: 'evt_1', lastEventEffects: [] });
    expect(await row('payments', 'b')).toMatchObject({ n: 2, lastEventId: 'evt_1', lastEventEffects: [] });
  });

  it('tells one key in two tables apart', async () => {
    await putItem(doc, tables.payments, { pk: 'k', lastEventId: 'evt_0', lastEventCreated: 50 });
    const at = order(100, 'evt_1');
    const reads = [await read('payments', 'k', at), await read('orders', 'k', at)];
    await state.commit([write('orders', 'k', at, { n: 1 })], reads, await heldClaim(), NOW);
    expect(await row('orders', 'k')).toMatchObject({ n: 1, lastEventId: 'evt_1' });
  });

  it('tells two guards on one row apart: a row with no refund yet takes the first refund', async () => {
    await putItem(doc, tables.payments, {
      pk: 'p',
      status: 'paid',
      lastEventId: 'evt_0',
      lastEventCreated: 50,
    });
    const at = order(100, 'evt_refund');
    const reads = [await read('payments', 'p', at), await read('payments', 'p', at, 'refundEvent')];
    await state.commit(
      [write('payments', 'p', at, { refunded: 500 }, { guard: 'refundEvent' })],
      reads,
      await heldClaim(),
      NOW,
    );
    expect(await row('payments', 'p')).toMatchObject({
      status: 'paid',
      refunded: 500,
      lastEventId: 'evt_0',
      refundEventId: 'evt_refund',
    });
  });

  it('refuses a write to a row created since the plan read it absent, even under another guard', async () => {
    const at = order(100, 'evt_1');
    const reads = [await read('payments', 'new', at)];
    // Another event's refund creates the row in between.
    await putItem(doc, tables.payments, {
      pk: 'new',
      refunded: 500,
      refundEventId: 'evt_r',
      refundEventCreated: 90,
    });
    const claim = await heldClaim();
    await expect(state.commit([write('payments', 'new', at, { n: 1 })], reads, claim, NOW)).rejects.toThrow(
      new WriteConflictError('a business row changed while the event was planned'),
    );
    expect(await row('payments', 'new')).not.toHaveProperty('n');
  });

  it('refuses a write to a row whose last writer changed since the plan read it, even to an older one', async () => {
    await putItem(doc, tables.payments, { pk: 'p', lastEventId: 'evt_0', lastEventCreated: 50 });
    const reads = [await read('payments', 'p', order(300, 'evt_2'))];
    await putItem(doc, tables.payments, { pk: 'p', n: 1, lastEventId: 'evt_1', lastEventCreated: 100 });
    await expect(
      state.commit([write('payments', 'p', order(300, 'evt_2'), { n: 2 })], reads, await heldClaim(), NOW),
    ).rejects.toBeInstanceOf(WriteConflictError);
    expect(await row('payments', 'p')).toMatchObject({ n: 1, lastEventId: 'evt_1' });
  });

  it('writes a row owned by one tenant for that tenant only, setting the owner once', async () => {
    const owned = (value: string) => ({ owner: { attribute: 'shop', value } });
    await state.commit(
      [write('orders', 'o', order(100, 'evt_a'), { n: 1 }, owned('a.example'))],
      [],
      await heldClaim(),
      NOW,
    );
    expect(await row('orders', 'o')).toMatchObject({ n: 1, shop: 'a.example' });
    await expect(
      state.commit(
        [write('orders', 'o', order(200, 'evt_b'), { n: 2 }, owned('b.example'))],
        [],
        await heldClaim(),
        NOW,
      ),
    ).rejects.toBeInstanceOf(WriteConflictError);
    await state.commit(
      [write('orders', 'o', order(300, 'evt_c'), { n: 3 }, owned('a.example'))],
      [],
      await heldClaim(),
      NOW,
    );
    expect(await row('orders', 'o')).toMatchObject({ n: 3, shop: 'a.example', lastEventId: 'evt_c' });
  });

  it('throws a cancellation that planning again cannot fix as it is, not as a write conflict', async () => {
    const throttled = cancelled('ThrottlingError');
    await withTransactionsCancelled(throttled, async () => {
      await expect(
        state.commit([write('payments', 'p', order(100, 'evt_1'), { n: 1 })], [], await heldClaim(), NOW),
      ).rejects.toBe(throttled);
    });
  });

  it('throws a cancellation that gives no reasons as it is', async () => {
    // The reasons list is optional in the SDK's type: an answer without it is neither a lost
    // lease nor a write conflict, and must reach the retry as DynamoDB's own error.
    const bare = new TransactionCanceledException({ message: 'Transaction cancelled', $metadata: {} });
    await withTransactionsCancelled(bare, async () => {
      await expect(
        state.commit([write('payments', 'p', order(100, 'evt_1'), { n: 1 })], [], await heldClaim(), NOW),
      ).rejects.toBe(bare);
    });
  });

  it('reports a transaction conflict with another writer as a write conflict, to plan again', async () => {
    await withTransactionsCancelled(cancelled('TransactionConflict'), async () => {
      await expect(
        state.commit([write('payments', 'p', order(100, 'evt_1'), { n: 1 })], [], await heldClaim(), NOW),
      ).rejects.toBeInstanceOf(WriteConflictError);
    });
  });
});
