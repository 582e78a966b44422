/**
 * An effect adapter for tests: it records every call (the body and the idempotency key the
 * processor passed) and answers as it is told, so a test sees which effects ran, how often, with
 * which key, and how the processor treats a failure (retried, failed now, or in doubt).
 */
import { EffectError } from '../processor/effects.js';
import type { EffectAdapter, EffectCallOptions } from '../processor/types.js';

export interface RecordedCall {
  readonly body: Readonly<Record<string, unknown>>;
  readonly idempotencyKey: string;
  /** Whether the call acted: false for a call told to fail. */
  readonly performed: boolean;
}

/**
 * How a call fails: `refused` (an `EffectError` with `performed: 'no'`: the service certainly did
 * not act, so even an effect that may act twice is called again), `unknown` (a timeout, a lost
 * answer: an effect that may act twice is left in doubt, never called again), `permanent` (an
 * `EffectError` marked permanent: the event fails now), or an error of your own.
 */
export type CallFailure = 'refused' | 'unknown' | 'permanent' | Error;

export interface RecordingAdapterOptions {
  /**
   * Whether the service returns the first result for a repeated `Idempotency-Key`: the processor
   * repeats only such calls when it cannot tell whether one acted. @default true
   */
  readonly honoursIdempotencyKey?: boolean;
  /** The adapter's bound on one call, in ms (the processor needs that much lease left). @default unbounded */
  readonly timeoutMs?: number;
  /** What a call resolves to. @default `{ ok: true }` */
  readonly answer?: (body: Readonly<Record<string, unknown>>, idempotencyKey: string) => unknown;
}

export interface RecordingAdapter extends EffectAdapter {
  /** Every call, in order, those told to fail included. */
  readonly calls: readonly RecordedCall[];
  /** The calls that acted (a repeated key counts once when the adapter honours it). */
  readonly performed: readonly RecordedCall[];
  /** Makes the next `times` calls fail as `failure` says. */
  failNext(failure?: CallFailure, times?: number): void;
  /** Forgets the calls and the pending failures. */
  reset(): void;
}

function errorOf(failure: CallFailure): Error {
  if (failure instanceof Error) return failure;
  switch (failure) {
    case 'refused':
      return new EffectError('the recording adapter refused the call', 'no');
    case 'permanent':
      return new EffectError('the recording adapter answered a permanent failure', 'no', { permanent: true });
    case 'unknown':
      return new EffectError('the recording adapter lost the answer', 'unknown');
  }
}

/** An effect adapter that records each call and can be told to fail. */
export function recordingAdapter(options: RecordingAdapterOptions = {}): RecordingAdapter {
  const calls: RecordedCall[] = [];
  const failures: CallFailure[] = [];
  const answered = new Map<string, unknown>();
  const honours = options.honoursIdempotencyKey ?? true;
  const answer = options.answer ?? (() => ({ ok: true }));
  return {
    honoursIdempotencyKey: honours,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    calls,
    get performed() {
      const acted = calls.filter((call) => call.performed);
      if (!honours) return acted;
      // A service that honours the key acts once per key, whatever the repeats.
      return acted.filter(
        (call, index) => acted.findIndex((other) => other.idempotencyKey === call.idempotencyKey) === index,
      );
    },
    async call(
      body: Readonly<Record<string, unknown>>,
      idempotencyKey: string,
      _options?: EffectCallOptions,
    ) {
      const failure = failures.shift();
      if (failure !== undefined) {
        // A call whose answer was lost may well have acted: only a refusal certainly did not.
        const acted = failure === 'unknown';
        calls.push({ body, idempotencyKey, performed: acted });
        throw errorOf(failure);
      }
      calls.push({ body, idempotencyKey, performed: true });
      if (honours && answered.has(idempotencyKey)) return answered.get(idempotencyKey);
      const result = answer(body, idempotencyKey);
      answered.set(idempotencyKey, result);
      return result;
    },
    failNext(failure: CallFailure = 'refused', times = 1) {
      for (let i = 0; i < times; i++) failures.push(failure);
    },
    reset() {
      calls.length = 0;
      failures.length = 0;
      answered.clear();
    },
  };
}
