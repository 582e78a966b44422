/**
 * The processor SDK as a user's module meets it: appliers typed by the app (a misspelt provider,
 * event type, table or adapter does not compile: each `@ts-expect-error` below fails `tsc`, part of
 * `npm test`, if the line compiles), payloads typed by the provider's own SDK types, and adapters of
 * the app's own checked when the processor starts.
 */
import type { WebhookEventMap } from '@octokit/webhooks-types';
import type Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { resolveApplier } from '../../lambdas/processor/core.js';
import { processorDepsFromEnvironment } from '../../lambdas/processor/runtime.js';
import {
  type AppApplier,
  type ApplierRegistry,
  ConfigError,
  createProcessor,
  defineApplier,
  type EffectAdapter,
  type EventsByType,
  ignoreEvent,
  PermanentEventError,
  type RuntimeApplierRegistry,
  type WithProviders,
} from '../../lambdas/processor/sdk/index.js';

type App = {
  events: { stripe: EventsByType<Stripe.Event>; github: WebhookEventMap };
  tables: 'subscriptions' | 'repos';
  adapters: 'crm';
};

const invoicePaid = defineApplier<App, 'stripe', 'invoice.paid'>({
  async plan(event, context) {
    // The payload is Stripe's own type: `data.object` is a Stripe.Invoice.
    const invoice: Stripe.Invoice = event.payload.data.object;
    const customer = typeof invoice.customer === 'string' ? invoice.customer : (invoice.customer?.id ?? '');
    const order = { at: event.payload.created, rank: 0, eventId: event.eventId };
    // @ts-expect-error: 'subscription' is not one of the app's tables
    await context.read('subscription', customer, order);
    // @ts-expect-error: 'crn' is not one of the app's adapters
    context.has('crn');
    return {
      writes: [{ table: 'subscriptions', pk: customer, order, attributes: { paid: invoice.amount_paid } }],
      effects: ['sync'],
    };
  },
  effects: {
    sync: {
      adapter: 'crm',
      run: async (event, context) =>
        context.adapters.crm?.call({ invoice: event.payload.data.object.id }, context.idempotencyKey),
    },
  },
});

const push: AppApplier<App, 'github', 'push'> = {
  async plan(event) {
    // GitHub's push payload, from @octokit/webhooks-types.
    const ref: string = event.payload.ref;
    return ref ? { outcome: 'noop' } : { outcome: 'noop' };
  },
};

const appliers: ApplierRegistry<App> = {
  stripe: { 'invoice.paid': invoicePaid, 'charge.*': ignoreEvent },
  github: { push },
};

describe('typed appliers', () => {
  it('rejects a misspelt provider or event type at compile time, and finds the right applier at run time', () => {
    const typos: ApplierRegistry<App> = {
      stripe: {
        // @ts-expect-error: Stripe has no 'invoice.payed' event
        'invoice.payed': invoicePaid,
      },
    };
    const providerTypo: ApplierRegistry<App> = {
      // @ts-expect-error: 'strpie' is not one of the app's providers
      strpie: { 'invoice.paid': invoicePaid },
    };
    expect(Object.keys(providerTypo)).toEqual(['strpie']);
    const registry = appliers as RuntimeApplierRegistry;
    expect(resolveApplier(registry, 'stripe', 'invoice.paid')).toBe(invoicePaid);
    expect(resolveApplier(registry, 'stripe', 'charge.refunded')).toBe(ignoreEvent);
    expect(resolveApplier(registry, 'stripe', 'invoice.payed')).toBeUndefined();
    expect(resolveApplier(typos as RuntimeApplierRegistry, 'stripe', 'invoice.paid')).toBeUndefined();
  });

  it('types the built-in providers by default, and configured ones through WithProviders', () => {
    // @ts-expect-error: without the app's types, only built-in providers have appliers
    const unknownProvider: ApplierRegistry = { onfido: { 'check.*': ignoreEvent } };
    const configured: ApplierRegistry<{ events: WithProviders<'onfido'> }> = {
      onfido: { 'check.*': ignoreEvent },
      stripe: { 'any.type': ignoreEvent },
    };
    expect(Object.keys(configured)).toEqual(['onfido', 'stripe']);
    expect(Object.keys(unknownProvider)).toEqual(['onfido']);
  });

  it('completes an ignored event as noop, not unhandled', async () => {
    const plan = await ignoreEvent.plan();
    expect(plan).toEqual({ outcome: 'noop' });
  });

  it('builds a handler from a typed registry', () => {
    expect(typeof createProcessor<App>({ appliers })).toBe('function');
    expect(new PermanentEventError('x').name).toBe('PermanentEventError');
  });
});

describe("the app's own adapters", () => {
  const env = {
    CLAIMS_TABLE_NAME: 'claims',
    PROCESSING_LEASE_SECONDS: '60',
    EFFECTS: JSON.stringify({ erp: { url: 'https://erp.example.com/hooks' }, mailer: {} }),
    AWS_REGION: 'us-east-1',
  };
  const crm: EffectAdapter = {
    honoursIdempotencyKey: true,
    timeoutMs: 5_000,
    call: async () => ({ id: 'c_1' }),
  };

  it('are the processor adapters under their names, besides the configured ones', () => {
    const deps = processorDepsFromEnvironment(env, {}, { crm, mailer: crm });
    expect(deps.effects?.crm).toBe(crm);
    // `mailer` is declared by the construct without a URL: the app's own adapter is its home.
    expect(deps.effects?.mailer).toBe(crm);
    expect(deps.effects?.erp).toBeDefined();
  });

  it.each([
    [{ erp: crm }, /adapters\.erp is also configured with a URL by the construct's effects prop/],
    [{ Crm: crm }, /effect adapter name "Crm" must start with a lower-case letter/],
    [
      { crm: { call: crm.call } as unknown as EffectAdapter },
      /adapters\.crm must have call\(.*\) and honoursIdempotencyKey/,
    ],
    [
      { crm: { ...crm, timeoutMs: 59_500 } },
      /adapters\.crm: timeoutMs 59500 must be shorter than PROCESSING_LEASE_SECONDS \(60 s\)/,
    ],
  ])('refuses %o when the processor starts', (adapters, message) => {
    expect(() => processorDepsFromEnvironment(env, {}, adapters)).toThrow(message);
    expect(() => processorDepsFromEnvironment(env, {}, adapters)).toThrow(ConfigError);
  });
});
