/**
 * Bodies too large for a queue message: the receiver stores them in the archive bucket and sends a
 * claim check. On DynamoDB Local, the SQS emulator and s3rver; what is injected is only the
 * failures those servers cannot produce on demand (a failed PUT, a process dying mid-delivery).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import {
  type ClaimCheckMessage,
  decodeBody,
  isClaimCheck,
  SQS_MAX_MESSAGE_BYTES,
} from '../../lambdas/queue/event-message.js';
import { faultInjector } from '../../lambdas/shared/faults.js';
import { ClaimStatus } from '../../lambdas/store/claim.js';
import type { PayloadArchive } from '../../lambdas/store/payload-archive.js';
import { sampleDelivery } from '../../local/samples.js';
import { bucketKeys } from '../helpers/aws.js';
import { createReceiverHarness, type ReceiverHarness } from '../helpers/receiver-harness.js';
import { githubHeaders, TEST_SECRETS } from '../helpers/signing.js';

let h: ReceiverHarness;
beforeEach(async () => {
  h = await createReceiverHarness();
});

const pushBody = (bytes: number, delivery: string) =>
  sampleDelivery('github', { secret: TEST_SECRETS.github, bytes, eventId: delivery }).body;

async function onlyMessage(): Promise<ClaimCheckMessage> {
  const messages = await h.drain();
  expect(messages).toHaveLength(1);
  const [message] = messages;
  if (!message || !isClaimCheck(message)) throw new Error('expected one claim-check message');
  return message;
}

describe('receiver: claim checks for bodies over the threshold', () => {
  it('stores a 700 KB push in the archive bucket and queues a small pointer to it', async () => {
    const body = pushBody(700_000, 'cc-700k');
    // The fault points a claim check passes, each with the event id FAULT_POINTS=point@match matches.
    const points: string[] = [];
    const result = await h.deliver('github', body, await githubHeaders(body, { delivery: 'cc-700k' }), {
      deps: { faultPoint: (point, eventId) => points.push(`${point}:${eventId}`) },
    });
    expect(result).toMatchObject({ statusCode: 200, outcome: 'accepted', enqueued: 1 });
    expect(points).toEqual(['receiver.afterClaim:cc-700k', 'receiver.afterPayloadStored:cc-700k']);

    const message = await onlyMessage();
    expect(message).not.toHaveProperty('body');
    expect(message).toMatchObject({ key: result.key, eventId: 'cc-700k', bodyBytes: 700_000 });
    expect(Buffer.byteLength(JSON.stringify(message))).toBeLessThan(2_048);

    // The object is the archived event: the exact bytes, and the claim points at it.
    const archived = await h.archive.get(message.payloadKey, message.key);
    expect(decodeBody(archived).equals(Buffer.from(body))).toBe(true);
    expect(archived).toMatchObject({ key: result.key, provider: 'github', eventType: 'push' });
    expect(await h.claim(result.key ?? '')).toMatchObject({
      status: ClaimStatus.Enqueued,
      archiveKey: message.payloadKey,
    });
  });

  it('stores a base64-encoded delivery (API Gateway isBase64Encoded) as the exact decoded bytes', async () => {
    const body = pushBody(500_000, 'cc-base64');
    const result = await h.deliver('github', body, await githubHeaders(body, { delivery: 'cc-base64' }), {
      isBase64Encoded: true,
    });
    expect(result).toMatchObject({ statusCode: 200, outcome: 'accepted' });
    const message = await onlyMessage();
    expect(decodeBody(await h.archive.get(message.payloadKey, message.key)).equals(Buffer.from(body))).toBe(
      true,
    );
  });

  it('sends a message inline when it is exactly the threshold and as a claim check one byte over', async () => {
    // Same body size and equal-length delivery ids: the messages are the same size.
    const deliver = async (delivery: string, threshold: number) => {
      const body = pushBody(20_000, delivery);
      const settings = { ...h.settings, claimCheckThresholdBytes: threshold };
      const result = await h.deliver('github', body, await githubHeaders(body, { delivery }), {
        deps: { settings },
      });
      expect(result.outcome).toBe('accepted');
      const [message] = await h.drain();
      if (!message) throw new Error('no message');
      return message;
    };
    const first = await deliver('cc-edge-1', SQS_MAX_MESSAGE_BYTES);
    expect(isClaimCheck(first)).toBe(false);
    const size = Buffer.byteLength(JSON.stringify(first));

    const atThreshold = await deliver('cc-edge-2', size);
    expect(isClaimCheck(atThreshold)).toBe(false);
    expect(Buffer.byteLength(JSON.stringify(atThreshold))).toBe(size);
    expect(await bucketKeys(h.s3, h.archiveBucket)).toEqual([]);

    const overThreshold = await deliver('cc-edge-3', size - 1);
    expect(isClaimCheck(overThreshold)).toBe(true);
    expect(await bucketKeys(h.s3, h.archiveBucket)).toHaveLength(1);
  });

  it('by default sends a 400 KB push in the message (no S3 object) and a 460 KB one as a claim check', async () => {
    // The default threshold is 448 KiB of message: below it the extra SQS chunks cost less than
    // the claim check's PUT and GET (bench/large-payloads.ts).
    expect(h.settings.claimCheckThresholdBytes).toBe(458_752);
    const inline = pushBody(400_000, 'cc-default-400k');
    await h.deliver('github', inline, await githubHeaders(inline, { delivery: 'cc-default-400k' }));
    const [first] = await h.drain();
    expect(first && isClaimCheck(first)).toBe(false);
    expect(await bucketKeys(h.s3, h.archiveBucket)).toEqual([]);

    const over = pushBody(460_000, 'cc-default-460k');
    await h.deliver('github', over, await githubHeaders(over, { delivery: 'cc-default-460k' }));
    expect((await onlyMessage()).bodyBytes).toBe(460_000);
    expect(await bucketKeys(h.s3, h.archiveBucket)).toHaveLength(1);
  });

  it('answers a redelivery of a claim-checked event as a duplicate, writing nothing more', async () => {
    const body = pushBody(500_000, 'cc-dup');
    const headers = await githubHeaders(body, { delivery: 'cc-dup' });
    await h.deliver('github', body, headers);
    const again = await h.deliver('github', body, headers);
    expect(again).toMatchObject({ statusCode: 200, outcome: 'duplicate', enqueued: 0, deliveries: 2 });
    await onlyMessage();
    expect(await bucketKeys(h.s3, h.archiveBucket)).toHaveLength(1);
  });

  it('releases the claim and answers 500 when the body cannot be stored; the retry completes it', async () => {
    const body = pushBody(500_000, 'cc-s3-down');
    const headers = await githubHeaders(body, { delivery: 'cc-s3-down' });
    const down: Pick<PayloadArchive, 'put'> = {
      put: async () => {
        throw Object.assign(new Error('Service Unavailable'), { name: 'ServiceUnavailable' });
      },
    };
    const failed = await h.deliver('github', body, headers, { deps: { archive: down } });
    expect(failed).toMatchObject({ statusCode: 500, outcome: 'enqueue_failed' });
    expect(await h.depth()).toBe(0);
    const released = await h.claim(failed.key ?? '');
    expect(released).toMatchObject({ status: ClaimStatus.Received });
    expect(String(released?.lastError)).toMatch(/^payload store failed: ServiceUnavailable/);

    const retried = await h.deliver('github', body, headers);
    expect(retried).toMatchObject({ statusCode: 200, outcome: 'accepted', tookOver: true });
    const message = await onlyMessage();
    expect(decodeBody(await h.archive.get(message.payloadKey, message.key)).toString()).toBe(body);
  });

  it('says "enqueue failed", not "payload store failed", when the body was stored and the send failed', async () => {
    const body = pushBody(500_000, 'cc-sqs-down');
    const headers = await githubHeaders(body, { delivery: 'cc-sqs-down' });
    const down = {
      send: async () => {
        throw new Error('SQS is unavailable (injected)');
      },
    };
    const failed = await h.deliver('github', body, headers, { deps: { queue: down } });
    expect(failed).toMatchObject({ statusCode: 500, outcome: 'enqueue_failed' });
    expect(await h.claim(failed.key ?? '')).toMatchObject({
      status: ClaimStatus.Received,
      lastError: 'enqueue failed: Error: SQS is unavailable (injected)',
    });
    // The object was written; a retry writes the same one again.
    expect(await bucketKeys(h.s3, h.archiveBucket)).toHaveLength(1);
  });

  it('survives a receiver dying between the S3 write and the send: the retry after the lease sends once', async () => {
    const body = pushBody(500_000, 'cc-crash');
    const headers = await githubHeaders(body, { delivery: 'cc-crash' });
    let now = Date.now();
    const clock = () => now;
    // A process that dies after the PUT neither sends nor releases: the release fails with it.
    const dying = {
      faultPoint: faultInjector('receiver.afterPayloadStored'),
      store: Object.assign(Object.create(h.store), {
        releaseClaim: async () => {
          throw new Error('process died');
        },
      }),
      clock,
    };
    const first = await h.deliver('github', body, headers, { deps: dying });
    expect(first.statusCode).toBe(500);
    expect(await h.depth()).toBe(0);
    const [stored] = await bucketKeys(h.s3, h.archiveBucket);
    expect(stored).toBeDefined();
    expect(await h.claim(first.key ?? '')).toMatchObject({ status: ClaimStatus.Received });

    // Within the lease, a redelivery waits for the holder and is told to retry.
    const settings = { ...h.settings, duplicateWaitMs: 100 };
    const early = await h.deliver('github', body, headers, { deps: { settings } });
    expect(early).toMatchObject({
      statusCode: 503,
      outcome: 'in_flight',
      headers: { 'retry-after': expect.any(String) },
    });
    expect(early.message).toMatch(/still being accepted/);

    // Past the lease, the redelivery takes the claim over, rewrites the same object and sends once.
    now += (h.settings.leaseSeconds + 1) * 1000;
    const retried = await h.deliver('github', body, headers, { deps: { clock } });
    expect(retried).toMatchObject({ statusCode: 200, outcome: 'accepted', tookOver: true });
    const message = await onlyMessage();
    expect(message.payloadKey).toBe(stored);
    expect(await bucketKeys(h.s3, h.archiveBucket)).toEqual([stored]);
    expect(await h.claim(first.key ?? '')).toMatchObject({
      status: ClaimStatus.Enqueued,
      archiveKey: stored,
    });
  });

  it('takes a 5.5 MB body, the largest a text delivery can be through API Gateway', async () => {
    const body = pushBody(5_500_000, 'cc-5500k');
    const result = await h.deliver('github', body, await githubHeaders(body, { delivery: 'cc-5500k' }));
    expect(result).toMatchObject({ statusCode: 200, outcome: 'accepted' });
    const message = await onlyMessage();
    expect(Buffer.byteLength(JSON.stringify(message))).toBeLessThan(SQS_MAX_MESSAGE_BYTES);
    expect(decodeBody(await h.archive.get(message.payloadKey, message.key)).equals(Buffer.from(body))).toBe(
      true,
    );
  }, 30_000);
});
