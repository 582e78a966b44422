/**
 * The processor reading claim-checked events: the body comes from the archive bucket (s3rver), the
 * object the receiver wrote is the event's archive, and a missing or foreign object never marks the
 * event DONE. Events enter through the real receiver core; messages flow through the SQS emulator.
 */
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it } from 'vitest';
import { isClaimCheck, type QueueMessage } from '../../lambdas/queue/event-message.js';
import { ClaimStatus } from '../../lambdas/store/claim.js';
import { sampleDelivery } from '../../local/samples.js';
import { bucketKeys, peekMessageBody } from '../helpers/aws.js';
import { createPipelineHarness, type PipelineHarness } from '../helpers/pipeline-harness.js';
import { githubHeaders, TEST_SECRETS } from '../helpers/signing.js';

let h: PipelineHarness;
afterEach(async () => {
  await h?.stop();
});

async function deliverPush(bytes: number, delivery: string) {
  const body = sampleDelivery('github', { secret: TEST_SECRETS.github, bytes, eventId: delivery }).body;
  const result = await h.receiver.deliver('github', body, await githubHeaders(body, { delivery }));
  expect(result).toMatchObject({ statusCode: 200, outcome: 'accepted' });
  const message = JSON.parse(await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl)) as QueueMessage;
  if (!isClaimCheck(message)) throw new Error('expected a claim check');
  return { body, key: result.key ?? '', message };
}

describe('processor: claim-checked events', () => {
  it('applies a 3 MB push read from S3, and keeps the claim check as its only archive object', async () => {
    h = await createPipelineHarness();
    const { body, key, message } = await deliverPush(3_000_000, 'pcc-3mb');
    await h.drainQueue();

    const claim = await h.receiver.claim(key);
    expect(claim).toMatchObject({
      status: ClaimStatus.Done,
      outcome: 'applied',
      archiveKey: message.payloadKey,
    });
    const [row] = (claim?.writtenRows as string[] | undefined) ?? [];
    expect(await h.row('resources', row?.slice('resources:'.length) ?? '')).toMatchObject({
      headSha: JSON.parse(body).after,
      lastEventId: 'pcc-3mb',
    });
    // No second copy: the processor did not archive the event again.
    expect(await bucketKeys(h.s3, h.archiveBucket)).toEqual([message.payloadKey]);
  }, 30_000);

  it('retries while the object is missing and completes once it is back, never DONE without it', async () => {
    h = await createPipelineHarness({ maxReceiveCount: 5 });
    const { key, message } = await deliverPush(500_000, 'pcc-missing');
    const archived = await h.receiver.archive.get(message.payloadKey, key);
    await h.s3.send(new DeleteObjectCommand({ Bucket: h.archiveBucket, Key: message.payloadKey }));

    await h.poller.pollOnce();
    // Released for the retry (not FAILED as poison): the object may come back.
    const failed = await h.receiver.claim(key);
    expect(failed?.status).toBe(ClaimStatus.Processing);
    expect(String(failed?.lastError)).toMatch(/NoSuchKey|does not exist/i);
    expect(String(failed?.lastError)).not.toMatch(/PoisonMessageError/);

    await h.s3.send(
      new PutObjectCommand({
        Bucket: h.archiveBucket,
        Key: message.payloadKey,
        Body: JSON.stringify(archived),
      }),
    );
    await h.drainQueue();
    expect(await h.receiver.claim(key)).toMatchObject({ status: ClaimStatus.Done, outcome: 'applied' });
    expect(await h.dlqMessages()).toBe(0);
  }, 30_000);

  it('fails as poison a claim check whose object holds another event', async () => {
    h = await createPipelineHarness();
    const first = await deliverPush(500_000, 'pcc-first');
    await h.drainQueue();
    const { key, message } = await deliverPush(500_000, 'pcc-second');
    // Point the second event's object at the first event's content.
    const foreign = await h.receiver.archive.get(first.message.payloadKey, first.key);
    await h.s3.send(
      new PutObjectCommand({
        Bucket: h.archiveBucket,
        Key: message.payloadKey,
        Body: JSON.stringify(foreign),
      }),
    );
    await h.drainQueue();
    const claim = await h.receiver.claim(key);
    expect(claim?.status).toBe(ClaimStatus.Failed);
    expect(String(claim?.lastError)).toMatch(/PoisonMessageError: claim check .* holds event github:/);
    expect(await h.dlqMessages()).toBe(1);
  }, 30_000);
});
