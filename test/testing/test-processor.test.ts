/**
 * The testing entry point as an app's own test uses it: an applier keeping the latest subscription
 * status per customer, run by `createTestProcessor` against DynamoDB Local (the suite's), with the
 * real plan/commit semantics: duplicates, stale events, a row changed under a plan, an effect's
 * idempotency key, failing an event now, effects in doubt.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import {
  type AppApplier,
  defineApplier,
  PermanentEventError,
  planRowWrite,
} from '../../lambdas/processor/sdk/index.js';
import {
  createTestProcessor,
  processingEvent,
  type RecordingAdapter,
  recordingAdapter,
  signedDelivery,
  type TestProcessor,
} from '../../lambdas/testing/index.js';

interface SubscriptionEvent {
  readonly id: string;
  readonly object: 'event';
  readonly type: string;
  readonly created: number;
  readonly livemode: boolean;
  readonly data: {
    readonly object: { readonly id: string; readonly customer: string; readonly status: string };
  };
}

type App = {
  events: {
    stripe: {
      'customer.subscription.created': SubscriptionEvent;
      'customer.subscription.updated': SubscriptionEvent;
      'customer.subscription.deleted': SubscriptionEvent;
    };
  };
  tables: 'subscriptions';
  adapters: 'crm';
};

const hex = () => randomBytes(6).toString('hex');

/** A Stripe subscription event (the fields the applier reads), `created` epoch seconds. */
function subscriptionEvent(
  customer: string,
  status: string,
  created: number,
  type = 'customer.subscription.updated',
): SubscriptionEvent {
  return {
    id: `evt_${hex()}`,
    object: 'event',
    type,
    created,
    livemode: false,
    data: { object: { id: `sub_${hex()}`, customer, status } },
  };
}

/** The applier under test: the latest status per customer, and the CRM told once per applied event. */
const subscriptionStatus = defineApplier<App, 'stripe'>({
  async plan(event, context) {
    const subscription = event.payload.data.object;
    const plan = await planRowWrite(context, {
      table: 'subscriptions',
      pk: subscription.customer,
      order: { at: event.payload.created, rank: 0, eventId: event.eventId },
      attributes: { status: subscription.status, subscription: subscription.id },
    });
    return plan.writes ? { ...plan, effects: ['notifyCrm'] } : plan;
  },
  effects: {
    notifyCrm: {
      adapter: 'crm',
      run: async (event, context) => {
        const { customer, status } = event.payload.data.object;
        await context.adapters.crm?.call({ customer, status }, context.idempotencyKey, {
          signal: context.signal,
        });
      },
    },
  },
});

let processor: TestProcessor<App> | undefined;
/** Every scenario runs against DynamoDB Local and in memory: the two must agree. */
let mode: 'dynamodb-local' | 'memory' = 'dynamodb-local';
afterEach(async () => {
  await processor?.stop();
  processor = undefined;
});

async function start(
  appliers: Parameters<typeof createTestProcessor<App>>[0]['appliers'] = {
    stripe: { 'customer.subscription.*': subscriptionStatus },
  },
  crm: RecordingAdapter = recordingAdapter({ honoursIdempotencyKey: true }),
): Promise<{ processor: TestProcessor<App>; crm: RecordingAdapter }> {
  processor = await createTestProcessor<App>({
    appliers,
    adapters: { crm },
    tables: ['subscriptions'],
    dynamodb: mode === 'memory' ? 'memory' : { endpoint: inject('dynamoDbEndpoint') },
  });
  return { processor, crm };
}

describe.each(['dynamodb-local', 'memory'] as const)('createTestProcessor (%s)', (dynamodb) => {
  beforeEach(() => {
    mode = dynamodb;
  });

  it('applies an event: the row, the DONE claim, the effect called once with <claim key>:<effect>', async () => {
    const { processor, crm } = await start();
    const customer = `cus_${hex()}`;
    const event = subscriptionEvent(customer, 'active', 1_700_000_000);
    const result = await processor.process(signedDelivery('stripe', { body: event }));

    expect(result).toMatchObject({ kind: 'done', outcome: 'applied', unresumed: [] });
    expect(result.key).toBe(`stripe:platform:${event.id}`);
    expect(await processor.row('subscriptions', customer)).toMatchObject({
      status: 'active',
      lastEventId: event.id,
      lastEventCreated: 1_700_000_000,
      lastEventEffects: ['notifyCrm'],
    });
    expect(await processor.claim(result.key)).toMatchObject({
      status: 'DONE',
      outcome: 'applied',
      lastCompletedStep: 'notifyCrm',
      plannedEffects: ['notifyCrm'],
      writtenRows: [`subscriptions:${customer}`],
    });
    expect(crm.calls).toEqual([
      { body: { customer, status: 'active' }, idempotencyKey: `${result.key}:notifyCrm`, performed: true },
    ]);
  });

  it('answers a duplicate already-done, and applies and calls nothing again', async () => {
    const { processor, crm } = await start();
    const customer = `cus_${hex()}`;
    const delivery = signedDelivery('stripe', { body: subscriptionEvent(customer, 'active', 1_700_000_000) });
    const first = await processor.process(delivery);
    const before = await processor.row('subscriptions', customer);

    // The provider's retry: a new signature over the same event.
    const again = await processor.process(signedDelivery('stripe', { body: delivery.body }));
    expect(again).toEqual({ kind: 'already-done', key: first.key, event: expect.any(Object) });
    expect(await processor.row('subscriptions', customer)).toEqual(before);
    expect(crm.calls).toHaveLength(1);
  });

  it('completes an event older than the row as stale, the row unchanged and no effect called', async () => {
    const { processor, crm } = await start();
    const customer = `cus_${hex()}`;
    await processor.process(
      signedDelivery('stripe', { body: subscriptionEvent(customer, 'canceled', 1_700_000_100) }),
    );
    const newer = await processor.row('subscriptions', customer);

    const older = await processor.process(
      signedDelivery('stripe', { body: subscriptionEvent(customer, 'active', 1_700_000_000) }),
    );
    expect(older).toMatchObject({ kind: 'done', outcome: 'stale' });
    expect(await processor.claim(older.key)).toMatchObject({ status: 'DONE', outcome: 'stale' });
    expect(await processor.row('subscriptions', customer)).toEqual(newer);
    expect(crm.calls).toHaveLength(1);
  });

  it('plans again when another event changed the row between the plan and the commit', async () => {
    const customer = `cus_${hex()}`;
    const first = subscriptionEvent(customer, 'active', 1_700_000_100);
    // Older, so the stale-order guard alone would let `first` overwrite it: only the check that the
    // row is still as the plan read it catches the change.
    const interloper = subscriptionEvent(customer, 'incomplete', 1_700_000_000);
    const plans: string[] = [];
    let interloperResult: Awaited<ReturnType<TestProcessor<App>['process']>> | undefined;
    const racing: AppApplier<App, 'stripe'> = {
      ...subscriptionStatus,
      async plan(event, context) {
        plans.push(event.eventId);
        const plan = await subscriptionStatus.plan(event, context);
        // Between this plan's read and its commit, a concurrent worker commits another event.
        if (event.eventId === first.id && interloperResult === undefined)
          interloperResult = await processor?.process(signedDelivery('stripe', { body: interloper }));
        return plan;
      },
    };
    const { processor: p, crm } = await start({ stripe: { 'customer.subscription.*': racing } });

    const result = await p.process(signedDelivery('stripe', { body: first }));
    expect(interloperResult).toMatchObject({ kind: 'done', outcome: 'applied' });
    expect(plans).toEqual([first.id, interloper.id, first.id]);
    expect(result).toMatchObject({ kind: 'done', outcome: 'applied' });
    expect(await p.row('subscriptions', customer)).toMatchObject({ status: 'active', lastEventId: first.id });
    expect(crm.calls.map((call) => call.body.status)).toEqual(['incomplete', 'active']);
  });

  it('fails an event whose applier throws PermanentEventError now: FAILED claim, message to the DLQ', async () => {
    const { processor } = await start({
      stripe: {
        'customer.subscription.*': {
          async plan(event) {
            throw new PermanentEventError(`customer ${event.payload.data.object.customer} was deleted`);
          },
        },
      },
    });
    const event = subscriptionEvent(`cus_${hex()}`, 'active', 1_700_000_000);
    const result = await processor.process(signedDelivery('stripe', { body: event }));
    expect(result).toMatchObject({
      kind: 'failed',
      reason: `PermanentEventError: customer ${event.data.object.customer} was deleted`,
    });
    expect(await processor.claim(result.key)).toMatchObject({ status: 'FAILED', processingAttempts: 1 });
    expect(processor.deadLetters).toHaveLength(1);
    expect(JSON.parse(processor.deadLetters[0] ?? '{}')).toMatchObject({
      key: result.key,
      eventId: event.id,
    });
  });

  it('retries an effect that honours the key after a lost answer, with the same key', async () => {
    const { processor, crm } = await start();
    crm.failNext('unknown');
    const delivery = signedDelivery('stripe', {
      body: subscriptionEvent(`cus_${hex()}`, 'active', 1_700_000_000),
    });
    await expect(processor.process(delivery)).rejects.toThrow(/lost the answer/);
    const message = await processor.message(delivery);
    expect(await processor.claim(message.key)).toMatchObject({
      status: 'PROCESSING',
      lastCompletedStep: 'state',
    });

    // SQS's redelivery: the state is committed, only the effect runs again.
    const retried = await processor.process(message, { receiveCount: 2 });
    expect(retried).toMatchObject({ kind: 'done', outcome: 'applied' });
    expect(crm.calls.map((call) => call.idempotencyKey)).toEqual([
      `${message.key}:notifyCrm`,
      `${message.key}:notifyCrm`,
    ]);
    expect(crm.performed).toHaveLength(1);
  });

  it('leaves an effect that may act twice in doubt after a lost answer, never calling it again', async () => {
    const { processor, crm } = await start(undefined, recordingAdapter({ honoursIdempotencyKey: false }));
    crm.failNext('unknown');
    const result = await processor.process(
      signedDelivery('stripe', { body: subscriptionEvent(`cus_${hex()}`, 'active', 1_700_000_000) }),
    );
    expect(result).toMatchObject({ kind: 'done', outcome: 'applied', unresumed: ['notifyCrm'] });
    expect(await processor.claim(result.key)).toMatchObject({
      status: 'DONE',
      unresumedEffects: ['notifyCrm'],
    });
    expect(crm.calls).toHaveLength(1);
  });

  it('retries any other error until the last receive, which fails the claim', async () => {
    const { processor } = await start({
      stripe: {
        'customer.subscription.*': {
          async plan() {
            throw new Error('a bug, fixed by the next deploy');
          },
        },
      },
    });
    const message = await processor.message(
      signedDelivery('stripe', { body: subscriptionEvent(`cus_${hex()}`, 'active', 1_700_000_000) }),
    );
    await expect(processor.process(message)).rejects.toThrow('a bug, fixed by the next deploy');
    expect(await processor.claim(message.key)).toMatchObject({
      status: 'PROCESSING',
      lastError: 'Error: a bug, fixed by the next deploy',
    });
    await expect(processor.process(message, { receiveCount: 3 })).rejects.toThrow();
    expect(await processor.claim(message.key)).toMatchObject({ status: 'FAILED', processingAttempts: 2 });
    expect(processor.deadLetters).toEqual([]);
  });

  it('plans against a row put before the test', async () => {
    const { processor } = await start();
    const customer = `cus_${hex()}`;
    await processor.putRow('subscriptions', {
      pk: customer,
      status: 'canceled',
      lastEventId: 'evt_earlier',
      lastEventCreated: 1_700_000_500,
      lastEventRank: 0,
    });
    const result = await processor.process(
      signedDelivery('stripe', { body: subscriptionEvent(customer, 'active', 1_700_000_000) }),
    );
    expect(result).toMatchObject({ kind: 'done', outcome: 'stale' });
    expect(await processor.rows('subscriptions')).toEqual([expect.objectContaining({ status: 'canceled' })]);
  });

  it('completes an event type with no applier as unhandled', async () => {
    const { processor } = await start();
    const result = await processor.process(signedDelivery('stripe', { type: 'charge.refunded' }));
    expect(result).toMatchObject({ kind: 'done', outcome: 'unhandled' });
  });
});

describe('processingEvent', () => {
  it('is the event plan sees, and process takes it', async () => {
    const customer = `cus_${hex()}`;
    const body = subscriptionEvent(customer, 'trialing', 1_700_000_000);
    const event = await processingEvent<SubscriptionEvent>('stripe', body);
    expect(event).toMatchObject({
      v: 1,
      provider: 'stripe',
      key: `stripe:platform:${body.id}`,
      account: 'platform',
      eventId: body.id,
      eventType: 'customer.subscription.updated',
      occurredAt: 1_700_000_000,
      objectId: body.data.object.id,
      payload: body,
    });

    const { processor } = await start();
    expect(await processor.process(event)).toMatchObject({
      kind: 'done',
      outcome: 'applied',
      key: event.key,
    });
    expect(await processor.row('subscriptions', customer)).toMatchObject({ status: 'trialing' });
    // The processor reads the payload from the body: an edited payload would be ignored, so it is refused.
    await expect(
      processor.process({ ...event, payload: { ...event.payload, type: 'other' } }),
    ).rejects.toThrow(/payload is not what its body says/);
  });
});

/** Compile-time only (never called): the app's types hold for the test processor as for createProcessor. */
async function typeChecks(endpoint: string): Promise<void> {
  const typed = await createTestProcessor<App>({
    appliers: {
      stripe: { 'customer.subscription.updated': subscriptionStatus },
      // @ts-expect-error: not a provider of the app's event map
      strpie: {},
    },
    // @ts-expect-error: not a table of the app
    tables: ['subscription'],
    dynamodb: { endpoint },
  });
  // @ts-expect-error: not a table of the app
  await typed.row('invoices', 'x');
  await createTestProcessor<App>({
    appliers: {},
    // @ts-expect-error: not an adapter of the app
    adapters: { erp: recordingAdapter() },
    tables: ['subscriptions'],
    dynamodb: { endpoint },
  });
}

it('is typed by the app (checked by tsc)', () => {
  expect(typeof typeChecks).toBe('function');
});
