/**
 * The claims' side of a Shopify redaction on DynamoDB Local (lambdas/store/redaction-claims.ts): a
 * body is removed only when its claim is DONE or gone; a claim in any other status is marked pending
 * instead, and the processor's later steps (hold in the sweeper's index, complete) move only a DONE
 * claim that still has the mark.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClaimRecord, ClaimStatus } from '../../lambdas/store/claim.js';
import { RedactionClaims } from '../../lambdas/store/redaction-claims.js';
import { pendingShard } from '../../lambdas/store/unfinished-index.js';
import {
  createClaimsTable,
  documentClient,
  dynamoClient,
  getItem,
  putItem,
  withEachCommand,
} from '../helpers/aws.js';

const dynamo = dynamoClient();
const doc = documentClient(dynamo);
/** Another writer (a forced replay, a worker), on its own client so `withEachCommand` does not see it. */
const otherDynamo = dynamoClient();
const other = documentClient(otherDynamo);
let table: string;
let claims: RedactionClaims;
afterAll(() => {
  dynamo.destroy();
  otherDynamo.destroy();
});
beforeAll(async () => {
  table = await createClaimsTable(dynamo);
  claims = new RedactionClaims(dynamo, table);
});

const NOW = Date.now();
const request = { by: 'shopify:shop.myshopify.com:redact-1', startedAtMs: NOW - 1_000 };
const OBJECT = 'events/shopify/2026-12-02/batch-20261202T100000000Z-a.json';
/** Object keys recorded in another order than a list would keep. */
const OBJECTS = ['events/shopify/c', 'events/shopify/a', 'events/shopify/b', 'events/shopify/d'];
let n = 0;

/** A claim as the receiver and processor leave it in `status`. */
async function seed(status: string, extra: Partial<ClaimRecord> = {}): Promise<string> {
  const pk = `shopify:shop.myshopify.com:w-${status}-${++n}`;
  await putItem(doc, table, {
    pk,
    provider: 'shopify',
    account: 'shop.myshopify.com',
    eventId: `w-${n}`,
    eventType: 'orders/create',
    status,
    deliveries: 1,
    firstSeenAt: '2026-12-02T10:00:00.000Z',
    lastSeenAt: '2026-12-02T10:00:00.000Z',
    expiresAt: Math.floor(NOW / 1000) + 3600,
    ...(status === ClaimStatus.Done || status === ClaimStatus.Failed
      ? {}
      : { sweepShard: pendingShard(pk), sweepAt: NOW }),
    ...extra,
  });
  return pk;
}
const item = async (pk: string) => (await getItem(doc, table, pk)) as ClaimRecord | undefined;

describe('RedactionClaims.settle', () => {
  it.each([ClaimStatus.Received, ClaimStatus.Enqueued, ClaimStatus.Processing, ClaimStatus.Failed])(
    'keeps the body of a %s claim: marks it pending by the request, with the object',
    async (status) => {
      const pk = await seed(status);
      expect(await claims.settle(pk, request, OBJECT, NOW)).toBe('deferred');
      const marked = await item(pk);
      expect(marked).toMatchObject({
        status,
        redactionPendingBy: request.by,
        redactionPendingAt: new Date(request.startedAtMs).toISOString(),
      });
      expect([...(marked?.redactionObjects ?? [])]).toEqual([OBJECT]);
      expect(marked?.redactedBy).toBeUndefined();
    },
  );

  it('lets the body of a DONE claim go, marking it redacted and not pending', async () => {
    const pk = await seed(ClaimStatus.Done);
    expect(await claims.settle(pk, request, OBJECT, NOW)).toBe('redacted');
    const marked = await item(pk);
    expect(marked).toMatchObject({ status: ClaimStatus.Done, redactedBy: request.by });
    expect(marked?.redactionPendingBy).toBeUndefined();
    expect(marked?.redactionObjects).toBeUndefined();
  });

  it('lets the body go when no live claim is left (absent, or past its TTL), writing nothing', async () => {
    expect(await claims.settle('shopify:shop.myshopify.com:never', request, OBJECT, NOW)).toBe('gone');
    expect(await item('shopify:shop.myshopify.com:never')).toBeUndefined();
    const expired = await seed(ClaimStatus.Failed, { expiresAt: Math.floor(NOW / 1000) - 10 });
    expect(await claims.settle(expired, request, OBJECT, NOW)).toBe('gone');
    expect((await item(expired))?.redactionPendingBy).toBeUndefined();
  });

  it('fails when the table cannot be read or written: an error is not a missing claim, so no body is let go', async () => {
    const pk = await seed(ClaimStatus.Enqueued);
    const elsewhere = new RedactionClaims(dynamo, `${table}-missing`);
    await expect(elsewhere.settle(pk, request, OBJECT, NOW)).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
  });

  /** Sets the claim's status as another writer would, between two of `settle`'s writes. */
  const setStatus = (pk: string, status: string) =>
    other.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk },
        UpdateExpression: 'SET #s = :s',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':s': status },
      }),
    );

  it('asks again when a DONE claim is reopened (a forced replay) between the refused mark and the redacted record: the body is kept', async () => {
    const pk = await seed(ClaimStatus.Done);
    let updates = 0;
    const verdict = await withEachCommand(
      dynamo,
      async (name) => {
        // Update 1 is the mark, refused (DONE); before update 2, the redacted record, a replay reopens it.
        if (name === 'UpdateItemCommand' && ++updates === 2) await setStatus(pk, ClaimStatus.Enqueued);
      },
      () => claims.settle(pk, request, OBJECT, NOW),
    );
    expect(verdict).toBe('deferred');
    expect(updates).toBe(3);
    const marked = await item(pk);
    expect(marked).toMatchObject({ status: ClaimStatus.Enqueued, redactionPendingBy: request.by });
    expect(marked?.redactedBy).toBeUndefined();
  });

  it('gives up after 3 rounds when the claim keeps moving between its writes, naming the claim and writing nothing', async () => {
    const pk = await seed(ClaimStatus.Done);
    let updates = 0;
    const settling = withEachCommand(
      dynamo,
      async (name) => {
        if (name !== 'UpdateItemCommand') return;
        // Each mark finds it DONE, each redacted record finds it reopened.
        updates += 1;
        if (updates % 2 === 0) await setStatus(pk, ClaimStatus.Enqueued);
        else if (updates > 1) await setStatus(pk, ClaimStatus.Done);
      },
      () => claims.settle(pk, request, OBJECT, NOW),
    );
    await expect(settling).rejects.toThrow(
      `claim ${pk} kept changing while a compliance redaction asked whether it is DONE; the request is retried`,
    );
    expect(updates).toBe(6);
    const untouched = await item(pk);
    expect(untouched?.redactionPendingBy).toBeUndefined();
    expect(untouched?.redactedBy).toBeUndefined();
  });

  it('is repeat-safe: keeps the first request and its start, and adds each object the event was kept in', async () => {
    const pk = await seed(ClaimStatus.Enqueued);
    await claims.settle(pk, request, OBJECT, NOW);
    await claims.settle(pk, request, OBJECT, NOW + 1);
    await claims.settle(pk, { by: 'shopify:shop.myshopify.com:redact-2', startedAtMs: NOW }, 'events/x', NOW);
    const marked = await item(pk);
    expect(marked?.redactionPendingBy).toBe(request.by);
    expect([...(marked?.redactionObjects ?? [])].sort()).toEqual([OBJECT, 'events/x']);
  });
});

describe('RedactionClaims after DONE', () => {
  it('reads no pending redaction for a claim that is absent or was never marked', async () => {
    expect(await claims.pending('shopify:shop.myshopify.com:absent')).toBeUndefined();
    expect(await claims.pending(await seed(ClaimStatus.Done))).toBeUndefined();
  });

  it('reads a pending redaction exactly: no archive key when the event has none, every object, none when none were recorded', async () => {
    const pk = await seed(ClaimStatus.Done, {
      redactionPendingBy: request.by,
      redactionPendingAt: '2026-12-02T11:00:00.000Z',
      redactionObjects: new Set(OBJECTS),
    });
    const read = await claims.pending(pk);
    // A set comes back in no particular order.
    expect({ ...read, objects: [...(read?.objects ?? [])].sort() }).toStrictEqual({
      pk,
      provider: 'shopify',
      status: ClaimStatus.Done,
      firstSeenAt: '2026-12-02T10:00:00.000Z',
      by: request.by,
      since: '2026-12-02T11:00:00.000Z',
      objects: [...OBJECTS].sort(),
    });
    // A mark without objects (written before objects were recorded) reads as none, since its first sight.
    const bare = await seed(ClaimStatus.Done, { redactionPendingBy: request.by });
    expect(await claims.pending(bare)).toMatchObject({ since: '2026-12-02T10:00:00.000Z', objects: [] });
  });

  it('reads the pending redaction; holds the DONE claim in the index, then completes it out of the index', async () => {
    const pk = await seed(ClaimStatus.Failed, { archiveKey: OBJECT });
    await claims.settle(pk, request, OBJECT, NOW);
    // Before DONE the processor must not touch it.
    expect(await claims.holdInIndex(pk, NOW + 60_000, NOW)).toBe(false);
    expect(await claims.complete(pk, request.by, NOW)).toBe(false);
    // The event is applied.
    await doc.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk },
        UpdateExpression: 'SET #s = :done',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':done': ClaimStatus.Done },
      }),
    );
    expect(await claims.pending(pk)).toEqual({
      pk,
      provider: 'shopify',
      status: ClaimStatus.Done,
      firstSeenAt: '2026-12-02T10:00:00.000Z',
      archiveKey: OBJECT,
      by: request.by,
      since: new Date(request.startedAtMs).toISOString(),
      objects: [OBJECT],
    });
    expect(await claims.holdInIndex(pk, NOW + 60_000, NOW)).toBe(true);
    expect(await item(pk)).toMatchObject({ sweepShard: pendingShard(pk), sweepAt: NOW + 60_000 });

    expect(await claims.complete(pk, request.by, NOW)).toBe(true);
    const done = await item(pk);
    expect(done).toMatchObject({ status: ClaimStatus.Done, redactedBy: request.by });
    for (const gone of [
      'redactionPendingBy',
      'redactionPendingAt',
      'redactionObjects',
      'sweepShard',
      'sweepAt',
    ])
      expect(done).not.toHaveProperty(gone);
    // Finished: a second worker finds nothing to do.
    expect(await claims.pending(pk)).toBeUndefined();
    expect(await claims.holdInIndex(pk, NOW + 60_000, NOW)).toBe(false);
    expect(await claims.complete(pk, request.by, NOW)).toBe(false);
  });
});
