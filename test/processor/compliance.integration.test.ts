/**
 * The S3 side of compliance requests against s3rver: listing past one page, reading with the ETag,
 * rewriting and deleting. s3rver ignores `If-Match`, so the 412 path (another writer changed the
 * object) is driven with a client that answers as S3 does, checking the condition is sent.
 */
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { S3ComplianceStore } from '../../lambdas/store/compliance-store.js';
import { bucketKeys, createBucket, getObjectText, s3Client } from '../helpers/aws.js';

const s3 = s3Client();
afterAll(() => s3.destroy());

describe('S3ComplianceStore on s3rver', () => {
  it('lists every key under a prefix across pages (10 a page), reads with the ETag, replaces, deletes and writes', async () => {
    const bucket = await createBucket(s3);
    const store = new S3ComplianceStore(s3, bucket, 10);
    const keys = Array.from(
      { length: 25 },
      (_, i) => `events/shopify/2026-12-02/batch-${String(i).padStart(4, '0')}.json`,
    );
    for (let i = 0; i < keys.length; i += 50)
      await Promise.all(
        keys
          .slice(i, i + 50)
          .map((Key) => s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: `{"n":"${Key}"}` }))),
      );
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'events/stripe/2026-12-02/batch-x.json', Body: '{}' }),
    );
    const listed: string[] = [];
    for await (const key of store.list('events/shopify/')) listed.push(key);
    expect(listed.sort()).toEqual(keys);
    // From after a key (a deferred redaction lists the batch objects written since its request).
    const after: string[] = [];
    for await (const key of store.list('events/shopify/', keys[4])) after.push(key);
    expect(after).toEqual(keys.slice(5));

    const first = keys[0] as string;
    const read = await store.read(first);
    expect(read?.text).toBe(`{"n":"${first}"}`);
    expect(read?.etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(await store.replaceIfUnchanged(first, '{"v":2,"events":[]}', read?.etag ?? '')).toBe(true);
    expect(await getObjectText(s3, bucket, first)).toBe('{"v":2,"events":[]}');
    expect(await store.deleteIfUnchanged(first, (await store.read(first))?.etag ?? '')).toBe(true);
    expect(await store.read(first)).toBeUndefined();
    await store.write('compliance/shopify/shop/customer-1/data-request-1.json', '{"ok":true}');
    const written = await s3.send(
      new HeadObjectCommand({
        Bucket: bucket,
        Key: 'compliance/shopify/shop/customer-1/data-request-1.json',
      }),
    );
    expect(written.ContentType).toBe('application/json');
    await store.delete(keys[1] as string);
    const remaining = await bucketKeys(s3, bucket);
    expect(remaining).toContain('compliance/shopify/shop/customer-1/data-request-1.json');
    expect(remaining).not.toContain(keys[1]);
    expect(remaining).toHaveLength(25 - 2 + 2);
  }, 60_000);
});

describe('S3ComplianceStore conditions', () => {
  /** A client whose every call fails with `error` (its HTTP status in `$metadata` when given), or succeeds. */
  const answering = (error?: { name: string; status?: number }) => {
    const sent: Record<string, unknown>[] = [];
    const client = {
      send: async (command: { input: Record<string, unknown> }) => {
        sent.push(command.input);
        if (error)
          throw Object.assign(new Error(error.name), {
            name: error.name,
            ...(error.status === undefined ? {} : { $metadata: { httpStatusCode: error.status } }),
          });
        return {};
      },
    };
    return { sent, store: new S3ComplianceStore(client as never, 'b') };
  };

  it('sends If-Match with the ETag read on a rewrite and on a delete', async () => {
    const { sent, store } = answering();
    expect(await store.replaceIfUnchanged('k', '{}', '"e1"')).toBe(true);
    expect(await store.deleteIfUnchanged('k', '"e2"')).toBe(true);
    expect(sent).toMatchObject([
      { Key: 'k', IfMatch: '"e1"', ServerSideEncryption: 'AES256' },
      { Key: 'k', IfMatch: '"e2"' },
    ]);
  });

  it('reports a 412 as "changed", a missing object as gone, and throws anything else', async () => {
    const changed = answering({ name: 'PreconditionFailed', status: 412 }).store;
    expect(await changed.replaceIfUnchanged('k', '{}', '"e"')).toBe(false);
    expect(await changed.deleteIfUnchanged('k', '"e"')).toBe(false);
    const gone = answering({ name: 'NoSuchKey', status: 404 }).store;
    expect(await gone.replaceIfUnchanged('k', '{}', '"e"')).toBe(false);
    expect(await gone.deleteIfUnchanged('k', '"e"')).toBe(true);
    expect(await gone.read('k')).toBeUndefined();
    const denied = answering({ name: 'AccessDenied', status: 403 }).store;
    await expect(denied.replaceIfUnchanged('k', '{}', '"e"')).rejects.toThrow('AccessDenied');
    await expect(denied.read('k')).rejects.toThrow('AccessDenied');
  });

  it("knows S3's answer by its HTTP status or by its error name, either alone", async () => {
    for (const changed of [{ name: 'Unknown', status: 412 }, { name: 'PreconditionFailed' }]) {
      const { store } = answering(changed);
      expect(await store.replaceIfUnchanged('k', '{}', '"e"')).toBe(false);
      expect(await store.deleteIfUnchanged('k', '"e"')).toBe(false);
    }
    for (const gone of [{ name: 'Unknown', status: 404 }, { name: 'NoSuchKey' }]) {
      const { store } = answering(gone);
      expect(await store.read('k')).toBeUndefined();
      expect(await store.replaceIfUnchanged('k', '{}', '"e"')).toBe(false);
      expect(await store.deleteIfUnchanged('k', '"e"')).toBe(true);
    }
    // Neither: thrown as it is.
    await expect(answering({ name: 'Unknown', status: 500 }).store.read('k')).rejects.toThrow('Unknown');
    await expect(answering({ name: 'Unknown' }).store.deleteIfUnchanged('k', '"e"')).rejects.toThrow(
      'Unknown',
    );
  });
});
