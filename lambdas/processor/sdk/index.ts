/**
 * The processor SDK: what a module of your own needs to plug appliers into the processor Lambda.
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
import type { ApplierRegistry } from '../types.js';

export interface CreateProcessorOptions {
  /** Appliers per provider and event type (exact type or `prefix*`). @default none: every event is unhandled */
  readonly appliers?: ApplierRegistry;
}

/** The processor Lambda's handler, wired from its environment (the construct writes it), with your appliers. */
export function createProcessor(options: CreateProcessorOptions = {}): ProcessorHandler {
  const appliers = options.appliers ?? {};
  return createProcessorHandler({
    deps: () => processorDepsFromEnvironment(process.env, appliers),
    onInitFailure: initFailureRecorder(),
  });
}

export { shopifyResourceId } from '../../providers/shopify.js';
export { joinKey } from '../../shared/keys.js';
export type { ProcessorHandler } from '../runtime.js';
export type * from '../types.js';
export { DEFAULT_GUARD, guardAttributes, isNewer } from './order.js';
export { id, isoSeconds, type Json, num, obj, str } from './payload.js';
export { planRowWrite } from './plan.js';
export { amountRank, composeRank, progressionRank, type RankPart } from './tie-break.js';
