/**
 * Failing an event now: what an applier (or its effect, or its schema) says when an event can never
 * succeed, so it is not retried for the queue's whole redrive policy (minutes of attempts, each
 * failing the same way) before it reaches the DLQ. The processor marks the claim FAILED with the
 * reason and moves the message to the DLQ at once, where the DLQ alarm and `webhooks dlq` find it;
 * after a fix, `webhooks dlq redrive` applies it, resuming from the claim's step markers
 * (docs/rules.md, "Failing an event now").
 */

/**
 * Throw it from `plan` or an effect: this event can never succeed (the customer it names was deleted
 * upstream, the payload breaks a rule of yours). Any other error is retried.
 */
export class PermanentEventError extends Error {
  override readonly name = 'PermanentEventError';
}

/**
 * Whether an error says the event can never succeed: a {@link PermanentEventError}, or an
 * `EffectError` marked `permanent` (an answer among the adapter's `permanentStatuses`). Read by
 * name, so an error class bundled twice (the SDK in the user's bundle) is still recognised.
 */
export function isPermanentFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'PermanentEventError') return true;
  return error.name === 'EffectError' && (error as { permanent?: unknown }).permanent === true;
}

/** Where an event that fails now goes: the DLQ of the event queue. */
export interface DeadLetters {
  /** Sends the queue message, as it was received, to the DLQ. */
  send(body: string): Promise<void>;
}
