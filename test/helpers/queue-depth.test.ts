/**
 * settledQueueDepth against the SQS emulator: a message the emulator still holds as delayed is not
 * in its counts. That is how the receiver tests' depth once read 5 for 6 messages sent (the
 * emulator's own "not delayed any more" timer lagged under load); a per-message delay makes the
 * same state last long enough to look at.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { createQueue, queueDepth, settledQueueDepth, sqsClient } from './aws.js';

describe('settledQueueDepth', () => {
  it('counts a message sent a moment ago that a plain depth read misses while it is delayed', async () => {
    const sqs = sqsClient();
    const queueUrl = await createQueue(sqs);
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'early' }));
    expect(await settledQueueDepth(sqs, queueUrl)).toBe(1);
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'late', DelaySeconds: 2 }));
    expect(await queueDepth(sqs, queueUrl)).toBe(1);
    expect(await settledQueueDepth(sqs, queueUrl)).toBe(2);
  });

  it('gives up at its deadline, saying how many messages are still delayed', async () => {
    const sqs = sqsClient();
    const queueUrl = await createQueue(sqs);
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'later', DelaySeconds: 30 }));
    await expect(settledQueueDepth(sqs, queueUrl, 200)).rejects.toThrow(
      `${queueUrl} still holds 1 delayed message(s) after 200 ms`,
    );
  });
});
