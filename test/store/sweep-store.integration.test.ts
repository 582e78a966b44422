/**
 * The sweeper's side of the claims table on DynamoDB Local (lambdas/store/sweep-store.ts): the
 * listing of due and stuck claims, and the fence every sweeper write carries. The sweeper reads a
 * claim, decides, and writes only if the claim is still as it read it; a receiver, a processor or
 * another sweep that moved it in between wins. Each row of the fence table moves one attribute the
 * fence reads, so deleting that one conjunct makes its row fail (checked by hand: docs/mutation.md).
 */
import { BatchWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClaimRecord, ClaimStatus } from '../../lambdas/store/claim.js';
import { SweepStore } from '../../lambdas/store/sweep-store.js';
import {
  PENDING_SHARD_COUNT,
  pendingShard,
  pendingShards,
  STUCK_SHARD,
} from '../../lambdas/store/unfinished-index.js';
import {
  createClaimsTable,
  documentClient,
  dynamoClient,
  getItem,
  putItem,
  setAttributes,
  withEachCommand,
} from '../helpers/aws.js';

const dynamo = dynamoClient();
const doc = documentClient(dynamo);
afterAll(() => dynamo.destroy());

const NOW = Date.now();
const MINUTE = 60_000;
const TTL_S = Math.floor(NOW / 1000) + 3600;

let table: string;
let store: SweepStore;
beforeAll(async () => {
  table = await createClaimsTable(dynamo);
  store = new SweepStore(dynamo, table);
});

let n = 0;
/** An unfinished claim, due a minute ago, as a receiver or processor leaves it. */
async function seed(extra: Record<string, unknown> = {}, into = table): Promise<ClaimRecord> {
  const pk = `github:org:d-${++n}`;
  const claim = {
    pk,
    provider: 'github',
    account: 'org',
    eventId: `d-${n}`,
    eventType: 'push',
    status: ClaimStatus.Enqueued,
    deliveries: 1,
    firstSeenAt: '2026-12-07T10:00:00.000Z',
    lastSeenAt: '2026-12-07T10:00:00.000Z',
    expiresAt: TTL_S,
    sweepShard: pendingShard(pk),
    sweepAt: NOW - MINUTE,
    ...extra,
  };
  await putItem(doc, into, claim);
  return claim as unknown as ClaimRecord;
}
const item = async (pk: string) => (await getItem(doc, table, pk)) as ClaimRecord | undefined;

/** Another writer's move: sets `values` on the claim, nothing else. */
const move = (pk: string, values: Record<string, unknown>) => setAttributes(doc, table, pk, values);

/** Every write the sweeper fences, as it calls them. */
const FENCED = {
  defer: (claim: ClaimRecord, now: number) => store.defer(claim, now + MINUTE, now),
  requeue: (claim: ClaimRecord, now: number) =>
    store.requeue(claim, 'events/github/x.json', now + MINUTE, now),
  resendForRedaction: (claim: ClaimRecord, now: number) => store.resendForRedaction(claim, now + MINUTE, now),
  markStuck: (claim: ClaimRecord, now: number) => store.markStuck(claim, 'reason', now),
} as const;
const WRITES = Object.keys(FENCED) as (keyof typeof FENCED)[];

/** A claim a worker held, whose lease ran out a minute ago. */
const LAPSED = { status: ClaimStatus.Processing, leaseToken: 'worker-A', leaseExpiresAt: NOW - MINUTE };

describe('the sweeper writes only a claim that is as it read it', () => {
  // Each row: the claim as read, what another writer changes before the sweeper writes, and the
  // sweeper's clock. `now` past the TTL is the one row where nothing moves: the claim expired.
  const MOVES: readonly {
    readonly name: string;
    readonly read: Record<string, unknown>;
    readonly moved?: Record<string, unknown>;
    readonly now?: number;
  }[] = [
    { name: 'its status moved (#status = :seenStatus)', read: {}, moved: { status: ClaimStatus.Received } },
    {
      name: 'a worker took it, its lease already run out by the sweeper’s clock (attribute_not_exists(leaseToken))',
      read: {},
      moved: { leaseToken: 'worker-B', leaseExpiresAt: NOW - 1 },
    },
    {
      name: 'another worker took the lapsed lease over (leaseToken = :seenToken)',
      read: LAPSED,
      moved: { leaseToken: 'worker-B' },
    },
    {
      name: 'another sweep moved its due time (sweepAt = :seenSweepAt)',
      read: {},
      moved: { sweepAt: NOW + MINUTE },
    },
    {
      name: 'another sweep reported it stuck (sweepShard = :pending)',
      read: {},
      moved: { sweepShard: STUCK_SHARD },
    },
    {
      name: 'its TTL passed before the write (expiresAt > :nowS)',
      read: {},
      now: (TTL_S + 1) * 1000,
    },
    {
      name: 'the holder renewed its lease (leaseExpiresAt <= :nowMs)',
      read: LAPSED,
      moved: { leaseExpiresAt: NOW + MINUTE },
    },
  ];

  it.each(WRITES)('%s applies to a claim nothing moved', async (write) => {
    for (const read of [{}, LAPSED]) {
      const claim = await seed(read);
      expect(await FENCED[write](claim, NOW)).toBe(true);
    }
  });

  describe.each(MOVES)('refused when $name', ({ read, moved, now }) => {
    it.each(WRITES)('%s', async (write) => {
      const claim = await seed(read);
      if (moved) await move(claim.pk, moved);
      const before = await item(claim.pk);
      expect(await FENCED[write](claim, now ?? NOW)).toBe(false);
      expect(await item(claim.pk)).toEqual(before);
    });
  });
});

describe('what each fenced write records', () => {
  it('defer moves only the due time', async () => {
    const claim = await seed();
    await store.defer(claim, NOW + 5 * MINUTE, NOW);
    expect(await item(claim.pk)).toEqual({ ...claim, sweepAt: NOW + 5 * MINUTE });
  });

  it('requeue puts a lapsed claim back to ENQUEUED with its archive key, counts the sweep, and drops the lease and the re-send mark', async () => {
    const claim = await seed({ ...LAPSED, leaseOwner: 'processor', sweepResend: true, sweeps: 1 });
    expect(await store.requeue(claim, 'events/github/d.json', NOW + 5 * MINUTE, NOW)).toBe(true);
    const {
      leaseToken: _t,
      leaseExpiresAt: _e,
      leaseOwner: _o,
      sweepResend: _r,
      ...kept
    } = claim as ClaimRecord & {
      sweepResend?: boolean;
    };
    expect(await item(claim.pk)).toEqual({
      ...kept,
      status: ClaimStatus.Enqueued,
      enqueuedAt: new Date(NOW).toISOString(),
      lastSweptAt: new Date(NOW).toISOString(),
      sweepAt: NOW + 5 * MINUTE,
      archiveKey: 'events/github/d.json',
      sweeps: 2,
    });
  });

  it('resendForRedaction keeps a DONE claim DONE, moves its due time and counts the sweep', async () => {
    const claim = await seed({ status: ClaimStatus.Done, redactionPendingBy: 'shopify:s:r-1' });
    expect(await store.resendForRedaction(claim, NOW + 5 * MINUTE, NOW)).toBe(true);
    expect(await item(claim.pk)).toEqual({
      ...claim,
      sweepAt: NOW + 5 * MINUTE,
      lastSweptAt: new Date(NOW).toISOString(),
      sweeps: 1,
    });
  });

  it('markStuck moves the claim to the stuck shard keyed by its TTL, with the reason cut to 1,000 characters', async () => {
    const claim = await seed();
    const reason = `${'r'.repeat(999)}XY`;
    expect(await store.markStuck(claim, reason, NOW)).toBe(true);
    expect(await item(claim.pk)).toEqual({
      ...claim,
      sweepShard: STUCK_SHARD,
      sweepAt: TTL_S * 1000,
      stuckAt: new Date(NOW).toISOString(),
      stuckReason: `${'r'.repeat(999)}X`,
    });
  });
});

describe('the unfenced writes', () => {
  it('dueNow marks a requeued claim whose send failed due now, to be sent without waiting', async () => {
    const claim = await seed({ sweepAt: NOW + 5 * MINUTE });
    await store.dueNow(claim.pk, NOW + 5 * MINUTE, NOW, 'SQS is down');
    expect(await item(claim.pk)).toEqual({
      ...claim,
      sweepAt: NOW,
      sweepResend: true,
      lastError: 'SQS is down',
      lastErrorAt: new Date(NOW).toISOString(),
    });
  });

  it.each([
    ['its due time moved (another sweep)', { sweepAt: NOW + 6 * MINUTE }],
    ['it is no longer ENQUEUED (a worker took it)', { status: ClaimStatus.Processing }],
  ])('dueNow leaves the claim alone when %s', async (_name, moved) => {
    const claim = await seed({ sweepAt: NOW + 5 * MINUTE });
    await move(claim.pk, moved);
    const before = await item(claim.pk);
    await store.dueNow(claim.pk, NOW + 5 * MINUTE, NOW, 'SQS is down');
    expect(await item(claim.pk)).toEqual(before);
  });

  it('dropExpired takes an expired claim out of the index, and leaves a live one and an absent one alone', async () => {
    const expired = await seed({ expiresAt: Math.floor(NOW / 1000) - 1 });
    await store.dropExpired(expired.pk, NOW);
    const {
      sweepShard: _s,
      sweepAt: _a,
      ...rest
    } = expired as ClaimRecord & { sweepShard: string; sweepAt: number };
    expect(await item(expired.pk)).toEqual(rest);

    const live = await seed({ expiresAt: Math.floor(NOW / 1000) + 1 });
    await store.dropExpired(live.pk, NOW);
    expect(await item(live.pk)).toEqual(live);

    await store.dropExpired('github:org:absent', NOW);
    expect(await item('github:org:absent')).toBeUndefined();
  });
});

describe('listing', () => {
  /** A table of its own, so the counts below are exact. */
  async function freshStore(): Promise<{ table: string; store: SweepStore }> {
    const own = await createClaimsTable(dynamo);
    return { table: own, store: new SweepStore(dynamo, own) };
  }

  it('lists the claims due by now (inclusive) from every shard, and says when more are due than asked', async () => {
    const own = await freshStore();
    // One claim due in each shard, and one not due yet.
    const due: string[] = [];
    for (let i = 0; due.length < PENDING_SHARD_COUNT; i++) {
      const pk = `github:org:shard-${i}`;
      if (due.some((other) => pendingShard(other) === pendingShard(pk))) continue;
      await putItem(doc, own.table, {
        pk,
        status: ClaimStatus.Enqueued,
        expiresAt: TTL_S,
        sweepShard: pendingShard(pk),
        sweepAt: NOW,
      });
      due.push(pk);
    }
    await putItem(doc, own.table, {
      pk: 'github:org:later',
      expiresAt: TTL_S,
      sweepShard: pendingShard('github:org:later'),
      sweepAt: NOW + 1,
    });

    const all = await own.store.listDue(NOW, 100);
    expect(all.truncated).toBe(false);
    expect(all.claims.map((c) => c.pk).sort()).toEqual([...due].sort());
    expect(all.claims.every((c) => c.sweepAt === NOW)).toBe(true);

    // Exactly as many as asked: not truncated.
    expect(await own.store.listDue(NOW, PENDING_SHARD_COUNT)).toMatchObject({ truncated: false });
    // Fewer: at most `limit`, and truncated.
    const some = await own.store.listDue(NOW, 5);
    expect(some.claims).toHaveLength(5);
    expect(some.truncated).toBe(true);
  });

  it('takes at most its share from a shard, oldest first, and says the rest wait', async () => {
    const own = await freshStore();
    const shard = pendingShards()[0];
    const pks: string[] = [];
    for (let i = 0; pks.length < 3; i++)
      if (pendingShard(`github:org:s0-${i}`) === shard) pks.push(`github:org:s0-${i}`);
    for (const [i, pk] of pks.entries())
      await putItem(doc, own.table, {
        pk,
        expiresAt: TTL_S,
        sweepShard: shard,
        sweepAt: NOW - (3 - i) * MINUTE,
      });
    // limit 64: two a shard. The two oldest of three, and the third waits.
    const listed = await own.store.listDue(NOW, 2 * PENDING_SHARD_COUNT);
    expect(listed).toEqual({
      claims: [
        { pk: pks[0], sweepAt: NOW - 3 * MINUTE },
        { pk: pks[1], sweepAt: NOW - 2 * MINUTE },
      ],
      truncated: true,
    });
    // Exactly its share: all, not truncated.
    await doc.send(
      new UpdateCommand({
        TableName: own.table,
        Key: { pk: pks[2] },
        UpdateExpression: 'REMOVE sweepShard, sweepAt',
      }),
    );
    expect(await own.store.listDue(NOW, 2 * PENDING_SHARD_COUNT)).toMatchObject({ truncated: false });
  });

  it('reads the stuck claims in pages of 1,000, and lists no more than asked (webhooks stuck --max)', async () => {
    const own = await freshStore();
    const keys = Array.from({ length: 1_003 }, (_, i) => `github:org:many-${String(i).padStart(4, '0')}`);
    for (let i = 0; i < keys.length; i += 25)
      await doc.send(
        new BatchWriteCommand({
          RequestItems: {
            [own.table]: keys.slice(i, i + 25).map((pk, j) => ({
              PutRequest: {
                Item: { pk, expiresAt: TTL_S, sweepShard: STUCK_SHARD, sweepAt: TTL_S * 1000 + i + j },
              },
            })),
          },
        }),
      );
    const queries: Record<string, unknown>[] = [];
    const counted = await withEachCommand(
      dynamo,
      (name, input) => {
        if (name === 'QueryCommand') queries.push(input);
      },
      () => own.store.countStuck(NOW),
    );
    expect(counted).toBe(1_003);
    // Counted over the index's keys, never read: two pages.
    expect(queries.map(({ Select, Limit }) => ({ Select, Limit }))).toEqual([
      { Select: 'COUNT', Limit: 1_000 },
      { Select: 'COUNT', Limit: 1_000 },
    ]);

    expect((await own.store.listStuck(NOW, 1_003)).map((c) => c.pk)).toEqual(keys);
    // More than one page asked, fewer than there are: the second page asks only for the rest.
    expect((await own.store.listStuck(NOW, 1_001)).map((c) => c.pk)).toEqual(keys.slice(0, 1_001));
    expect(await own.store.listStuck(NOW)).toHaveLength(1_000);
  });

  it('lists and counts the stuck claims whose TTL has not passed', async () => {
    const own = await freshStore();
    const live = Array.from({ length: 5 }, (_, i) => `github:org:stuck-${i}`);
    for (const [i, pk] of live.entries())
      await putItem(doc, own.table, {
        pk,
        expiresAt: TTL_S + i,
        sweepShard: STUCK_SHARD,
        sweepAt: (TTL_S + i) * 1000,
      });
    await putItem(doc, own.table, { pk: 'github:org:stuck-expired', sweepShard: STUCK_SHARD, sweepAt: NOW });

    expect(await own.store.countStuck(NOW)).toBe(5);
    expect(await own.store.listStuck(NOW)).toEqual(
      live.map((pk, i) => ({ pk, sweepAt: (TTL_S + i) * 1000 })),
    );
    // A limit smaller than the list: the first `limit`, in TTL order.
    expect((await own.store.listStuck(NOW, 2)).map((c) => c.pk)).toEqual(live.slice(0, 2));
  });
});
