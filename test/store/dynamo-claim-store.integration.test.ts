/**
 * The receiver's writes to a claim that exists (lambdas/store/dynamo-claim-store.ts) on DynamoDB
 * Local: a take-over, the ENQUEUED mark and the release are each fenced on what the receiver saw.
 * Each row moves one thing only that conjunct of the condition sees, so deleting that conjunct
 * makes its row fail (checked by hand: docs/mutation.md). The receiver's flows over these writes:
 * test/receiver/*.integration.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClaimRecord, ClaimStatus } from '../../lambdas/store/claim.js';
import { DynamoClaimStore } from '../../lambdas/store/dynamo-claim-store.js';
import { pendingShard } from '../../lambdas/store/unfinished-index.js';
import {
  createClaimsTable,
  documentClient,
  dynamoClient,
  getItem,
  putItem,
  setAttributes,
} from '../helpers/aws.js';

const dynamo = dynamoClient();
const doc = documentClient(dynamo);
afterAll(() => dynamo.destroy());

const NOW = Date.now();
const MINUTE = 60_000;
const TTL_S = Math.floor(NOW / 1000) + 3600;

let table: string;
let store: DynamoClaimStore;
beforeAll(async () => {
  table = await createClaimsTable(dynamo);
  store = new DynamoClaimStore({ client: dynamo, tableName: table });
});

let n = 0;
/** A claim as the receiver leaves it, then `extra`. */
async function seed(extra: Record<string, unknown> = {}): Promise<ClaimRecord> {
  const pk = `stripe:acct:evt_${++n}`;
  const claim = {
    pk,
    provider: 'stripe',
    account: 'acct',
    eventId: `evt_${n}`,
    eventType: 'payment_intent.succeeded',
    status: ClaimStatus.Received,
    deliveries: 1,
    firstSeenAt: '2026-12-07T10:00:00.000Z',
    lastSeenAt: '2026-12-07T10:00:00.000Z',
    expiresAt: TTL_S,
    sweepShard: pendingShard(pk),
    sweepAt: NOW + MINUTE,
    ...extra,
  };
  await putItem(doc, table, claim);
  return claim as unknown as ClaimRecord;
}
const item = async (pk: string) => (await getItem(doc, table, pk)) as ClaimRecord | undefined;

/** Another writer's move: sets `values` on the claim, nothing else. */
const move = (pk: string, values: Record<string, unknown>) => setAttributes(doc, table, pk, values);

const LEASE = { token: 'receiver-B', expiresAt: NOW + MINUTE, owner: 'receiver' as const };
/** A receiver's claim whose lease ran out a minute ago. */
const LAPSED = { leaseToken: 'receiver-A', leaseExpiresAt: NOW - MINUTE, leaseOwner: 'receiver' };

describe('a take-over applies only to the claim as the receiver saw it', () => {
  const takeOver = (claim: ClaimRecord, now = NOW) =>
    store.takeOver(claim.pk, { status: claim.status, leaseToken: claim.leaseToken }, LEASE, now);

  it.each([
    ['a lapsed lease', LAPSED],
    ['no lease (a FAILED claim)', { status: ClaimStatus.Failed }],
  ])('takes a claim nothing moved: %s', async (_name, read) => {
    const claim = await seed(read);
    expect(await takeOver(claim)).toMatchObject({
      status: ClaimStatus.Received,
      leaseToken: LEASE.token,
      leaseExpiresAt: LEASE.expiresAt,
    });
  });

  it.each([
    ['its status moved (#status = :expected)', LAPSED, { status: ClaimStatus.Enqueued }, NOW],
    [
      'a holder took it, its lease already run out (attribute_not_exists(leaseToken))',
      { status: ClaimStatus.Failed },
      { leaseToken: 'worker', leaseExpiresAt: NOW - 1 },
      NOW,
    ],
    [
      'another receiver took the lapsed lease over (leaseToken = :oldToken)',
      LAPSED,
      { leaseToken: 'receiver-C' },
      NOW,
    ],
    [
      'the holder renewed its lease (leaseExpiresAt <= :nowMs)',
      LAPSED,
      { leaseExpiresAt: NOW + MINUTE },
      NOW,
    ],
    ['its TTL passed (expiresAt > :nowS)', LAPSED, {}, (TTL_S + 1) * 1000],
  ] as const)('refused when %s', async (_name, read, moved, now) => {
    const claim = await seed(read);
    if (Object.keys(moved).length > 0) await move(claim.pk, moved);
    const before = await item(claim.pk);
    expect(await takeOver(claim, now)).toBeUndefined();
    expect(await item(claim.pk)).toEqual(before);
  });
});

describe('the ENQUEUED mark and the release apply only while the receiver holds the claim', () => {
  const WRITES = {
    markEnqueued: (claim: ClaimRecord) => store.markEnqueued(claim.pk, 'receiver-A', 'msg-1', NOW),
    releaseClaim: (claim: ClaimRecord) => store.releaseClaim(claim.pk, 'receiver-A', 'send failed', NOW),
  } as const;
  const HELD = { leaseToken: 'receiver-A', leaseExpiresAt: NOW + MINUTE, leaseOwner: 'receiver' };

  it.each(Object.keys(WRITES) as (keyof typeof WRITES)[])(
    '%s applies to the claim it holds',
    async (write) => {
      expect(await WRITES[write](await seed(HELD))).toBe(true);
    },
  );

  describe.each([
    ['another receiver took it over (leaseToken = :token)', { leaseToken: 'receiver-B' }],
    ['it is no longer RECEIVED (#status = :received)', { status: ClaimStatus.Processing }],
  ])('refused when %s', (_name, moved) => {
    it.each(Object.keys(WRITES) as (keyof typeof WRITES)[])('%s', async (write) => {
      const claim = await seed(HELD);
      await move(claim.pk, moved);
      const before = await item(claim.pk);
      expect(await WRITES[write](claim)).toBe(false);
      expect(await item(claim.pk)).toEqual(before);
    });
  });
});

describe('reads', () => {
  it('reads a live claim, and nothing for an expired or absent one', async () => {
    const live = await seed();
    expect(await store.getClaim(live.pk, NOW)).toEqual(live);
    const expired = await seed({ expiresAt: Math.floor(NOW / 1000) });
    expect(await store.getClaim(expired.pk, NOW)).toBeUndefined();
    expect(await store.getClaim('stripe:acct:absent', NOW)).toBeUndefined();
  });

  it('marks a claim ENQUEUED without a message id when the queue gave none, and with the archive key of a claim check', async () => {
    const claim = await seed({
      leaseToken: 'receiver-A',
      leaseExpiresAt: NOW + MINUTE,
      leaseOwner: 'receiver',
      lastError: 'x',
    });
    expect(await store.markEnqueued(claim.pk, 'receiver-A', undefined, NOW, 'events/stripe/k.json')).toBe(
      true,
    );
    const { leaseToken: _t, leaseExpiresAt: _e, leaseOwner: _o, lastError: _l, ...kept } = claim;
    expect(await item(claim.pk)).toEqual({
      ...kept,
      status: ClaimStatus.Enqueued,
      enqueuedAt: new Date(NOW).toISOString(),
      archiveKey: 'events/stripe/k.json',
    });
  });
});

describe('a duplicate is counted on a live claim only', () => {
  it('counts it on a live claim, and answers undefined, writing nothing, for an expired or absent one', async () => {
    const live = await seed();
    expect(await store.recordDuplicate(live.pk, NOW)).toMatchObject({ deliveries: 2 });
    const expired = await seed({ expiresAt: Math.floor(NOW / 1000) });
    expect(await store.recordDuplicate(expired.pk, NOW)).toBeUndefined();
    expect(await item(expired.pk)).toEqual(expired);
    expect(await store.recordDuplicate('stripe:acct:absent', NOW)).toBeUndefined();
    expect(await item('stripe:acct:absent')).toBeUndefined();
  });
});
