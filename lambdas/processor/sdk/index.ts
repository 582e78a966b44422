/**
 * The processor SDK: what a module of your own needs to plug appliers (and adapters of its own) into
 * the processor Lambda, with the types and the errors it may meet.
 *
 *   import { createProcessor } from 'idempotent-webhook-receiver/processor';
 *   export const handler = createProcessor({ appliers: { stripe: { 'invoice.paid': invoicePaid } } });
 *
 * Point the construct's `processorEntry` at that module. Events with no applier are completed as
 * `unhandled` (docs/processor.md).
 */

import {
  createProcessorHandler,
  initFailureRecorder,
  type ProcessorHandler,
  processorDepsFromEnvironment,
} from '../runtime.js';
import type {
  AdaptersOf,
  AppApplier,
  ApplierRegistry,
  EffectAdapter,
  EventsOf,
  Plan,
  RuntimeApplierRegistry,
  WebhookAppTypes,
} from '../types.js';

export interface CreateProcessorOptions<App extends WebhookAppTypes = WebhookAppTypes> {
  /**
   * Appliers per provider and event type (exact type or `prefix*`), typed by the app
   * (`createProcessor<App>`: docs/processor.md, "Types"). @default none: every event is unhandled
   */
  readonly appliers?: ApplierRegistry<App>;
  /**
   * Effect adapters of your own, by name (an SDK client wrapped in `call`): effects name them as
   * they name the construct's `effects` (`{ adapter: 'crm', run }`). A name may not also have a URL
   * in the construct's `effects`. Declare `honoursIdempotencyKey` truthfully: only then is a call
   * repeated when the processor cannot tell whether it ran, and throw `EffectError` with
   * `performed: 'no'` when the service certainly did not act (docs/processor.md, "Your own adapters").
   * @default none
   */
  readonly adapters?: { readonly [Name in AdaptersOf<App>]?: EffectAdapter };
}

/** The processor Lambda's handler, wired from its environment (the construct writes it), with your appliers. */
export function createProcessor<App extends WebhookAppTypes = WebhookAppTypes>(
  options: CreateProcessorOptions<App> = {},
): ProcessorHandler {
  // The compiler checked the registry against the app's types; the processor looks appliers up by
  // the strings the queue message carries.
  const appliers = (options.appliers ?? {}) as RuntimeApplierRegistry;
  const adapters = Object.fromEntries(
    Object.entries(options.adapters ?? {}).filter(([, adapter]) => adapter !== undefined),
  ) as Record<string, EffectAdapter>;
  return createProcessorHandler({
    deps: () => processorDepsFromEnvironment(process.env, appliers, adapters),
    onInitFailure: initFailureRecorder(),
  });
}

/** An applier, its types inferred: `defineApplier<App, 'stripe', 'invoice.paid'>({ plan(event, context) {...} })`. */
export function defineApplier<
  App extends WebhookAppTypes,
  Provider extends keyof EventsOf<App> & string,
  Type extends keyof EventsOf<App>[Provider] & string = keyof EventsOf<App>[Provider] & string,
>(applier: AppApplier<App, Provider, Type>): AppApplier<App, Provider, Type> {
  return applier;
}

export { shopifyResourceId } from '../../providers/shopify.js';
export { joinKey } from '../../shared/keys.js';
export { ConfigError } from '../../shared/settings.js';
export { ClaimBusyError, EffectDeadlineError, PoisonMessageError } from '../core.js';
export { EffectError, type EffectPerformed, type HttpEffectOptions } from '../effects.js';
export { isPermanentFailure, PermanentEventError } from '../failures.js';
export type { ProcessorHandler } from '../runtime.js';
export type { InferSchemaOutput, StandardSchemaV1 } from '../standard-schema.js';
/**
 * The applier for an event type the endpoint receives on purpose and does nothing with: it completes
 * the event as `noop`, so it is not counted as unhandled (the UnhandledEvents alarm is for types
 * that have no applier by mistake). `{ stripe: { 'charge.*': ignoreEvent } }`.
 */
export const ignoreEvent: { plan(): Promise<Plan<never>> } = {
  async plan() {
    return { outcome: 'noop' };
  },
};

export { UnknownTableError } from '../state-store.js';
export type * from '../types.js';
export { DEFAULT_GUARD, guardAttributes, isNewer } from './order.js';
export { id, isoSeconds, type Json, num, obj, str } from './payload.js';
export { planRowWrite } from './plan.js';
export { amountRank, composeRank, progressionRank, type RankPart } from './tie-break.js';
