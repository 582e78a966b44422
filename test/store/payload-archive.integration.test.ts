/**
 * The payload archive's S3 side (lambdas/store/payload-archive.ts) on s3rver: what each write asks
 * S3 for (s3rver keeps a content type but ignores server-side encryption, so the request itself is
 * checked), what a read of a missing object or an unreadable one answers, and the batch writer's
 * refusal of an empty batch. The formats themselves: test/store/payload-archive.test.ts.
 */
import { HeadObjectCommand, NoSuchBucket, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventMessage } from '../../lambdas/queue/event-message.js';
import { ArchiveFormatError, S3PayloadArchive } from '../../lambdas/store/payload-archive.js';
import { createBucket, s3Client } from '../helpers/aws.js';

const s3 = s3Client();
afterAll(() => s3.destroy());

/** The input of every PutObject the client sends. */
const puts: Record<string, unknown>[] = [];
s3.middlewareStack.add(
  (next, context) => async (args) => {
    if (context.commandName === 'PutObjectCommand') puts.push(args.input as Record<string, unknown>);
    return next(args);
  },
  { step: 'initialize', name: 'record-puts' },
);

const NOW = Date.parse('2026-12-07T10:00:00.000Z');
const message = (id: string): EventMessage => ({
  v: 1,
  key: `stripe:platform:${id}`,
  provider: 'stripe',
  eventId: id,
  eventType: 'charge.refunded',
  account: 'platform',
  receivedAt: '2026-12-07T09:59:59.000Z',
  claimExpiresAt: 1_800_000_000,
  headers: { 'content-type': 'application/json' },
  body: '{"id":1}',
  bodyEncoding: 'utf8',
});

let bucket: string;
let archive: S3PayloadArchive;
beforeAll(async () => {
  bucket = await createBucket(s3);
  archive = new S3PayloadArchive(s3, bucket, () => 'id-1');
});

describe('S3PayloadArchive on s3rver', () => {
  it('writes JSON objects encrypted with SSE-S3, an event and a batch alike', async () => {
    puts.length = 0;
    const one = await archive.put(message('evt_1'), '2026-12-07T09:59:59.000Z', NOW);
    const batch = await archive.putBatch([message('evt_2'), message('evt_3')], NOW);
    expect(
      puts.map(({ Bucket, Key, ContentType, ServerSideEncryption }) => ({
        Bucket,
        Key,
        ContentType,
        ServerSideEncryption,
      })),
    ).toEqual([
      { Bucket: bucket, Key: one, ContentType: 'application/json', ServerSideEncryption: 'AES256' },
      { Bucket: bucket, Key: batch, ContentType: 'application/json', ServerSideEncryption: 'AES256' },
    ]);
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: batch }));
    expect(head.ContentType).toBe('application/json');
    // Each read back whole: the message as queued, and when it was archived.
    const archivedAt = '2026-12-07T10:00:00.000Z';
    expect(await archive.get(one, 'stripe:platform:evt_1')).toStrictEqual({
      ...message('evt_1'),
      archivedAt,
    });
    expect(await archive.get(batch, 'stripe:platform:evt_3')).toStrictEqual({
      ...message('evt_3'),
      archivedAt,
    });
  });

  it('refuses to write an empty batch', async () => {
    puts.length = 0;
    await expect(archive.putBatch([], NOW)).rejects.toThrow('an archive batch needs at least one event');
    expect(puts).toEqual([]);
  });

  it('finds nothing at a key with no object, and throws for any other failure', async () => {
    expect(await archive.find('events/stripe/2026-12-07/none.json')).toBeUndefined();
    const elsewhere = new S3PayloadArchive(s3, `${bucket}-missing`);
    await expect(elsewhere.find('events/stripe/2026-12-07/none.json')).rejects.toBeInstanceOf(NoSuchBucket);
  });

  it('names the object by its S3 address when it is not an archive', async () => {
    const key = 'events/stripe/2026-12-07/broken.json';
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'not json' }));
    await expect(archive.get(key, 'stripe:platform:evt_1')).rejects.toThrow(
      new ArchiveFormatError(`s3://${bucket}/${key} is not JSON`),
    );
  });
});
