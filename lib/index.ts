/**
 * The package's public API (`import { IdempotentWebhookReceiver } from 'idempotent-webhook-receiver'`):
 * the construct with its props and errors, and the stack (or `webhookOutputs` for a stack of your
 * own) that adds the outputs the `webhooks` CLI reads (`webhooks ... --stack NAME`). The processor SDK is its own entry point,
 * `idempotent-webhook-receiver/processor`, so a Lambda bundle never pulls in aws-cdk-lib.
 *
 * Everything else under lib/ is internal and may change without notice.
 */

export {
  type HmacProviderConfig,
  HmacProviderConfigError,
  hmacProviderConfigSchema,
} from '../lambdas/providers/hmac.js';
export type { BuiltInProviderId, ProviderId } from '../lambdas/providers/types.js';

import { BUILT_IN_PROVIDERS } from '../lambdas/providers/built-in.js';

/** The built-in providers' route ids (a stack adds its `hmacProviders` after them). */
export const PROVIDER_IDS: readonly string[] = BUILT_IN_PROVIDERS.map((provider) => provider.id);
export type {
  BuiltInEvents,
  EventsByType,
  WebhookAppTypes,
  WithProviders,
} from '../lambdas/processor/types.js';
export { EffectHeader } from './constructs/event-processor.js';
export { FunctionCodeError } from './constructs/webhook-function.js';
export {
  type DuplicateRatioAlarmOptions,
  IdempotentWebhookReceiver,
  type IdempotentWebhookReceiverProps,
  IdempotentWebhookReceiverPropsError,
  type KeyRuleKind,
  type ProviderKeyRules,
  type ProviderOptions,
  type WebhookAlarmThresholds,
  type WebhookEffect,
} from './idempotent-webhook-receiver.js';
export {
  IdempotentWebhooksStack,
  type IdempotentWebhooksStackProps,
  webhookOutputs,
} from './webhook-stack.js';
