/**
 * The event source mapping stand-in runs several batches at once, as Lambda does, on the SQS
 * emulator: overlap is recorded by the handler itself.
 */
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  concurrentBatches,
  DEFAULT_CONCURRENT_BATCHES,
  queueDepth,
  SqsPoller,
  type SqsPollerOptions,
} from '../../local/sqs-poller.js';
import { createQueue, sqsClient } from '../helpers/aws.js';

let sqs: SQSClient;
beforeAll(() => {
  sqs = sqsClient();
});
afterAll(() => sqs?.destroy());

async function queueWith(messages: number): Promise<string> {
  const queueUrl = await createQueue(sqs);
  for (let i = 0; i < messages; i += 10) {
    const entries = Array.from({ length: Math.min(10, messages - i) }, (_, j) => ({
      Id: String(j),
      MessageBody: `message ${i + j}`,
    }));
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
  }
  return queueUrl;
}

/**
 * Runs a poller until `expected` messages were handled and the queue is empty (the emulator's
 * counts alone can read 0 for a moment while receives are in flight); each batch is held `holdMs`.
 */
async function drainWithOverlap(
  queueUrl: string,
  expected: number,
  options: Partial<SqsPollerOptions>,
  holdMs = 300,
): Promise<{ maxInFlight: number; handled: string[] }> {
  let inFlight = 0;
  let maxInFlight = 0;
  const handled: string[] = [];
  const poller = new SqsPoller({
    client: sqs,
    queueUrl,
    batchSize: 1,
    ...options,
    handler: async (event: SQSEvent) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, holdMs));
      handled.push(...event.Records.map((r) => r.body));
      inFlight -= 1;
      return { batchItemFailures: [] };
    },
  });
  poller.start();
  const deadline = Date.now() + 15_000;
  while ((handled.length < expected || (await queueDepth(sqs, queueUrl)) > 0) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  await poller.stop();
  return { maxInFlight, handled };
}

describe('local SQS poller: concurrent batches', () => {
  it('has two batches in flight at the same time, by default up to five, each message handled once', async () => {
    const queueUrl = await queueWith(12);
    const { maxInFlight, handled } = await drainWithOverlap(queueUrl, 12, {});
    expect(maxInFlight).toBeGreaterThanOrEqual(2);
    expect(maxInFlight).toBeLessThanOrEqual(DEFAULT_CONCURRENT_BATCHES);
    expect(handled.sort()).toEqual(Array.from({ length: 12 }, (_, i) => `message ${i}`).sort());
  });

  it('never has more batches in flight than its concurrency', async () => {
    const queueUrl = await queueWith(8);
    const { maxInFlight, handled } = await drainWithOverlap(queueUrl, 8, { concurrency: 2 });
    expect(maxInFlight).toBe(2);
    expect(handled).toHaveLength(8);
  });

  it("takes the concurrency from the mapping's ScalingConfig.MaximumConcurrency, else Lambda's five", () => {
    expect(concurrentBatches({ ScalingConfig: { MaximumConcurrency: 3 } })).toBe(3);
    expect(concurrentBatches({ BatchSize: 10 })).toBe(5);
    expect(concurrentBatches({ ScalingConfig: {} })).toBe(5);
  });
});
