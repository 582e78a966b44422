/**
 * Where the processor looks for an event's copies when it finishes a deferred redaction
 * (lambdas/processor/deferred-redaction.ts, `redactIfPending`), on DynamoDB Local and s3rver with an
 * archive the test lays out: the objects the request recorded, the claim's own object, and the
 * batch objects written since the request (less a margin) under each day a copy is filed under.
 * Only the event's copies go; the other events in the same objects stay. The pipeline tests
 * (./deferred-redaction.integration.test.ts) show when it runs; these show what it finds.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DeferredRedactionDeps,
  DeferredRedactionError,
  redactIfPending,
} from '../../lambdas/processor/deferred-redaction.js';
import type { EventMessage } from '../../lambdas/queue/event-message.js';
import { archiveBatchKey, archiveObjectKey } from '../../lambdas/shared/archive-layout.js';
import { ClaimStatus } from '../../lambdas/store/claim.js';
import { S3ComplianceStore } from '../../lambdas/store/compliance-store.js';
import { parseArchive } from '../../lambdas/store/payload-archive.js';
import { RedactionClaims } from '../../lambdas/store/redaction-claims.js';
import {
  bucketKeys,
  createBucket,
  createClaimsTable,
  documentClient,
  dynamoClient,
  getItem,
  getObjectText,
  putItem,
  s3Client,
  withEachCommand,
} from '../helpers/aws.js';
import { recordingLog } from '../helpers/log.js';

const dynamo = dynamoClient();
const doc = documentClient(dynamo);
const s3 = s3Client();
afterAll(() => {
  dynamo.destroy();
  s3.destroy();
});
let table: string;
beforeAll(async () => {
  table = await createClaimsTable(dynamo);
});

const SHOP = 'copies.myshopify.com';
const BY = `shopify:${SHOP}:redact-1`;
/** The request began at noon on day 3. */
const REQUEST_AT = Date.parse('2026-12-03T12:00:00.000Z');
const FIRST_SEEN = '2026-12-01T09:00:00.000Z';
/** The delivery that was finally applied was received on day 3. */
const RECEIVED = '2026-12-03T11:00:00.000Z';
const NOW = Date.now();

let n = 0;
const message = (id: string, receivedAt: string): EventMessage => ({
  v: 1,
  key: `shopify:${SHOP}:${id}`,
  provider: 'shopify',
  eventId: id,
  eventType: 'orders/create',
  account: SHOP,
  receivedAt,
  claimExpiresAt: Math.floor(NOW / 1000) + 3600,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ id: 1, email: 'erin@example.com' }),
  bodyEncoding: 'utf8',
});

/** A fresh bucket and event: each test lays out its own archive. */
async function setUp() {
  const bucket = await createBucket(s3);
  const id = `e-${++n}`;
  const event = message(id, RECEIVED);
  const others = (name: string) => message(`${id}-${name}`, RECEIVED);
  const put = (key: string, body: unknown) =>
    s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: JSON.stringify(body) }));
  const batch = async (day: string, writtenAt: number, held: EventMessage[]) => {
    const key = archiveBatchKey('shopify', `${day}T10:00:00.000Z`, writtenAt, `b${writtenAt}`);
    await put(key, { v: 2, archivedAt: new Date(writtenAt).toISOString(), events: held });
    return key;
  };
  const { log, lines } = recordingLog();
  const deps: DeferredRedactionDeps = {
    claims: new RedactionClaims(dynamo, table),
    store: new S3ComplianceStore(s3, bucket),
    log,
    clock: () => NOW,
    holdMs: 60_000,
  };
  /** The claim, DONE, with the request's pending mark. */
  const claim = (extra: Record<string, unknown>) =>
    putItem(doc, table, {
      pk: event.key,
      provider: 'shopify',
      account: SHOP,
      eventId: id,
      eventType: 'orders/create',
      status: ClaimStatus.Done,
      deliveries: 3,
      firstSeenAt: FIRST_SEEN,
      lastSeenAt: RECEIVED,
      expiresAt: Math.floor(NOW / 1000) + 3600,
      redactionPendingBy: BY,
      redactionPendingAt: new Date(REQUEST_AT).toISOString(),
      ...extra,
    });
  /** Each object left, with the keys of the events it holds. */
  const left = async () =>
    Object.fromEntries(
      await Promise.all(
        (await bucketKeys(s3, bucket)).map(
          async (key) =>
            [key, parseArchive(await getObjectText(s3, bucket, key), key).map((e) => e.key)] as const,
        ),
      ),
    );
  return { bucket, event, others, put, batch, deps, lines, claim, left };
}

describe('a deferred redaction finds every copy of the event, and only its copies go', () => {
  it("removes the event from the recorded objects, its own object, and the batches written since the request on each copy's day", async () => {
    const { event, others, put, batch, deps, lines, claim, left } = await setUp();
    const [o1, o2, o3, o4] = [others('o1'), others('o2'), others('o3'), others('o4')];
    // Recorded by the request, on day 2 (neither the first-seen day nor the applied delivery's).
    const recorded = await batch('2026-12-02', Date.parse('2026-12-02T10:00:00.000Z'), [event, o1]);
    // Written since the request under day 2 (a redrive of a day-2 delivery): found by the recorded object's day.
    await batch('2026-12-02', REQUEST_AT + 5 * 60_000, [event]);
    // The claim check's own object, on the first-seen day: only the claim names it.
    const own = archiveObjectKey('shopify', FIRST_SEEN, event.key);
    await put(own, event);
    // Written on day 3 four minutes before the request began, within the 5-minute margin: the request may have missed it.
    const withinMargin = await batch('2026-12-03', REQUEST_AT - 4 * 60_000, [event, o2]);
    // Written on day 3 six minutes before (the request scanned it): not listed.
    const beforeMargin = await batch('2026-12-03', REQUEST_AT - 6 * 60_000, [o3]);
    // A one-event object sorts after the day's batches: the listing stops there.
    const otherOwn = archiveObjectKey('shopify', RECEIVED, o4.key);
    await put(otherOwn, o4);
    await claim({ archiveKey: own, redactionObjects: new Set([recorded]) });

    const result = await redactIfPending(event, deps);
    const expected = {
      key: event.key,
      by: BY,
      scannedObjects: 4,
      rewrittenObjects: 2,
      deletedObjects: 2,
      removedCopies: 4,
    };
    expect(result).toEqual(expected);
    expect(await left()).toEqual({
      [recorded]: [o1.key],
      [withinMargin]: [o2.key],
      [beforeMargin]: [o3.key],
      [otherOwn]: [o4.key],
    });
    expect(lines).toEqual([
      {
        level: 'info',
        message: 'deferred redaction applied',
        details: {
          provider: 'shopify',
          ...expected,
          pendingSince: new Date(REQUEST_AT).toISOString(),
        },
      },
    ]);
    const done = await getItem(doc, table, event.key);
    expect(done).toMatchObject({ status: ClaimStatus.Done, redactedBy: BY });
    for (const gone of ['redactionPendingBy', 'redactionObjects', 'sweepShard', 'sweepAt'])
      expect(done).not.toHaveProperty(gone);
  });

  it('needs no own object: an event that was never claim-checked is found in its batches', async () => {
    const { event, others, batch, deps, claim, left } = await setUp();
    const o1 = others('o1');
    const recorded = await batch('2026-12-03', REQUEST_AT - 60 * 60_000, [event, o1]);
    await claim({ redactionObjects: new Set([recorded]) });
    expect(await redactIfPending(event, deps)).toMatchObject({
      scannedObjects: 1,
      rewrittenObjects: 1,
      deletedObjects: 0,
      removedCopies: 1,
    });
    expect(await left()).toEqual({ [recorded]: [o1.key] });
  });
});

describe('a deferred redaction that has nothing to do reads the claim once and writes nothing', () => {
  it.each([
    ['no redaction waits for the event', null],
    ['the claim is marked but not DONE (a forced replay reopened it)', { status: ClaimStatus.Enqueued }],
  ])('%s', async (_name, state) => {
    const { event, batch, deps, claim, left } = await setUp();
    const recorded = await batch('2026-12-03', REQUEST_AT - 60 * 60_000, [event]);
    if (state === null)
      await claim({ redactionPendingBy: undefined, redactionPendingAt: undefined, archiveKey: recorded });
    else await claim({ ...state, redactionObjects: new Set([recorded]) });
    const commands: string[] = [];
    const result = await withEachCommand(
      dynamo,
      (name) => commands.push(name),
      () => redactIfPending(event, deps),
    );
    expect(result).toBeUndefined();
    expect(commands).toEqual(['GetItemCommand']);
    expect(await left()).toEqual({ [recorded]: [event.key] });
  });
});

describe('a deferred redaction that fails', () => {
  it('says which event and request, and carries the cause; the claim keeps its mark', async () => {
    const { event, deps, claim } = await setUp();
    await claim({ redactionObjects: new Set(['events/shopify/2026-12-03/batch-x.json']) });
    const failing = await redactIfPending(event, {
      ...deps,
      store: new S3ComplianceStore(s3, 'no-such-bucket-for-redaction'),
    }).catch((error: unknown) => error);
    expect(failing).toBeInstanceOf(DeferredRedactionError);
    expect(failing).toMatchObject({ key: event.key, by: BY, cause: { name: 'NoSuchBucket' } });
    expect(await getItem(doc, table, event.key)).toMatchObject({ redactionPendingBy: BY });
  });
});
