// test/invoice-paid.test.ts: the applier against the real processor (in memory; { endpoint } for DynamoDB Local)
import { createTestProcessor, recordingAdapter, signedDelivery } from 'idempotent-webhook-receiver/testing';
import { expect, it } from 'vitest';
import type { App } from '../src/app-types';
import { appliers } from '../src/appliers';

const invoice = (id: string, created: number) => ({
  id,
  object: 'event',
  type: 'invoice.paid',
  created,
  data: { object: { id: `in_${id}`, object: 'invoice', customer: 'cus_1', amount_paid: 2000 } },
});

it('records the paid invoice once, tells the CRM once, and ignores an older one', async () => {
  const crm = recordingAdapter();
  const processor = await createTestProcessor<App>({
    appliers,
    adapters: { crm },
    tables: ['subscriptions'],
    dynamodb: 'memory',
  });
  const paid = signedDelivery('stripe', { body: invoice('evt_2', 1_800_000_100) });

  expect(await processor.process(paid)).toMatchObject({ kind: 'done', outcome: 'applied' });
  expect(await processor.process(paid)).toMatchObject({ kind: 'already-done' });
  const older = signedDelivery('stripe', { body: invoice('evt_1', 1_800_000_000) });
  expect(await processor.process(older)).toMatchObject({ kind: 'done', outcome: 'stale' });

  expect(await processor.row('subscriptions', 'stripe:platform:cus_1')).toMatchObject({
    status: 'paid',
    lastInvoice: 'in_evt_2',
  });
  expect(crm.calls).toEqual([
    expect.objectContaining({
      body: { invoice: 'in_evt_2', paid: 2000 },
      idempotencyKey: 'stripe:platform:evt_2:tellCrm',
    }),
  ]);
  await processor.stop();
});
