/**
 * The applier API: what a user writes to apply an event. An applier is plain code: it reads
 * the rows it needs, returns the absolute values to write, and names the external effects to run.
 * The processor does the rest (claim, transaction, stale-order guard, step markers, retries).
 * See docs/processor.md.
 */
import type { BuiltInProviderId, ProviderId } from '../providers/types.js';
import type { EventMessage } from '../queue/event-message.js';
import type { StandardSchemaV1 } from './standard-schema.js';

/**
 * A business table, by the name the construct's `tables` prop gives it (`invoices`, `customers`, ...);
 * the processor maps it to the table's real name (`BUSINESS_TABLES`). It is also the prefix of the
 * claim's `writtenRows` entries (`<table>:<pk>`), so it holds no `:`.
 */
export type TableRef = string;

/** A payload nothing more is known of: a JSON object. */
export type JsonPayload = Readonly<Record<string, unknown>>;

/**
 * The event as an applier sees it: the queue message plus the parsed JSON payload. Typed by the
 * app's event map ({@link WebhookAppTypes}): `payload` is that event type's payload type,
 * `eventType` and `provider` the literal keys it was registered under.
 */
export interface ProcessingEvent<
  Payload = JsonPayload,
  Type extends string = string,
  Provider extends string = ProviderId,
> extends Omit<EventMessage, 'eventType' | 'provider'> {
  readonly provider: Provider;
  readonly eventType: Type;
  readonly payload: Payload;
}

/**
 * Payload types of one provider's events, by event type (an object type: an interface such as
 * `@octokit/webhooks-types`' `WebhookEventMap` fits, though it declares no index signature).
 */
export type EventTypeMap = object;

/** Payload types by provider id, then event type. */
export type ProviderEventMap = { readonly [provider: string]: EventTypeMap };

/**
 * An event map from a union of event types discriminated by `type`, the shape SDKs publish:
 * `EventsByType<Stripe.Event>` is `{ 'invoice.paid': Stripe.InvoicePaidEvent, ... }`. (GitHub's
 * `@octokit/webhooks-types` publishes the map itself: `WebhookEventMap`, keyed by `X-GitHub-Event`.)
 */
export type EventsByType<Union extends { readonly type: string }> = {
  readonly [E in Union as E['type']]: E;
};

/** The built-in providers, every event type a JSON object: what an app gets until it says more. */
export type BuiltInEvents = {
  readonly [P in BuiltInProviderId]: { readonly [eventType: string]: JsonPayload };
};

/**
 * The built-in providers and configured ones (the construct's `hmacProviders` ids), every event
 * type a JSON object: `{ events: WithProviders<'onfido'> }`. Combine with typed maps:
 * `WithProviders<'onfido'> & { stripe: EventsByType<Stripe.Event> }`.
 */
export type WithProviders<Configured extends string> = Omit<BuiltInEvents, Configured> & {
  readonly [P in Configured]: { readonly [eventType: string]: JsonPayload };
};

/**
 * What an app tells the compiler about itself, shared by its processor module and its CDK app:
 *
 *   type App = {
 *     events: { stripe: EventsByType<Stripe.Event>; github: WebhookEventMap };
 *     tables: 'subscriptions' | 'repos';   // the construct's `tables` keys
 *     adapters: 'crm';                     // the construct's `effects` keys and your own adapters
 *   };
 *   createProcessor<App>({ appliers: { stripe: { 'invoice.paid': ... } } });
 *   new IdempotentWebhookReceiver<App>(stack, 'Webhooks', { tables: { subscriptions, repos }, ... });
 *
 * Then a provider or event type that is not in `events` (`strpie`, `invoice.payed`), a table or an
 * adapter that is not the app's, does not compile. Each part is optional: without `events` the
 * built-in providers take any event type with a JSON payload; without `tables` or `adapters`, any
 * name compiles (and a wrong one fails at run time).
 */
export interface WebhookAppTypes {
  readonly events?: ProviderEventMap;
  readonly tables?: string;
  readonly adapters?: string;
}

/** The app's event map, or {@link BuiltInEvents}. */
export type EventsOf<App> = App extends { readonly events: infer E extends ProviderEventMap }
  ? E
  : BuiltInEvents;
/** The app's table names, or any string. */
export type TablesOf<App> = App extends { readonly tables: infer T extends string } ? T : string;
/** The app's adapter names, or any string. */
export type AdaptersOf<App> = App extends { readonly adapters: infer A extends string } ? A : string;

/** The event an applier registered under `provider` and `type` sees. */
export type AppEvent<
  App,
  Provider extends keyof EventsOf<App> & string,
  Type extends keyof EventsOf<App>[Provider] & string = keyof EventsOf<App>[Provider] & string,
> = ProcessingEvent<EventsOf<App>[Provider][Type], Type>;

/** An applier of the app, for `provider` and `type` (the payload type comes from the app's event map). */
export type AppApplier<
  App,
  Provider extends keyof EventsOf<App> & string,
  Type extends keyof EventsOf<App>[Provider] & string = keyof EventsOf<App>[Provider] & string,
> = Applier<AppEvent<App, Provider, Type>, TablesOf<App>, AdaptersOf<App>>;

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
export interface GuardedWrite<Table extends string = TableRef> {
  readonly table: Table;
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

export interface PlanContext<Table extends string = TableRef, Adapter extends string = EffectAdapterName> {
  /** Reads a row for the stale-order decision; the commit then checks the row did not change since. */
  read(table: Table, pk: string, order: EventOrder, guard?: string): Promise<GuardedRead>;
  /** Whether the effect adapter of that name (a key of the construct's `effects` prop, or your own) is configured. */
  has(adapter: Adapter): boolean;
}

export interface Plan<Table extends string = TableRef> {
  /** Absolute writes, committed in one transaction with the claim's step marker. */
  readonly writes?: readonly GuardedWrite<Table>[];
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
export interface EffectDefinition<E = ProcessingEvent, Adapter extends string = EffectAdapterName> {
  readonly adapter: Adapter;
  readonly run: Effect<E, Adapter>;
}

export interface EffectContext<Adapter extends string = EffectAdapterName> {
  /** Stable per event and effect (`<claim key>:<effect>`): pass it to any API that takes one. */
  readonly idempotencyKey: string;
  /** The configured effect adapters by name; an effect whose adapter is absent should do nothing. */
  readonly adapters: { readonly [Name in Adapter]?: EffectAdapter };
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

/** What the HTTP adapter hands back from a 2xx answer. */
export interface EffectResponse {
  readonly status: number;
  /** The answer's headers, names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body: parsed JSON when it parses, else its text (at most 64 KiB); undefined when empty. */
  readonly body: unknown;
}

/**
 * One external service an effect calls: an HTTP endpoint configured on the construct
 * (lambdas/processor/effects.ts), or an adapter of your own registered with `createProcessor({ adapters })`
 * (an SDK client wrapped in `call`). `R` is what a call resolves to.
 */
export interface EffectAdapter<R = unknown> {
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
  ): Promise<R>;
}

/**
 * Runs one external effect; what it resolves to is not used. (Declared as a method's type, so an
 * applier of a narrower event still fits where any applier is expected, as `plan` does.)
 */
export type Effect<E = ProcessingEvent, Adapter extends string = EffectAdapterName> = {
  run(event: E, context: EffectContext<Adapter>): Promise<unknown>;
}['run'];

/**
 * Applies one kind of event. Typed by the event it sees (`ProcessingEvent<Payload, Type, Provider>`)
 * and the app's table and adapter names; `AppApplier<App, 'stripe', 'invoice.paid'>` spells it
 * from the app's types.
 */
export interface Applier<
  E extends ProcessingEvent<unknown, string, string> = ProcessingEvent,
  Table extends string = TableRef,
  Adapter extends string = EffectAdapterName,
> {
  /**
   * Checks (and may transform) the payload before `plan` sees it: any Standard Schema
   * (https://standardschema.dev: zod 3.24+ and 4, valibot, arktype). A payload it rejects can never
   * be applied: the event fails now with the schema's issues as its reason (docs/rules.md, "Failing
   * an event now"). @default none: the payload is the parsed JSON, as sent
   */
  readonly schema?: StandardSchemaV1<unknown, E['payload']>;
  /** Decides what to write and which effects to run. Must be deterministic for a given event and state. */
  plan(event: E, context: PlanContext<Table, Adapter>): Promise<Plan<Table>>;
  /**
   * The effects `plan` may name. Their input must come from the event alone, so a resume can rerun
   * them. Declare the adapter an effect calls (`{ adapter: 'erp', run }`) so the processor knows
   * whether repeating it is safe; a bare function is treated as not safe to repeat.
   */
  readonly effects?: Readonly<Record<string, Effect<E, Adapter> | EffectDefinition<E, Adapter>>>;
}

/** One provider's appliers: exact event types of the app's map, and `prefix*` patterns. */
export type ProviderAppliers<App, Provider extends keyof EventsOf<App> & string> = {
  readonly [Type in keyof EventsOf<App>[Provider] & string]?: AppApplier<App, Provider, Type>;
} & {
  readonly [pattern: `${string}*`]: AppApplier<App, Provider> | undefined;
};

/**
 * Appliers per provider, keyed by exact event type or `prefix*` pattern (exact wins, then longest
 * prefix). Typed by the app ({@link WebhookAppTypes}): a provider or an event type the app's event
 * map does not have is a compile error. `prefix*` appliers see the union of the provider's payloads.
 */
export type ApplierRegistry<App extends WebhookAppTypes = WebhookAppTypes> = {
  readonly [Provider in keyof EventsOf<App> & string]?: ProviderAppliers<App, Provider>;
};

/** The registry as the processor runs it: any provider, any event type (the types are the compiler's). */
export type RuntimeApplierRegistry = {
  readonly [provider: string]: { readonly [eventType: string]: Applier | undefined } | undefined;
};

/** @deprecated Renamed `Applier` (the Lambda entry is the only "handler"); this alias goes in 1.0. */
export type BusinessHandler = Applier;
/** @deprecated Renamed `ApplierRegistry`; this alias goes in 1.0. */
export type HandlerRegistry = ApplierRegistry;
