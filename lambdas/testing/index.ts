/**
 * `idempotent-webhook-receiver/testing`: test your appliers against the processor as it is deployed.
 *
 *   import { createTestProcessor, recordingAdapter, signedDelivery } from 'idempotent-webhook-receiver/testing';
 *
 *   const crm = recordingAdapter({ honoursIdempotencyKey: true });
 *   const processor = await createTestProcessor<App>({
 *     appliers, adapters: { crm }, tables: ['subscriptions'], dynamodb: { endpoint },
 *   });
 *   const result = await processor.process(signedDelivery('stripe', { body: event }));
 *
 * The delivery is signed by the provider module's own signer and read by the real receiver core
 * (verify, extract, key rules, queue message); the processor is the real core with the real claims
 * and business-table code in DynamoDB Local (`startDynamoDbLocal()` for a `globalSetup`). Never
 * imported by the Lambda functions. docs/processor.md, "Testing your appliers".
 */

export type { ProcessorLog, ProcessResult } from '../processor/core.js';
export { EffectError } from '../processor/effects.js';
export { PermanentEventError } from '../processor/failures.js';
export type { ClaimRecord } from '../store/claim.js';
export type { ProcessingOutcome } from '../store/processing-claims.js';
export {
  type DeliveryInput,
  DeliveryRefusedError,
  processingEvent,
  queueMessage,
  type ReceiveOptions,
  type SignedDelivery,
  type SignedDeliveryOptions,
  signedDelivery,
  TEST_PUBLIC_BASE_URL,
} from './delivery.js';
export {
  checkDynamoDbLocal,
  type DynamoDbLocalOptions,
  DynamoDbLocalUnavailableError,
  type RunningDynamoDbLocal,
  startDynamoDbLocal,
} from './dynamodb-local.js';
export {
  type CallFailure,
  type RecordedCall,
  type RecordingAdapter,
  type RecordingAdapterOptions,
  recordingAdapter,
} from './recording-adapter.js';
export {
  createTestProcessor,
  type LogEntry,
  type ProcessCallOptions,
  type ProcessInput,
  type TestProcessor,
  type TestProcessorOptions,
} from './test-processor.js';
