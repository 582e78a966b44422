/**
 * What the processor tells an operator when an attempt fails: the log line for each way it ends
 * (retried, last attempt, poison, a failure it could not record, a deferred redaction after DONE),
 * with the ids to find the event by. On DynamoDB Local and the SQS emulator, through the receiver
 * core and `processMessage`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { processMessage } from '../../lambdas/processor/core.js';
import type { ApplierRegistry } from '../../lambdas/processor/types.js';
import type { EventMessage } from '../../lambdas/queue/event-message.js';
import { ClaimStatus } from '../../lambdas/store/claim.js';
import { peekMessageBody, withEachCommand } from '../helpers/aws.js';
import { stripePaymentIntentEvent } from '../helpers/events.js';
import { recordingLog } from '../helpers/log.js';
import { createPipelineHarness, type PipelineHarness } from '../helpers/pipeline-harness.js';
import { stripeHeaders } from '../helpers/signing.js';

let h: PipelineHarness;
afterEach(async () => {
  await h?.stop();
});

/** Every Stripe event fails while planning. */
const failing: ApplierRegistry = {
  stripe: {
    '*': {
      plan: async () => {
        throw new Error('the CRM is down');
      },
    },
  },
};

async function queued(intentId: string, body?: string) {
  const event = body ?? JSON.stringify(stripePaymentIntentEvent({ intentId }));
  const accepted = await h.receiver.deliver('stripe', event, stripeHeaders(event));
  expect(accepted.statusCode).toBe(200);
  const message = await peekMessageBody(h.receiver.sqs, h.receiver.queueUrl);
  return { key: accepted.key ?? '', message, queued: JSON.parse(message) as EventMessage };
}

describe('processor: the log of a failed attempt', () => {
  it('says SQS will redeliver, with the ids, the attempt and the error', async () => {
    h = await createPipelineHarness({ maxReceiveCount: 3, appliers: failing });
    const { key, message, queued: event } = await queued('pi_log_retry');
    const { log, lines } = recordingLog();

    await expect(processMessage(message, 2, { ...h.processorDeps, log })).rejects.toThrow('the CRM is down');
    expect(lines).toEqual([
      {
        level: 'error',
        message: 'processing failed; SQS will redeliver',
        details: {
          key,
          eventId: event.eventId,
          eventType: 'payment_intent.succeeded',
          receiveCount: 2,
          maxReceiveCount: 3,
          error: 'Error: the CRM is down',
        },
      },
    ]);
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Processing,
      lastError: 'Error: the CRM is down',
    });
  });

  it('says the message goes to the DLQ on the last attempt, and the claim is FAILED', async () => {
    h = await createPipelineHarness({ maxReceiveCount: 3, appliers: failing });
    const { key, message } = await queued('pi_log_last');
    const { log, lines } = recordingLog();

    await expect(processMessage(message, 3, { ...h.processorDeps, log })).rejects.toThrow('the CRM is down');
    expect(lines.map(({ level, message }) => ({ level, message }))).toEqual([
      { level: 'error', message: 'processing failed for the last time; the message goes to the DLQ' },
    ]);
    expect(lines[0]?.details).toMatchObject({ key, receiveCount: 3, maxReceiveCount: 3 });
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Failed,
      lastError: 'Error: the CRM is down',
    });
  });

  it('says a message that can never be processed is FAILED at once, on its first attempt', async () => {
    h = await createPipelineHarness({ maxReceiveCount: 3 });
    const { key, queued: event } = await queued('pi_log_poison');
    await h.drainQueue();
    // The same event with a body no Stripe reader accepts (the receiver would not have queued it).
    const poison = JSON.stringify({ ...event, key: `${key}-poison`, body: '[1, 2]' });
    const { log, lines } = recordingLog();

    await expect(processMessage(poison, 1, { ...h.processorDeps, log })).rejects.toThrow(
      'the Stripe payload is not a JSON object the receiver would accept',
    );
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'error',
        message: 'the message can never be processed; its claim is FAILED and the message goes to the DLQ',
      }),
    ]);
    expect(await h.receiver.claim(`${key}-poison`)).toMatchObject({
      status: ClaimStatus.Failed,
      lastError: expect.stringMatching(/^PoisonMessageError: /),
    });
  });

  it('warns when the failure cannot be written to the claim, and still fails the attempt with its own error', async () => {
    h = await createPipelineHarness({ maxReceiveCount: 3, appliers: failing });
    const { key, message } = await queued('pi_log_unrecorded');
    const { log, lines } = recordingLog();

    let updates = 0;
    const attempt = withEachCommand(
      h.receiver.dynamo,
      (name) => {
        // The first update takes the processing claim; the second would record the failure.
        if (name === 'UpdateItemCommand' && ++updates === 2) throw new Error('throttled');
      },
      () => processMessage(message, 1, { ...h.processorDeps, log }),
    );
    await expect(attempt).rejects.toThrow('the CRM is down');
    expect(lines.map(({ level, message }) => `${level}: ${message}`)).toEqual([
      'warn: could not record the failure on the claim',
      'error: processing failed; SQS will redeliver',
    ]);
    expect(lines[0]?.details).toEqual({ key, error: 'Error: throttled' });
    expect((await h.receiver.claim(key))?.lastError).toBeUndefined();
  });

  it('names an effect the applier planned but does not define, on the claim and in the log', async () => {
    const undefinedEffect: ApplierRegistry = {
      stripe: { '*': { plan: async () => ({ effects: ['notify'], outcome: 'applied' }) } },
    };
    h = await createPipelineHarness({ maxReceiveCount: 3, appliers: undefinedEffect });
    const { key, message } = await queued('pi_log_no_effect');
    const { log, lines } = recordingLog();

    const expected = 'applier for payment_intent.succeeded planned effect "notify" but defines none';
    await expect(processMessage(message, 1, { ...h.processorDeps, log })).rejects.toThrow(expected);
    expect(lines[0]?.details).toMatchObject({ key, error: `Error: ${expected}` });
    expect((await h.receiver.claim(key))?.lastError).toBe(`Error: ${expected}`);
  });
});
