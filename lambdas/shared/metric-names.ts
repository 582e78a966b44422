/**
 * Metric names and the namespace, shared by the Lambdas that emit them (EMF) and the alarms and
 * dashboard that read them. Every metric carries a `provider` dimension.
 */
export const METRIC_NAMESPACE = 'IdempotentWebhooks';
export const PROVIDER_DIMENSION = 'provider';
/** `POWERTOOLS_SERVICE_NAME` of the receiver, and its metrics' `service` dimension. */
export const RECEIVER_SERVICE = 'webhook-receiver';
/** `POWERTOOLS_SERVICE_NAME` of the processor, and its metrics' `service` dimension. */
export const PROCESSOR_SERVICE = 'webhook-processor';

export const ReceiverMetric = {
  /** Every delivery to a known provider's route. */
  Received: 'Received',
  /** A new event (or a taken-over stalled claim) was queued. */
  Accepted: 'Accepted',
  /** A delivery of a key already claimed; nothing new queued. */
  Duplicate: 'Duplicate',
  InvalidSignature: 'InvalidSignature',
  /** Authentic but unusable: not JSON, no event id, no object id for the key rule. */
  Malformed: 'Malformed',
  PayloadTooLarge: 'PayloadTooLarge',
  /** A duplicate answered 503 because the first delivery was still enqueueing. */
  InFlight: 'InFlight',
  /** 5xx: enqueue failed, missing secret or an unexpected error. */
  Failed: 'Failed',
  /** A delivery to a route that names no configured provider (dimension value `unknown`). */
  UnknownProvider: 'UnknownProvider',
  /** Milliseconds from the handler's start to its answer. */
  Latency: 'ReceiverLatency',
} as const;

/** Emitted by the processor (service `webhook-processor`), with the same `provider` dimension. */
export const ProcessorMetric = {
  /** A message whose business effects are now applied (claim `DONE`). */
  Processed: 'Processed',
  /** A message that failed this attempt; SQS redelivers it, then moves it to the DLQ. */
  ProcessingFailed: 'ProcessingFailed',
  /** Milliseconds from the receiver accepting the delivery to the event being DONE (end-to-end lag). */
  ProcessingLatency: 'ProcessingLatency',
  /** A message whose claim was already DONE (an SQS redelivery or an extra copy): acknowledged, nothing applied. */
  AlreadyDone: 'AlreadyDone',
  /** A message whose event another worker holds a live lease on: retried after the visibility timeout. */
  Busy: 'Busy',
  /** An event type no handler is registered for. */
  Unhandled: 'Unhandled',
  /** An event older than the business object's last applied state: skipped by the stale-order guard. */
  StaleSkipped: 'StaleSkipped',
  /**
   * Effects that may act twice whose outcome is unknown (called, then a timeout, a 5xx or a stop
   * before the marker; or not run again after a recovery): never called again, recorded on the claim
   * (`unresumedEffects`) for a person to check. Alarmed at 1.
   */
  EffectsInDoubt: 'EffectsInDoubt',
} as const;

/**
 * Counted from the API's access log (a metric filter, no dimensions): requests refused for their
 * size before or by the receiver (`413`, or a Lambda "request too large" integration error). For a
 * provider that does not retry such a delivery, each one is a lost event.
 */
export const OVERSIZED_DELIVERIES_METRIC = 'OversizedDeliveries';

/** Counted from the API's access log (no dimensions): requests API Gateway throttled (`429`). */
export const THROTTLED_DELIVERIES_METRIC = 'ThrottledDeliveries';

/** `POWERTOOLS_SERVICE_NAME` of the sweeper, and its metrics' `service` dimension (no `provider`). */
export const SWEEPER_SERVICE = 'webhook-sweeper';

/** Emitted by the sweeper once per run (service `webhook-sweeper`, no provider dimension). */
export const SweeperMetric = {
  /** Live claims reported stuck after this run: what the sweeper could not recover (a gauge). */
  StuckClaims: 'StuckClaims',
  /** Claims whose event the sweeper sent to the queue again in this run. */
  RequeuedClaims: 'RequeuedClaims',
  /** Claims newly reported stuck in this run. */
  NewlyStuckClaims: 'NewlyStuckClaims',
} as const;
