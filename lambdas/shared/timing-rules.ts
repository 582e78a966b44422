/**
 * The rules that keep a worker's effects inside its lease, one home for the construct's props
 * (lib/idempotent-webhook-receiver.ts) and the local stack's knobs (local/timings.ts), each naming
 * the values its own way. Why each holds: docs/rules.md, "Leases and timeouts".
 *
 * - A lease outlives its function's invocation: a worker cannot still be running when another takes
 *   its claim over. The processor renews its lease with the record written before each effect that
 *   may act twice, so this also bounds every such call.
 * - An effect's call fits in the invocation with a margin: the processor never starts a call it
 *   cannot finish before the invocation (or its lease) ends.
 * - The processing lease is no longer than the event queue's visibility timeout: a message SQS shows
 *   again after a worker died finds its lease run out, rather than spending a receive on "busy".
 * - The sweeper waits longer than the visibility timeout before re-sending a stalled PROCESSING
 *   claim: SQS's own redelivery comes first.
 */

/** Room kept between an effect's longest call and the end of the invocation or lease (ms). */
export const EFFECT_MARGIN_MS = 1_000;

export interface Timings {
  readonly receiverTimeoutSeconds?: number;
  readonly receiverLeaseSeconds?: number;
  readonly processorTimeoutSeconds?: number;
  readonly processingLeaseSeconds?: number;
  readonly visibilityTimeoutSeconds?: number;
  /** The sweeper's wait after a PROCESSING claim's lease ran out before it re-sends the event. */
  readonly sweepProcessingGraceSeconds?: number;
  /** The effect adapters' longest call, by adapter name. */
  readonly effectTimeoutsMs?: Readonly<Record<string, number>>;
}

/** How each value is called where it is set (`processingLease`, or `CLAIM_LEASE_SECONDS`). */
export type TimingNames = Readonly<Record<Exclude<keyof Timings, 'effectTimeoutsMs'>, string>> & {
  readonly effectTimeout: (adapter: string) => string;
};

const s = (seconds: number) => `${seconds} s`;

/** Every rule the values break, one sentence each naming the values and the reason. */
export function timingProblems(timings: Timings, names: TimingNames): string[] {
  const problems: string[] = [];
  const {
    receiverTimeoutSeconds: receiverTimeout,
    receiverLeaseSeconds: receiverLease,
    processorTimeoutSeconds: processorTimeout,
    processingLeaseSeconds: processingLease,
    visibilityTimeoutSeconds: visibility,
    sweepProcessingGraceSeconds: grace,
  } = timings;
  if (receiverLease !== undefined && receiverTimeout !== undefined && receiverLease <= receiverTimeout) {
    problems.push(
      `${names.receiverLeaseSeconds} (${s(receiverLease)}) must be longer than ${names.receiverTimeoutSeconds} (${s(receiverTimeout)}): a lease must outlive the invocation that holds it`,
    );
  }
  if (
    processingLease !== undefined &&
    processorTimeout !== undefined &&
    processingLease <= processorTimeout
  ) {
    problems.push(
      `${names.processingLeaseSeconds} (${s(processingLease)}) must be longer than ${names.processorTimeoutSeconds} (${s(processorTimeout)}): a lease must outlive the invocation that holds it`,
    );
  }
  if (processingLease !== undefined && visibility !== undefined && processingLease > visibility) {
    problems.push(
      `${names.processingLeaseSeconds} (${s(processingLease)}) must not exceed ${names.visibilityTimeoutSeconds} (${s(visibility)}): a message SQS shows again after a worker died must find its lease run out`,
    );
  }
  if (grace !== undefined && visibility !== undefined && grace <= visibility) {
    problems.push(
      `${names.sweepProcessingGraceSeconds} (${s(grace)}) must be longer than ${names.visibilityTimeoutSeconds} (${s(visibility)}): SQS redelivers a stalled event before the sweeper re-sends it`,
    );
  }
  for (const [adapter, timeoutMs] of Object.entries(timings.effectTimeoutsMs ?? {})) {
    const bound = processorTimeout === undefined ? undefined : processorTimeout * 1000 - EFFECT_MARGIN_MS;
    if (bound !== undefined && timeoutMs >= bound) {
      problems.push(
        `${names.effectTimeout(adapter)} (${timeoutMs} ms) must be shorter than ${names.processorTimeoutSeconds} (${s(processorTimeout ?? 0)}) by more than ${EFFECT_MARGIN_MS} ms: an effect that may act twice is only called when its call can end within the invocation`,
      );
    }
  }
  return problems;
}
