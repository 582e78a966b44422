/**
 * Races between processor invocations, as Lambda's event source mapping makes them: copies of one
 * event in separate messages, handled by concurrent batches of the local poller against DynamoDB
 * Local and the SQS emulator. The event's effects must happen once whoever wins.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { paymentRowKey } from '../../examples/payments/appliers/stripe.js';
import { ClaimStatus } from '../../lambdas/store/claim.js';
import { queueDepth, SqsPoller } from '../../local/sqs-poller.js';
import { peekMessageBody } from '../helpers/aws.js';
import { stripePaymentIntentEvent } from '../helpers/events.js';
import { createPipelineHarness, type PipelineHarness } from '../helpers/pipeline-harness.js';
import { stripeHeaders } from '../helpers/signing.js';

let h: PipelineHarness;
afterEach(async () => {
  await h?.stop();
});

describe('processor: concurrent batches', () => {
  it('applies an event once when copies of it in separate messages are processed at the same time', async () => {
    // Copies that lose the race are retried after the 1 s visibility timeout: room for a few.
    h = await createPipelineHarness({ maxReceiveCount: 5 });
    const body = JSON.stringify(stripePaymentIntentEvent({ intentId: 'pi_race' }));
    const accepted = await h.receiver.deliver('stripe', body, stripeHeaders(body));
    expect(accepted.statusCode).toBe(200);
    const message = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
    for (let copy = 0; copy < 4; copy++)
      await h.receiver.sqs.send(
        new SendMessageCommand({ QueueUrl: h.receiver.queueUrl, MessageBody: message }),
      );

    // Each batch waits (up to 2 s) for a second one to arrive, so two invocations start together.
    let arrived = 0;
    let inFlight = 0;
    let maxInFlight = 0;
    const poller = new SqsPoller({
      client: h.receiver.sqs,
      queueUrl: h.receiver.queueUrl,
      batchSize: 1,
      handler: async (event: SQSEvent, context: Context) => {
        arrived += 1;
        const waitUntil = Date.now() + 2_000;
        while (arrived < 2 && Date.now() < waitUntil) await new Promise((r) => setTimeout(r, 10));
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          return await h.processor(event, context);
        } finally {
          inFlight -= 1;
        }
      },
    });
    poller.start();
    const deadline = Date.now() + 20_000;
    while ((await queueDepth(h.receiver.sqs, h.receiver.queueUrl)) > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    await poller.stop();

    expect(maxInFlight).toBeGreaterThanOrEqual(2);
    expect(await queueDepth(h.receiver.sqs, h.receiver.queueUrl)).toBe(0);
    expect(h.sink.entries().filter((e) => e.service === 'ledger' && !e.replay)).toHaveLength(1);
    expect(h.sink.entries().filter((e) => e.service === 'mailer')).toHaveLength(1);
    expect((await h.row('payments', paymentRowKey('platform', 'pi_race')))?.status).toBe('succeeded');
    expect(await h.receiver.claim(accepted.key ?? '')).toMatchObject({ status: ClaimStatus.Done });
    expect(await h.dlqMessages()).toBe(0);
  }, 30_000);
});
