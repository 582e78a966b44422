import { afterEach, beforeEach, expect, inject, it } from 'vitest';
import { defineApplier, planRowWrite } from '../../lambdas/processor/sdk/index.js';
import {
  createTestProcessor,
  recordingAdapter,
  signedDelivery,
  type TestProcessor,
} from '../../lambdas/testing/index.js';

type Subscription = {
  id: string;
  object: 'event';
  type: 'customer.subscription.updated';
  created: number;
  data: { object: { id: string; customer: string; status: string } };
};
type App = {
  events: { stripe: { 'customer.subscription.updated': Subscription } };
  tables: 'subscriptions';
  adapters: 'crm';
};

// The applier under test: your processor module exports it to createProcessor.
const subscriptionUpdated = defineApplier<App, 'stripe', 'customer.subscription.updated'>({
  async plan(event, context) {
    const { customer, status } = event.payload.data.object;
    const plan = await planRowWrite(context, {
      table: 'subscriptions',
      pk: customer,
      order: { at: event.payload.created, rank: 0, eventId: event.eventId },
      attributes: { status },
    });
    return plan.writes ? { ...plan, effects: ['notifyCrm'] } : plan;
  },
  effects: {
    notifyCrm: {
      adapter: 'crm',
      run: async (event, { adapters, idempotencyKey, signal }) => {
        const { customer, status } = event.payload.data.object;
        await adapters.crm?.call({ customer, status }, idempotencyKey, { signal });
      },
    },
  },
});

const crm = recordingAdapter({ honoursIdempotencyKey: true });
let processor: TestProcessor<App>;

beforeEach(async () => {
  crm.reset();
  processor = await createTestProcessor<App>({
    appliers: { stripe: { 'customer.subscription.updated': subscriptionUpdated } },
    adapters: { crm },
    tables: ['subscriptions'],
    dynamodb: { endpoint: inject('dynamoDbEndpoint') },
  });
});
afterEach(() => processor.stop());

/** A Stripe event, as Stripe would send it (only the fields the applier reads). */
const updated = (status: string, created: number): Subscription => ({
  id: `evt_${status}_${created}`,
  object: 'event',
  type: 'customer.subscription.updated',
  created,
  data: { object: { id: 'sub_1', customer: 'cus_1', status } },
});

it('keeps the latest status per customer and tells the CRM once', async () => {
  const result = await processor.process(
    signedDelivery('stripe', { body: updated('active', 1_700_000_100) }),
  );
  expect(result).toMatchObject({ kind: 'done', outcome: 'applied' });
  expect(await processor.row('subscriptions', 'cus_1')).toMatchObject({ status: 'active' });
  expect(crm.calls).toEqual([
    {
      body: { customer: 'cus_1', status: 'active' },
      idempotencyKey: `${result.key}:notifyCrm`,
      performed: true,
    },
  ]);

  // Stripe retries the same event: nothing is applied or called again.
  const retry = await processor.process(signedDelivery('stripe', { body: updated('active', 1_700_000_100) }));
  expect(retry).toMatchObject({ kind: 'already-done' });

  // An older event arrives late: stale, the row keeps the newer status.
  const late = await processor.process(
    signedDelivery('stripe', { body: updated('trialing', 1_700_000_000) }),
  );
  expect(late).toMatchObject({ kind: 'done', outcome: 'stale' });
  expect(await processor.row('subscriptions', 'cus_1')).toMatchObject({ status: 'active' });
  expect(crm.calls).toHaveLength(1);
});
