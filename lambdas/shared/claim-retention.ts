/**
 * How long a claim must outlive the last moment anything could still deliver its event again: the
 * one home of the rule both functions and the stack apply (docs/rules.md, "Claim TTL").
 *
 * A message that fails `maxReceiveCount` times waits in the DLQ for the DLQ's retention, counted
 * from its enqueue time; a redrive enqueues it afresh ("The redrive task resets the retention
 * period": https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html).
 * So a claim is kept at least the DLQ's retention plus a margin for the operator's redrive after
 * it is created, after each processing attempt and after each failure. A claim gone before its
 * message would make the redrive start from nothing.
 */

/** SQS's longest retention, which the stack gives the DLQ. */
export const DLQ_RETENTION_SECONDS = 14 * 24 * 3600;
/** Time for a redriven message to be processed after the DLQ's retention ends. */
export const REDRIVE_MARGIN_SECONDS = 24 * 3600;
/** The default of `CLAIM_RETENTION_SECONDS`: 15 days. */
export const CLAIM_RETENTION_DEFAULT_SECONDS = DLQ_RETENTION_SECONDS + REDRIVE_MARGIN_SECONDS;

/** The claim TTL (epoch seconds) that keeps a claim `retentionSeconds` past `nowMs`, never lowering `current`. */
export function retainUntil(nowMs: number, retentionSeconds: number, current = 0): number {
  return Math.max(current, Math.floor(nowMs / 1000) + retentionSeconds);
}
