/**
 * Failing an event now (lambdas/processor/failures.ts), against DynamoDB Local and the SQS emulator:
 * an applier, its schema or an adapter's permanent answer says the event can never succeed, and the
 * processor marks the claim FAILED and moves the message to the DLQ on that same receive, instead of
 * failing it `maxReceiveCount` times. A redrive after the fix resumes from the claim's markers.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EXAMPLE_APPLIERS } from '../../examples/payments/appliers/index.js';
import { HttpEffect } from '../../lambdas/processor/effects.js';
import { PermanentEventError, planRowWrite } from '../../lambdas/processor/sdk/index.js';
import type { Applier, RuntimeApplierRegistry } from '../../lambdas/processor/types.js';
import { ClaimStatus } from '../../lambdas/store/claim.js';
import { receiveAll } from '../helpers/aws.js';
import { stripeCustomerEvent } from '../helpers/events.js';
import {
  createPipelineHarness,
  type PipelineHarness,
  type PipelineOptions,
} from '../helpers/pipeline-harness.js';
import { stripeHeaders } from '../helpers/signing.js';

let h: PipelineHarness;
afterEach(async () => {
  await h?.stop();
});

async function start(customer: Applier, options: PipelineOptions = {}): Promise<void> {
  const appliers: RuntimeApplierRegistry = { ...EXAMPLE_APPLIERS, stripe: { 'customer.*': customer } };
  h = await createPipelineHarness({ maxReceiveCount: 3, ...options, appliers });
}

async function deliver(event: object = stripeCustomerEvent()): Promise<string> {
  const body = JSON.stringify(event);
  const result = await h.receiver.deliver('stripe', body, stripeHeaders(body));
  expect(result.statusCode).toBe(200);
  return result.key ?? '';
}

/** Moves every DLQ message back to the event queue, as `webhooks dlq redrive` does. */
async function redrive(): Promise<number> {
  const messages = await receiveAll(h.receiver.sqs, h.dlqUrl);
  for (const message of messages) {
    await h.receiver.sqs.send(
      new SendMessageCommand({ QueueUrl: h.receiver.queueUrl, MessageBody: message.Body }),
    );
  }
  return messages.length;
}

/** The customer row an applier writes, keyed by the customer id. */
const customerRow = (payload: { data: { object: { id: string; email?: string } } }, eventId: string) => ({
  table: 'resources',
  pk: `stripe:customer:${payload.data.object.id}`,
  order: { at: 0, rank: 0, eventId },
  attributes: { email: payload.data.object.email ?? null },
});

describe('failing an event now', () => {
  it('moves an event whose applier throws PermanentEventError to the DLQ on its first receive', async () => {
    await start({
      plan: async () => {
        throw new PermanentEventError('customer cus_1 was deleted upstream');
      },
    });
    const event = stripeCustomerEvent();
    const key = await deliver(event);
    await h.drainQueue(20_000);

    const claim = await h.receiver.claim(key);
    expect(claim).toMatchObject({ status: ClaimStatus.Failed, processingAttempts: 1 });
    expect(claim?.lastError).toBe('PermanentEventError: customer cus_1 was deleted upstream');
    const dead = await receiveAll(h.receiver.sqs, h.dlqUrl);
    expect(dead).toHaveLength(1);
    // The message as the receiver queued it: a redrive reads it as any other.
    expect(JSON.parse(dead[0]?.Body ?? '{}')).toMatchObject({ key, eventId: event.id });
  });

  it('without a DLQ to move it to, fails the claim at once and leaves the message to the redrive policy', async () => {
    await start(
      {
        plan: async () => {
          throw new PermanentEventError('never');
        },
      },
      { deadLetters: false },
    );
    const key = await deliver();
    await h.drainQueue(20_000);
    // FAILED from the first attempt on; SQS delivered it maxReceiveCount times before its own move.
    expect(await h.receiver.claim(key)).toMatchObject({ status: ClaimStatus.Failed, processingAttempts: 3 });
    expect(await h.dlqMessages()).toBe(1);
  });

  it('retries any other error as before: the claim is released until the last receive', async () => {
    let attempts = 0;
    await start({
      plan: async () => {
        attempts++;
        throw new Error('a bug, fixed by the next deploy');
      },
    });
    const key = await deliver();
    await h.drainQueue(20_000);
    expect(attempts).toBe(3);
    expect(await h.receiver.claim(key)).toMatchObject({ status: ClaimStatus.Failed, processingAttempts: 3 });
  });

  it('moves it on the next receive when the worker stops between the FAILED mark and the move', async () => {
    await start(
      {
        plan: async () => {
          throw new PermanentEventError('never');
        },
      },
      { faultPoints: 'processor.failNow:1' },
    );
    const key = await deliver();
    await h.drainQueue(20_000);
    expect(await h.receiver.claim(key)).toMatchObject({ status: ClaimStatus.Failed, processingAttempts: 2 });
    expect(await h.dlqMessages()).toBe(1);
  });
});

describe("an applier's schema", () => {
  const Customer = z.object({
    data: z.object({
      object: z.object({
        id: z.string(),
        email: z.string().transform((email) => email.toLowerCase()),
      }),
    }),
  });
  const schemaApplier: Applier = {
    schema: Customer as Applier['schema'],
    plan: (event, context) =>
      planRowWrite(context, customerRow(event.payload as z.infer<typeof Customer>, event.eventId)),
  };

  it('hands plan the payload as the schema returns it', async () => {
    await start(schemaApplier);
    const event = stripeCustomerEvent();
    const payload = event.data.object as { id: string; email: string };
    payload.email = 'Jenny.Rosen@Example.com';
    const key = await deliver(event);
    await h.drainQueue(20_000);
    expect(await h.receiver.claim(key)).toMatchObject({ status: ClaimStatus.Done, outcome: 'applied' });
    expect(await h.row('resources', `stripe:customer:${payload.id}`)).toMatchObject({
      email: 'jenny.rosen@example.com',
    });
  });

  it('fails an event whose payload it rejects now, the issues in the reason', async () => {
    await start(schemaApplier);
    const event = stripeCustomerEvent();
    delete (event.data.object as { email?: string }).email;
    const key = await deliver(event);
    await h.drainQueue(20_000);
    const claim = await h.receiver.claim(key);
    expect(claim).toMatchObject({ status: ClaimStatus.Failed, processingAttempts: 1 });
    expect(claim?.lastError).toMatch(
      /^PermanentEventError: the customer.created payload does not match the applier's schema: data\.object\.email: /,
    );
    expect(await h.dlqMessages()).toBe(1);
  });
});

describe('a permanent answer from an effect', () => {
  it('fails the event now after its state committed, and a redrive after the fix runs only the effect', async () => {
    const crmCalls: string[] = [];
    let crm: HttpEffect | undefined;
    await start(
      {
        plan: async (event, context) => {
          const plan = await planRowWrite(
            context,
            customerRow(event.payload as { data: { object: { id: string } } }, event.eventId),
          );
          return { ...plan, effects: ['sync'] };
        },
        effects: {
          sync: {
            adapter: 'crm',
            run: async (event, context) => {
              crmCalls.push(event.eventId);
              await context.adapters.crm?.call({ customer: event.eventId }, context.idempotencyKey);
            },
          },
        },
      },
      {
        // The sink's URL is known once the harness runs: the adapter is built then.
        adapters: {
          crm: { honoursIdempotencyKey: true, call: (...args) => (crm as HttpEffect).call(...args) },
        },
      },
    );
    crm = new HttpEffect({
      name: 'crm',
      url: h.sink.urlOf('crm'),
      permanentStatuses: [422],
      honoursIdempotencyKey: true,
    });
    h.sink.declare('crm', true);
    h.sink.fault('crm', { kind: 'refuse', status: 422 });
    const event = stripeCustomerEvent();
    const key = await deliver(event);
    await h.drainQueue(20_000);

    const failed = await h.receiver.claim(key);
    expect(failed).toMatchObject({
      status: ClaimStatus.Failed,
      processingAttempts: 1,
      lastCompletedStep: 'state',
    });
    expect(failed?.lastError).toMatch(/^EffectError: crm answered 422 \(a permanent failure\)/);
    expect(crmCalls).toEqual([event.id]);
    expect(await h.row('resources', `stripe:customer:${event.data.object.id}`)).toBeDefined();

    // The service is fixed (the fault was for one call); the operator redrives the DLQ.
    expect(await redrive()).toBe(1);
    await h.drainQueue(20_000);
    expect(await h.receiver.claim(key)).toMatchObject({ status: ClaimStatus.Done, outcome: 'applied' });
    expect(crmCalls).toEqual([event.id, event.id]);
    expect(h.sink.entries().filter((entry) => entry.service === 'crm')).toHaveLength(1);
  });
});
