/**
 * Listing a bucket past one page (lambdas/store/object-listing.ts) on s3rver, the local stack's S3:
 * every key once, in S3's order, from after a key when asked. s3rver's continuation tokens needed a
 * cipher Node 20 leaves out (local/emulators.ts), so every listing past one page failed locally.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allObjectKeys } from '../../lambdas/store/object-listing.js';
import { createBucket, s3Client } from '../helpers/aws.js';

const s3 = s3Client();
afterAll(() => s3.destroy());

/** Puts an empty object at each key, 50 at a time. */
async function putAll(bucket: string, keys: readonly string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 50)
    await Promise.all(
      keys.slice(i, i + 50).map((Key) => s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: '{}' }))),
    );
}

describe('listObjectKeys on s3rver', () => {
  let bucket: string;
  const day = (i: number) => `events/shopify/2026-12-02/batch-${String(i).padStart(4, '0')}.json`;
  const keys = Array.from({ length: 25 }, (_, i) => day(i));
  beforeAll(async () => {
    bucket = await createBucket(s3);
    // Out of order, and beside keys under other prefixes (before and after this one).
    await putAll(bucket, [...keys].reverse());
    await putAll(bucket, ['events/github/2026-12-02/x.json', 'events/stripe/2026-12-02/y.json']);
  });

  it('lists every key under the prefix once, in order, across pages', async () => {
    expect(await allObjectKeys(s3, { bucket, prefix: 'events/shopify/', pageSize: 10 })).toEqual(keys);
    expect(await allObjectKeys(s3, { bucket, prefix: 'events/shopify/', pageSize: 25 })).toEqual(keys);
    expect(await allObjectKeys(s3, { bucket, prefix: 'events/shopify/', pageSize: 1 })).toEqual(keys);
    expect(await allObjectKeys(s3, { bucket, prefix: 'events/none/' })).toEqual([]);
  });

  it('lists from after a key, across pages', async () => {
    expect(
      await allObjectKeys(s3, { bucket, prefix: 'events/shopify/', startAfter: day(4), pageSize: 10 }),
    ).toEqual(keys.slice(5));
    expect(await allObjectKeys(s3, { bucket, prefix: 'events/shopify/', startAfter: day(24) })).toEqual([]);
  });

  it('lists a whole bucket past S3s own page of 1,000 keys', async () => {
    const big = await createBucket(s3);
    const many = Array.from({ length: 1_001 }, (_, i) => `k/${String(i).padStart(5, '0')}`);
    await putAll(big, many);
    expect(await allObjectKeys(s3, { bucket: big })).toEqual(many);
  }, 60_000);
});
