/**
 * The local S3 (s3rver, as local/emulators.ts starts it for `npm start` and the tests) answers writes
 * as S3 does where the pipeline relies on it: an object is replaced whole, never mixed from two PUTs,
 * and `If-Match` on a PUT or DELETE is honoured (local/s3rver-patches.ts).
 */
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { bucketKeys, createBucket, getObjectText, s3Client } from '../helpers/aws.js';

let s3: S3Client;
let bucket: string;

beforeAll(async () => {
  s3 = s3Client();
  bucket = await createBucket(s3);
});

const etagOf = async (key: string) =>
  (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).ETag;
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: { name?: string; $metadata?: { httpStatusCode?: number } }) => [
      error.$metadata?.httpStatusCode,
      error.name,
    ],
  );

describe('the local S3', () => {
  it('replaces an object whole when PUTs of one key overlap: a read finds one of them, never a mix', async () => {
    // Found by the soak: two redactions rewriting one batch object left bytes of both.
    const bodies = Array.from({ length: 12 }, (_, i) =>
      JSON.stringify({ writer: i, pad: 'x'.repeat(20_000 * (12 - i)) }),
    );
    for (let round = 0; round < 3; round++) {
      const key = `overlap-${round}.json`;
      const reads: Promise<string>[] = [];
      await Promise.all(
        bodies.map(async (body, i) => {
          await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
          if (i % 3 === 0) reads.push(getObjectText(s3, bucket, key));
        }),
      );
      for (const text of [...(await Promise.all(reads)), await getObjectText(s3, bucket, key)]) {
        expect(bodies).toContain(text);
      }
    }
    // The files written beside an object on the way are never listed.
    expect((await bucketKeys(s3, bucket)).filter((k) => k.startsWith('overlap-'))).toEqual([
      'overlap-0.json',
      'overlap-1.json',
      'overlap-2.json',
    ]);
  });

  it('answers a PUT or DELETE whose If-Match names another ETag 412, and one for a missing key 404', async () => {
    const key = 'conditional.json';
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: '{"v":1}' }));
    const first = await etagOf(key);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: '{"v":2}', IfMatch: first }));
    expect(await getObjectText(s3, bucket, key)).toBe('{"v":2}');
    // The ETag read before the rewrite is stale now.
    expect(
      await failure(
        s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: '{"v":3}', IfMatch: first })),
      ),
    ).toEqual([412, 'PreconditionFailed']);
    expect(
      await failure(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key, IfMatch: first }))),
    ).toEqual([412, 'PreconditionFailed']);
    expect(await getObjectText(s3, bucket, key)).toBe('{"v":2}');
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key, IfMatch: await etagOf(key) }));
    expect(
      await failure(s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: '{}', IfMatch: first }))),
    ).toEqual([404, 'NoSuchKey']);
  });

  it('lets one of two rewrites that read the same ETag win, as S3 does', async () => {
    const key = 'race.json';
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: '{"events":["a","b"]}' }));
    const read = await etagOf(key);
    const outcomes = await Promise.all(
      ['{"events":["b"]}', '{"events":["a"]}'].map((Body) =>
        failure(s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body, IfMatch: read }))),
      ),
    );
    expect(outcomes.filter((o) => o === undefined)).toHaveLength(1);
    expect(outcomes.filter((o) => o !== undefined)).toEqual([[412, 'PreconditionFailed']]);
  });
});
