/**
 * The applier API: what a user writes to apply an event. An applier is plain code: it reads
 * the rows it needs, returns the absolute values to write, and names the external effects to run.
 * The processor does the rest (claim, transaction, stale-order guard, step markers, retries).
 * See docs/processor.md.
 */
import type { EventMessage } from '../queue/event-message.js';

/**
 * A business table, by the name the construct's `tables` prop gives it (`invoices`, `customers`, ...);
 * the processor maps it to the table's real name (`BUSINESS_TABLES`). It is also the prefix of the
 * claim's `writtenRows` entries (`<table>:<pk>`), so it holds no `:`.
 */
export type TableRef = string;

/** The event as an applier sees it: the queue message plus the parsed JSON payload. */
export interface ProcessingEvent extends EventMessage {
  readonly payload: Readonly<Record<string, unknown>>;
}

/**
 * Where an event stands in its object's history. A write applies only when its order is greater
 * than the row's: later `at` (provider event time, epoch seconds) wins; in the same second the
 * higher `rank` (the applier's documented precedence) wins; equal both ways, the row is kept.
 */
export interface EventOrder {
  readonly at: number;
  readonly rank: number;
  readonly eventId: string;
}

/**
 * One absolute write to one row: attribute values to SET (never increments). `guard` names the
 * attribute prefix holding the row's order for this kind of write (default `lastEvent`:
 * `lastEventId`, `lastEventCreated`, `lastEventRank`); two kinds of facts about one row (a payment's
 * status and its refunds) can keep separate guards.
 */
export interface GuardedWrite {
  readonly table: TableRef;
  readonly pk: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly order: EventOrder;
  readonly guard?: string;
  /**
   * The row's owner, set once: written only when the row has none, and the write applies only when
   * the row has none or this one (`attribute_not_exists(shop) OR shop = :shop`). For rows keyed by a
   * provider's global id, so a replay under another tenant can neither create nor change that
   * tenant's row (docs/processor.md, "Rows owned by one tenant").
   */
  readonly owner?: { readonly attribute: string; readonly value: string };
}

export interface GuardedRead {
  /** The row as it is now (strongly consistent), or undefined. */
  readonly row: Readonly<Record<string, unknown>> | undefined;
  /** Whether an event with this order may write the row (it is newer than the row's last writer). */
  readonly newer: boolean;
  /**
   * The row's last writer (under this guard) is this very event: an earlier attempt committed its
   * state and lost its claim's markers. The processor then resumes the event's effects instead of
   * calling it stale, whatever the plan returns (docs/processor.md, "applied by this event").
   */
  readonly writtenByThisEvent: boolean;
}

export interface PlanContext {
  /** Reads a row for the stale-order decision; the commit then checks the row did not change since. */
  read(table: TableRef, pk: string, order: EventOrder, guard?: string): Promise<GuardedRead>;
  /** Whether the effect adapter of that name (a key of the construct's `effects` prop) is configured. */
  has(adapter: EffectAdapterName): boolean;
}

export interface Plan {
  /** Absolute writes, committed in one transaction with the claim's step marker. */
  readonly writes?: readonly GuardedWrite[];
  /**
   * External effects to run after the writes commit, in order, the irreversible one last. Each runs
   * once per event: a step marker is recorded after each, and a resumed event skips the done ones.
   */
  readonly effects?: readonly string[];
  /** `stale` when the event was older than the row (nothing written). */
  readonly outcome?: 'applied' | 'stale' | 'noop';
}

/** An effect adapter, by its key in the construct's `effects` prop (`EFFECTS`). */
export type EffectAdapterName = string;

/**
 * An effect with the adapter it calls, so the processor knows whether running it again is safe: an
 * effect whose adapter honours `Idempotency-Key` can be repeated; any other may act twice.
 */
export interface EffectDefinition {
  readonly adapter: EffectAdapterName;
  readonly run: Effect;
}

export interface EffectContext {
  /** Stable per event and effect (`<claim key>:<effect>`): pass it to any API that takes one. */
  readonly idempotencyKey: string;
  /** The configured effect adapters by name; an effect whose adapter is absent should do nothing. */
  readonly adapters: Readonly<Record<EffectAdapterName, EffectAdapter>>;
  /**
   * Aborted when the effect must have ended: a second before the worker's lease runs out or the
   * invocation ends, whichever is first. Pass it to every call (`adapter.call(body, key, { signal })`,
   * an SDK's `abortSignal`): a call still running then would outlive the lease that keeps another
   * worker from calling it again (docs/rules.md, "Effects in doubt").
   */
  readonly signal?: AbortSignal;
}

export interface EffectCallOptions {
  /** Aborts the call (the processor's deadline for the effect: {@link EffectContext.signal}). */
  readonly signal?: AbortSignal;
}

/** One external service an effect calls (an HTTP endpoint by default: lambdas/processor/effects.ts). */
export interface EffectAdapter {
  /**
   * True when the service returns the first result for a repeated `Idempotency-Key` instead of
   * acting again (an accounting API, most payment APIs). Only such effects are re-run when the processor cannot
   * tell whether they already ran; a call repeated after a crash between the call and its step
   * marker is harmless only for them.
   */
  readonly honoursIdempotencyKey: boolean;
  /**
   * The longest one call takes before it gives up, in milliseconds, when the adapter bounds it (the
   * HTTP adapter: 5000). The processor calls an effect only with more than this left on its lease
   * and in its invocation. @default unbounded: only the invocation's end bounds it
   */
  readonly timeoutMs?: number;
  /**
   * Sends one request; throws on any failure. Throw an `EffectError` with `performed: 'no'` when the
   * service certainly did not act (refused the connection, answered 4xx): only then is an effect
   * that is not repeat-safe called again. Any other error leaves such an effect in doubt: the claim
   * records it and it is never called again (docs/rules.md, "Effects in doubt").
   */
  call(
    body: Readonly<Record<string, unknown>>,
    idempotencyKey: string,
    options?: EffectCallOptions,
  ): Promise<void>;
}

export type Effect = (event: ProcessingEvent, context: EffectContext) => Promise<void>;

export interface Applier {
  /** Decides what to write and which effects to run. Must be deterministic for a given event and state. */
  plan(event: ProcessingEvent, context: PlanContext): Promise<Plan>;
  /**
   * The effects `plan` may name. Their input must come from the event alone, so a resume can rerun
   * them. Declare the adapter an effect calls (`{ adapter: 'erp', run }`) so the processor knows
   * whether repeating it is safe; a bare function is treated as not safe to repeat.
   */
  readonly effects?: Readonly<Record<string, Effect | EffectDefinition>>;
}

/** Appliers per provider, keyed by exact event type or `prefix*` pattern (exact wins, then longest prefix). */
export type ApplierRegistry = Readonly<Partial<Record<string, Readonly<Record<string, Applier>>>>>;

/** @deprecated Renamed `Applier` (the Lambda entry is the only "handler"); this alias goes in 1.0. */
export type BusinessHandler = Applier;
/** @deprecated Renamed `ApplierRegistry`; this alias goes in 1.0. */
export type HandlerRegistry = ApplierRegistry;
