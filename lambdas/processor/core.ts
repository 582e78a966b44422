/**
 * The processor's core: apply one queued event exactly once. Pure of the SQS wiring: the claim
 * store, the business tables, the appliers, the effect adapters and the clock are injected.
 *
 *   claim the processing lease ─▶ plan (read rows) ─▶ commit writes + step `state` (one transaction)
 *     ─▶ effect 1 ─▶ marker ─▶ [call record + lease renewal] effect 2 ─▶ marker + DONE
 *
 * A resumed event (a worker died, or an attempt failed) skips every step its marker says is done.
 * An effect that may act twice (its adapter ignores Idempotency-Key) is called at most once: its
 * call is recorded first, and a call that may have acted is recorded in doubt, never repeated.
 * The rules are written down in docs/processor.md and docs/rules.md ("Effects in doubt").
 */
import { randomUUID } from 'node:crypto';
import { getProvider } from '../providers/index.js';
import {
  decodeBody,
  type EventEnvelope,
  type EventMessage,
  isBodyFormat,
  isClaimCheck,
  type QueueMessage,
} from '../queue/event-message.js';
import { retainUntil } from '../shared/claim-retention.js';
import { effectFaultPoint, type FaultInjector } from '../shared/faults.js';
import { matchEventType } from '../shared/keys.js';
import { EFFECT_MARGIN_MS } from '../shared/timing-rules.js';
import type { ClaimRecord, Lease, NewClaim } from '../store/claim.js';
import { ArchiveFormatError, type PayloadArchive } from '../store/payload-archive.js';
import { LeaseLostError, type ProcessingClaims, type ProcessingOutcome } from '../store/processing-claims.js';
import { applyCompliance, type ComplianceStore, complianceRequestOf } from './compliance.js';
import { DeferredRedactionError, redactAfterDone } from './deferred-redaction.js';
import { certainlyNotPerformed } from './effects.js';
import { type DeadLetters, isPermanentFailure, PermanentEventError } from './failures.js';
import { describeIssues } from './standard-schema.js';
import { isNewer, type ReadMark, readMark, type StateStore, WriteConflictError } from './state-store.js';
import type {
  Applier,
  Effect,
  EffectAdapter,
  EffectContext,
  EffectDefinition,
  PlanContext,
  ProcessingEvent,
  RuntimeApplierRegistry,
} from './types.js';

export interface ProcessorLog {
  info(message: string, details: Record<string, unknown>): void;
  warn(message: string, details: Record<string, unknown>): void;
  error(message: string, details: Record<string, unknown>): void;
}

export interface ProcessorDeps {
  readonly claims: ProcessingClaims;
  readonly state: StateStore;
  /** What to apply for each provider and event type (none: every event completes as `unhandled`). */
  readonly appliers: RuntimeApplierRegistry;
  readonly leaseSeconds: number;
  readonly maxReceiveCount: number;
  /** How long a claim is kept after each attempt and failure (lambdas/shared/claim-retention.ts). */
  readonly claimRetentionSeconds: number;
  /** The configured effect adapters by name (the construct's `effects` prop). @default none */
  readonly effects?: Readonly<Record<string, EffectAdapter>>;
  readonly log: ProcessorLog;
  readonly clock?: () => number;
  readonly newLeaseToken?: () => string;
  readonly faultPoint?: FaultInjector;
  /**
   * Where payloads are archived (archiving is off when absent), and where claim-checked bodies are
   * read from.
   */
  readonly archive?: PayloadArchive;
  /**
   * The archive as Shopify's compliance requests change it (redact, data_request): set with the
   * archive when Shopify is served. @default none: a compliance request is logged and completed
   */
  readonly compliance?: ComplianceStore;
  /**
   * The event queue's DLQ, where an event that can never succeed is moved at once. @default none:
   * such an event is failed on the claim and retried until the redrive policy moves it
   */
  readonly deadLetters?: DeadLetters;
}

export type ProcessResult =
  | {
      readonly kind: 'done';
      readonly outcome: ProcessingOutcome;
      readonly key: string;
      readonly event: EventEnvelope;
      /**
       * Effects this attempt recorded in the claim's `unresumedEffects`: called but with no known
       * outcome, or not run again after a recovery, because they might act twice. An operator checks them.
       */
      readonly unresumed: readonly string[];
    }
  /** The claim was already DONE: the message was a duplicate and nothing was applied. */
  | { readonly kind: 'already-done'; readonly key: string; readonly event: EventEnvelope }
  /**
   * The event can never succeed (./failures.ts): its claim is FAILED with `reason` and its message
   * was moved to the DLQ, so this receive is done with.
   */
  | { readonly kind: 'failed'; readonly key: string; readonly event: EventEnvelope; readonly reason: string };

/** The message is not an event this processor can read: it can never succeed. */
export class PoisonMessageError extends Error {
  override readonly name = 'PoisonMessageError';
}

/** Another worker holds a live lease on the event: the message is retried later, not dropped. */
export class ClaimBusyError extends Error {
  override readonly name = 'ClaimBusyError';
  constructor(readonly key: string) {
    super(`event ${key} is being processed by another worker`);
  }
}

/**
 * An effect that is not repeat-safe was not called: too little time was left before the lease or
 * the invocation ends for its call to finish. The attempt is released (the effect was never called)
 * and the retry calls it with a fresh lease.
 */
export class EffectDeadlineError extends Error {
  override readonly name = 'EffectDeadlineError';
  constructor(
    readonly effect: string,
    readonly neededMs: number,
    readonly leftMs: number,
  ) {
    super(
      `effect ${effect} was not called: it may take ${neededMs} ms and only ${Math.max(0, leftMs)} ms are left before the processing lease or the invocation ends`,
    );
  }
}

/** How many times a plan is redone when a business row changed under it before giving up the attempt. */
const MAX_PLAN_ROUNDS = 5;

/** Where a claim's progress came from when its own markers were lost (see `resumeFromRow`). */
export const RECOVERED_FROM_BUSINESS_ROW = 'business-row';

/**
 * The queue message's envelope: the event with its body, or a claim check for it. A body that is
 * not a version-1 event message is poison with no claim to mark: it fails every attempt and ends
 * in the DLQ.
 */
export function parseEventMessage(body: string): QueueMessage {
  let message: QueueMessage;
  try {
    message = JSON.parse(body) as QueueMessage;
  } catch {
    throw new PoisonMessageError('message body is not JSON');
  }
  // A JSON value that is not an object has no `v`: `null` is the one that cannot be asked.
  if (
    message === null ||
    message.v !== 1 ||
    typeof message.key !== 'string' ||
    typeof message.provider !== 'string' ||
    typeof message.eventId !== 'string' ||
    typeof message.eventType !== 'string' ||
    (isClaimCheck(message) ? message.payloadKey === '' : typeof message.body !== 'string')
  ) {
    throw new PoisonMessageError('message is not a version 1 event message');
  }
  return message;
}

/**
 * The event with its body: the message itself, or, for a claim check, the archived event it points
 * to. A missing object fails the attempt (SQS retries, then the DLQ keeps the pointer); an object
 * that is not this event's is poison.
 */
export async function loadMessage(
  queued: QueueMessage,
  deps: Pick<ProcessorDeps, 'archive'>,
): Promise<EventMessage> {
  if (!isClaimCheck(queued)) return queued;
  if (!deps.archive)
    throw new Error(
      `message ${queued.key} is a claim check but the processor has no archive bucket (ARCHIVE_BUCKET_NAME)`,
    );
  let archived: Awaited<ReturnType<PayloadArchive['get']>>;
  try {
    archived = await deps.archive.get(queued.payloadKey, queued.key);
  } catch (error) {
    if (error instanceof ArchiveFormatError) throw new PoisonMessageError(`claim check ${error.message}`);
    throw error;
  }
  const { archivedAt: _archivedAt, ...message } = archived;
  return message;
}

/**
 * The event with its payload, read by the provider's own reader (the one its receiver used) with
 * the body format the receiver recorded, so a body the receiver accepted is read the same way here.
 * A message without `bodyFormat` (none needed, or queued before it existed) is read by its headers.
 * Poison when it cannot be read.
 */
export function readEvent(message: EventMessage): ProcessingEvent {
  const provider = getProvider(message.provider);
  if (!provider)
    throw new PoisonMessageError(`message names unknown provider ${JSON.stringify(message.provider)}`);
  const { bodyFormat } = message;
  if (bodyFormat !== undefined && !isBodyFormat(bodyFormat))
    throw new PoisonMessageError(`message names unknown body format ${JSON.stringify(bodyFormat)}`);
  // An undefined `bodyFormat` is the same as none: the provider reads the headers.
  const payload = provider.readPayload({
    headers: message.headers ?? {},
    rawBody: decodeBody(message),
    bodyFormat,
  });
  if (payload === undefined)
    throw new PoisonMessageError(
      `the ${provider.name} payload is not a JSON object the receiver would accept`,
    );
  return { ...message, payload };
}

export function resolveApplier(
  registry: RuntimeApplierRegistry,
  provider: string,
  eventType: string,
): Applier | undefined {
  const byType = Object.hasOwn(registry, provider) ? registry[provider] : undefined;
  return byType ? matchEventType(byType, eventType) : undefined;
}

const errorSummary = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

export interface ProcessOptions {
  /**
   * The archive object the runtime wrote for this message's batch, holding this event
   * (./batch-archive.ts; only with an archive, and never for a claim check, whose object is its
   * archive). Without it, an event that came with its body is archived in its own object. A
   * rejection fails the attempt, as a failed archive PUT of its own would.
   */
  readonly batchArchive?: Promise<string>;
  /**
   * Milliseconds left in the invocation (Lambda's `context.getRemainingTimeInMillis`): no effect
   * that may act twice is started unless its call can end before then. @default unbounded
   */
  readonly remainingTimeMs?: () => number;
}

/**
 * Processes one message. Resolves when the event is DONE (now or before); throws when the message
 * must be retried (SQS redelivers it) or, after `maxReceiveCount` attempts, left to the DLQ.
 */
export async function processMessage(
  body: string,
  receiveCount: number,
  deps: ProcessorDeps,
  options: ProcessOptions = {},
): Promise<ProcessResult> {
  const message = parseEventMessage(body);
  const clock = deps.clock ?? Date.now;
  // The batch's archive object is durable before the lease write names it: a worker that dies
  // holding the lease leaves a claim whose body the sweeper can find. A failed PUT fails this
  // attempt below, with the claim told why.
  let batchArchiveKey: string | undefined;
  let archiveFailure: { error: unknown } | undefined;
  try {
    batchArchiveKey = await options.batchArchive;
  } catch (error) {
    archiveFailure = { error };
  }
  // The lease runs from its write, not from the message's arrival: waiting for the batch's archive
  // upload above must not eat into it.
  const leaseStart = clock();
  const lease: Lease = {
    token: (deps.newLeaseToken ?? randomUUID)(),
    expiresAt: leaseStart + deps.leaseSeconds * 1000,
    owner: 'processor',
  };
  // Every attempt keeps the claim alive past the DLQ's retention (a redrive resets it).
  const claimTtl = retainUntil(leaseStart, deps.claimRetentionSeconds, message.claimExpiresAt);
  const claim: NewClaim = {
    pk: message.key,
    provider: message.provider,
    account: message.account,
    eventId: message.eventId,
    eventType: message.eventType,
    objectId: message.objectId, // an undefined attribute is not written
    expiresAt: claimTtl,
  };
  let begun: Awaited<ReturnType<ProcessorDeps['claims']['beginProcessing']>>;
  try {
    deps.faultPoint?.('processor.beforeClaim', message.eventId);
    begun = await deps.claims.beginProcessing(claim, lease, leaseStart, claimTtl, batchArchiveKey);
  } catch (error) {
    // Nothing is written on the claim (it was never taken), so this line is all an operator gets.
    deps.log.error(
      receiveCount >= deps.maxReceiveCount
        ? 'processing failed before taking the claim, for the last time: the message goes to the DLQ and the claim stays as it was, for the sweeper'
        : 'processing failed before taking the claim; SQS will redeliver',
      {
        key: message.key,
        eventId: message.eventId,
        eventType: message.eventType,
        receiveCount,
        maxReceiveCount: deps.maxReceiveCount,
        error: errorSummary(error),
      },
    );
    throw error;
  }
  if (begun.kind === 'done') {
    // A redaction waits for this event and the last attempt did not finish it (it crashed after DONE).
    if (begun.claim.redactionPendingBy !== undefined) await redactAfterDone(message, deps);
    return { kind: 'already-done', key: message.key, event: message };
  }
  if (begun.kind === 'busy') throw new ClaimBusyError(message.key);

  // Recorded on the claim with the next write this attempt makes (state step, failure or release).
  let archiveKey: string | undefined;
  const attempt: AttemptContext = { remainingTimeMs: options.remainingTimeMs, unresumed: [] };
  try {
    // Poison once read: it can never succeed, so the claim says FAILED (with why) at once.
    if (archiveFailure) throw archiveFailure.error;
    const loaded = await loadMessage(message, deps);
    const event = readEvent(loaded);
    if (deps.archive && begun.claim.archiveKey === undefined) {
      // A claim check's object is the event's archive: no second copy.
      archiveKey = isClaimCheck(message)
        ? message.payloadKey
        : await deps.archive.put(loaded, begun.claim.firstSeenAt, clock());
    }
    deps.faultPoint?.('processor.afterClaim', event.eventId);
    deps.faultPoint?.('processor.crashAfterClaim', event.eventId);
    const outcome = await applyEvent(event, begun.claim, lease, archiveKey, deps, attempt);
    // DONE: a compliance request may have kept this event's body until now; remove it.
    await redactAfterDone(message, deps);
    return { kind: 'done', outcome, key: message.key, event: message, unresumed: attempt.unresumed };
  } catch (error) {
    if (error instanceof LeaseLostError) {
      // Another worker took the event over: leave the claim to it; our message is retried and
      // then acknowledged as already done.
      deps.log.warn('processing lease was taken over; leaving the event to its new holder', {
        key: message.key,
      });
      throw error;
    }
    if (error instanceof DeferredRedactionError) {
      // The event is DONE (no failure to record on its claim); the redelivery finishes the redaction.
      deps.log.error('the event is applied, but its deferred redaction failed; SQS will redeliver', {
        key: message.key,
        eventId: message.eventId,
        receiveCount,
        error: errorSummary(error),
      });
      throw error;
    }
    const summary = errorSummary(error);
    const poison = error instanceof PoisonMessageError;
    // The applier (its schema, plan or effect) says this event can never succeed.
    const permanent = isPermanentFailure(error);
    const lastAttempt = poison || permanent || receiveCount >= deps.maxReceiveCount;
    // The call this attempt recorded was refused, so it did not act: its record goes, and the next
    // attempt calls it.
    const failure = { effectNotPerformed: attempt.refusedCall !== undefined };
    let recorded = false;
    try {
      if (lastAttempt) {
        const keepUntil = retainUntil(clock(), deps.claimRetentionSeconds, begun.claim.expiresAt);
        await deps.claims.failProcessing(
          message.key,
          lease.token,
          summary,
          clock(),
          keepUntil,
          archiveKey,
          failure,
        );
      } else
        await deps.claims.releaseProcessing(message.key, lease.token, summary, clock(), archiveKey, failure);
      recorded = true;
    } catch (markError) {
      deps.log.warn('could not record the failure on the claim', {
        key: message.key,
        error: errorSummary(markError),
      });
    }
    // Moved to the DLQ now, once the claim says FAILED and why (else SQS retries, and the next
    // attempt fails it again).
    if (permanent && recorded && deps.deadLetters !== undefined) {
      try {
        deps.faultPoint?.('processor.failNow', message.eventId);
        await deps.deadLetters.send(body);
        deps.log.error(
          'the event can never succeed: its claim is FAILED and its message was moved to the DLQ',
          {
            key: message.key,
            eventId: message.eventId,
            eventType: message.eventType,
            receiveCount,
            error: summary,
          },
        );
        return { kind: 'failed', key: message.key, event: message, reason: summary };
      } catch (sendError) {
        deps.log.warn('could not move the failed event to the DLQ; SQS will redeliver it', {
          key: message.key,
          error: errorSummary(sendError),
        });
      }
    }
    deps.log.error(
      poison
        ? 'the message can never be processed; its claim is FAILED and the message goes to the DLQ'
        : lastAttempt
          ? 'processing failed for the last time; the message goes to the DLQ'
          : 'processing failed; SQS will redeliver',
      {
        key: message.key,
        eventId: message.eventId,
        eventType: message.eventType,
        receiveCount,
        maxReceiveCount: deps.maxReceiveCount,
        error: summary,
      },
    );
    throw error;
  }
}

/** How far a claim's markers say an event got. */
interface Progress {
  /** The claim's last step marker (`state` or an effect's name); none until the state step commits. */
  readonly lastStep: string | undefined;
  /** Planned effects whose markers are written, in order. */
  readonly completed: readonly string[];
  /** Planned effects still to run, in order. */
  readonly remaining: readonly string[];
}

function progressOf(claim: Pick<ClaimRecord, 'lastCompletedStep' | 'plannedEffects'>): Progress {
  const planned = claim.plannedEffects ?? [];
  const step = claim.lastCompletedStep;
  // No marker, or one naming no planned effect (`state`, or an effect renamed since): nothing is done.
  const done = (planned as readonly (string | undefined)[]).indexOf(step) + 1;
  return { lastStep: step, completed: planned.slice(0, done), remaining: planned.slice(done) };
}

function effectOf(applier: Applier, name: string): EffectDefinition | { run: Effect } | undefined {
  const effect = applier.effects?.[name];
  return typeof effect === 'function' ? { run: effect } : effect;
}

/** Step and fault-point names of the processor's own (an effect named so would collide with them). */
const RESERVED_STEP_NAMES: ReadonlySet<string> = new Set(['state', 'claim']);

function adapterOf(deps: ProcessorDeps, name: string): EffectAdapter | undefined {
  return deps.effects !== undefined && Object.hasOwn(deps.effects, name) ? deps.effects[name] : undefined;
}

/** The configured adapter the effect declares: none for a bare function or an effect the applier lacks. */
function declaredAdapter(applier: Applier, name: string, deps: ProcessorDeps): EffectAdapter | undefined {
  const effect = effectOf(applier, name);
  return effect !== undefined && 'adapter' in effect ? adapterOf(deps, effect.adapter) : undefined;
}

/** Whether running the effect again is harmless: its adapter honours the idempotency key. */
function isRepeatSafe(applier: Applier, name: string, deps: ProcessorDeps): boolean {
  return declaredAdapter(applier, name, deps)?.honoursIdempotencyKey === true;
}

/** The adapter's bound on one call (ms), when the effect declares an adapter that has one. */
function timeoutOf(applier: Applier, name: string, deps: ProcessorDeps): number | undefined {
  return declaredAdapter(applier, name, deps)?.timeoutMs;
}

/** What one attempt carries besides the event and its claim. */
interface AttemptContext {
  readonly remainingTimeMs: (() => number) | undefined;
  /** Filled with the effects this attempt records as unresumed (in doubt, or not run again). */
  readonly unresumed: string[];
  /**
   * Set when the call this attempt recorded (`effectAttempt`, an effect that may act twice) failed
   * in a way that says it did not act: only then does the failure drop the record. A refusal of
   * any other call (a repeat-safe effect run again before it) must leave an earlier attempt's
   * record of a call that may have acted where it is.
   */
  refusedCall?: string;
}

async function applyEvent(
  event: ProcessingEvent,
  claim: Pick<
    ClaimRecord,
    'lastCompletedStep' | 'plannedEffects' | 'replan' | 'effectAttempt' | 'effectAttemptAt'
  >,
  lease: Lease,
  archiveKey: string | undefined,
  deps: ProcessorDeps,
  attempt: AttemptContext,
): Promise<ProcessingOutcome> {
  const clock = deps.clock ?? Date.now;
  // Shopify's compliance topics are the processor's own, before (and besides) any applier; repeat-safe.
  const progress = progressOf(claim);
  const compliance = progress.lastStep !== undefined ? undefined : complianceRequestOf(event);
  if (compliance !== undefined) {
    if (deps.compliance === undefined) {
      deps.log.info('compliance request applied', {
        provider: event.provider,
        topic: compliance.topic,
        shop: compliance.shop,
        key: event.key,
        archive: 'off: nothing stored to redact or export',
      });
    } else {
      await applyCompliance(compliance, event, {
        store: deps.compliance,
        log: deps.log,
        clock,
        claims: deps.claims.redactions(),
        afterObject: (eventId) => deps.faultPoint?.('compliance.afterObject', eventId),
        ...(attempt.remainingTimeMs === undefined ? {} : { timeLeftMs: attempt.remainingTimeMs }),
      });
    }
  }
  const applier = resolveApplier(deps.appliers, event.provider, event.eventType);
  if (applier?.schema !== undefined) event = await checkedPayload(event, applier.schema);
  if (!applier) {
    // A warning: a misspelt applier key makes every such event unhandled (the UnhandledEvents alarm).
    deps.log.warn('no business applier for this event type; completing it as unhandled', {
      key: event.key,
      provider: event.provider,
      eventType: event.eventType,
    });
    await deps.claims.markStep(
      event.key,
      lease.token,
      {
        step: 'state',
        plannedEffects: [],
        done: compliance === undefined ? 'unhandled' : 'applied',
        archiveKey,
      },
      clock(),
    );
    return compliance === undefined ? 'unhandled' : 'applied';
  }

  let effects = progress.remaining;
  let outcome: ProcessingOutcome = 'applied';
  // Plan when the state is not committed yet, or when a forced replay asks for a new plan.
  if (progress.lastStep === undefined || claim.replan === true) {
    const committed = await commitState(event, applier, lease, archiveKey, progress, deps, attempt);
    if (committed.done) return committed.outcome;
    effects = committed.effects;
    outcome = committed.outcome;
    deps.faultPoint?.('processor.afterState', event.eventId);
  } else if (effects.length === 0) {
    // Every step is already done but the claim is not DONE (a re-created claim kept its markers,
    // or a forced replay set it back): finish it.
    await deps.claims.markStep(
      event.key,
      lease.token,
      { step: progress.lastStep, done: outcome, archiveKey },
      clock(),
    );
    return outcome;
  }
  // The archive key rides on the first claim write of an attempt that resumed after the state step
  // (a step written without one leaves the claim's as it is).
  let pendingArchiveKey = archiveKey;
  for (const [index, name] of effects.entries()) {
    const effect = effectOf(applier, name);
    if (!effect) throw new Error(`applier for ${event.eventType} planned effect "${name}" but defines none`);
    const last = index === effects.length - 1;
    const repeatSafe = isRepeatSafe(applier, name, deps);
    const markInDoubt = async (reason: string) => {
      deps.log.warn('effect in doubt: it may have acted, so it is not called again; check it by hand', {
        key: event.key,
        eventId: event.eventId,
        effect: name,
        reason,
      });
      await deps.claims.markStep(
        event.key,
        lease.token,
        {
          step: name,
          inDoubt: { effect: name, reason },
          ...(last ? { done: outcome } : {}),
          archiveKey: pendingArchiveKey,
        },
        clock(),
      );
      pendingArchiveKey = undefined;
      attempt.unresumed.push(name);
    };
    // An earlier attempt recorded calling it and nothing after: the call may have acted.
    if (!repeatSafe && claim.effectAttempt === name) {
      await markInDoubt(
        `${name} was called at ${claim.effectAttemptAt ?? 'an unknown time'} by an attempt that stopped before recording how the call ended`,
      );
      continue;
    }
    deps.faultPoint?.(effectFaultPoint('before', name), event.eventId);
    const signal = repeatSafe
      ? invocationDeadline(attempt)
      : await beginEffect(event, applier, name, lease, deps, attempt);
    const context: EffectContext = {
      idempotencyKey: `${event.key}:${name}`,
      adapters: deps.effects ?? {},
      signal,
    };
    try {
      await effect.run(event, context);
    } catch (error) {
      // A repeat-safe effect is simply retried; so is one whose call certainly did not act (and
      // then the record this attempt wrote before the call goes with the failure).
      if (repeatSafe) throw error;
      if (certainlyNotPerformed(error)) {
        attempt.refusedCall = name;
        throw error;
      }
      await markInDoubt(`${name}: ${errorSummary(error)}`);
      continue;
    }
    deps.faultPoint?.(effectFaultPoint('beforeMarker', name), event.eventId);
    // No marker after an effect whose adapter honours the Idempotency-Key, unless it is the last
    // (whose write is DONE): a retry that finds no marker runs it again and gets its first result
    // back, so the marker would save nothing but a repeat call on a crash, at a write unit on
    // every event. The next marker (or DONE) records it with the effects before it.
    if (!last && repeatSafe) {
      deps.faultPoint?.(effectFaultPoint('after', name), event.eventId);
      continue;
    }
    await deps.claims.markStep(
      event.key,
      lease.token,
      { step: name, ...(last ? { done: outcome } : {}), archiveKey: pendingArchiveKey },
      clock(),
    );
    pendingArchiveKey = undefined;
    deps.faultPoint?.(effectFaultPoint('after', name), event.eventId);
  }
  return outcome;
}

/**
 * The event with its payload as the applier's schema returns it; a payload the schema rejects can
 * never be applied: the event fails now, with the schema's issues as the reason.
 */
async function checkedPayload(
  event: ProcessingEvent,
  schema: NonNullable<Applier['schema']>,
): Promise<ProcessingEvent> {
  const result = await schema['~standard'].validate(event.payload);
  if (result.issues !== undefined) {
    throw new PermanentEventError(
      `the ${event.eventType} payload does not match the applier's schema: ${describeIssues(result.issues)}`,
    );
  }
  return { ...event, payload: result.value as ProcessingEvent['payload'] };
}

/** Aborts a second before the invocation ends, when its end is known. */
function invocationDeadline(attempt: AttemptContext): AbortSignal | undefined {
  if (attempt.remainingTimeMs === undefined) return undefined;
  return AbortSignal.timeout(Math.max(0, attempt.remainingTimeMs() - EFFECT_MARGIN_MS));
}

/**
 * Before an effect that may act twice: checks that its call can end while this worker still holds
 * the claim, then records the call on the claim (fenced) and renews the lease with the same write.
 * Returns the signal that aborts the call at its deadline. Throws, without calling the effect, when
 * the time left is too short (EffectDeadlineError) or the lease is lost (LeaseLostError).
 */
async function beginEffect(
  event: ProcessingEvent,
  applier: Applier,
  name: string,
  lease: Lease,
  deps: ProcessorDeps,
  attempt: AttemptContext,
): Promise<AbortSignal> {
  const clock = deps.clock ?? Date.now;
  const now = clock();
  const leaseUntil = now + deps.leaseSeconds * 1000;
  const invocationLeft = attempt.remainingTimeMs?.() ?? Number.POSITIVE_INFINITY;
  const leftMs = Math.min(leaseUntil - now, invocationLeft) - EFFECT_MARGIN_MS;
  const neededMs = timeoutOf(applier, name, deps) ?? 0;
  if (leftMs <= neededMs) throw new EffectDeadlineError(name, neededMs, leftMs);
  await deps.claims.beginEffect(event.key, lease.token, name, now, leaseUntil);
  // Measured from before the write: the write's own time comes out of the margin.
  return AbortSignal.timeout(Math.max(0, now + leftMs - clock()));
}

type Committed =
  | { readonly done: true; readonly outcome: ProcessingOutcome }
  | { readonly done: false; readonly outcome: ProcessingOutcome; readonly effects: readonly string[] };

/**
 * Plans and commits the business writes with the `state` marker, re-planning when a row moved under
 * us. Effects the claim already marks done (a forced replay) are never planned again.
 */
async function commitState(
  event: ProcessingEvent,
  applier: Applier,
  lease: Lease,
  archiveKey: string | undefined,
  progress: Progress,
  deps: ProcessorDeps,
  attempt: AttemptContext,
): Promise<Committed> {
  const clock = deps.clock ?? Date.now;
  for (let round = 1; ; round++) {
    const reads: ReadMark[] = [];
    const context: PlanContext = {
      read: async (table, pk, order, guard) => {
        const row = await deps.state.get(table, pk);
        const mark = readMark(table, pk, row, order, guard);
        reads.push(mark);
        return { row, newer: isNewer(order, row, guard), writtenByThisEvent: mark.writtenByThisEvent };
      },
      has: (adapter) => adapterOf(deps, adapter) !== undefined,
    };
    const plan = await applier.plan(event, context);
    // The rows already carry this event: its state committed in an earlier attempt.
    const own = reads.find((read) => read.writtenByThisEvent);
    if (own) return resumeFromRow(event, applier, lease, archiveKey, progress, own, deps, attempt);

    const writes = plan.writes ?? [];
    const plannedEffects = plan.effects ?? [];
    const reserved = plannedEffects.find((name) => RESERVED_STEP_NAMES.has(name));
    if (reserved !== undefined) {
      throw new Error(
        `applier for ${event.eventType} planned an effect named "${reserved}": state and claim are the processor's own step names`,
      );
    }
    const effects = plannedEffects.filter((name) => !progress.completed.includes(name));
    const outcome: ProcessingOutcome = plan.outcome ?? (writes.length > 0 ? 'applied' : 'noop');
    const done = effects.length === 0;
    const claimUpdate = deps.claims.stepUpdate(
      event.key,
      lease.token,
      {
        // After a forced replay, the markers of the effects already done stay where they were.
        step: progress.completed.at(-1) ?? 'state',
        plannedEffects: [...progress.completed, ...effects],
        writtenRows: writes.map((w) => `${w.table}:${w.pk}`),
        archiveKey,
        ...(done ? { done: outcome } : {}),
      },
      clock(),
    );
    try {
      await deps.state.commit(writes, reads, claimUpdate, clock(), plannedEffects);
      return done ? { done: true, outcome } : { done: false, outcome, effects };
    } catch (error) {
      if (error instanceof WriteConflictError && round < MAX_PLAN_ROUNDS) continue;
      throw error;
    }
  }
}

/**
 * A business row's last writer is this event, so its state transaction committed, yet the claim
 * has no marker of it: an attempt's claim expired or was replaced under it (a redrive after the TTL,
 * a receiver's takeover of an expired claim), or a forced replay asks for a new plan. That event is
 * "applied by this event", not stale: its effects are resumed.
 *
 * With the claim's own markers (a forced replay) the remaining effects are known. Without them,
 * which effects already ran is unknown: the row records which ones the event planned; those whose
 * adapter honours `Idempotency-Key` are run again (a repeat returns the first result), the others
 * are not (they might act twice) and are recorded on the claim as `unresumedEffects`, logged and
 * counted, for an operator to decide.
 */
async function resumeFromRow(
  event: ProcessingEvent,
  applier: Applier,
  lease: Lease,
  archiveKey: string | undefined,
  progress: Progress,
  own: ReadMark,
  deps: ProcessorDeps,
  attempt: AttemptContext,
): Promise<Committed> {
  const clock = deps.clock ?? Date.now;
  if (progress.lastStep !== undefined) {
    // A forced replay of an event whose claim kept its markers: nothing new to write or run.
    if (progress.remaining.length === 0) {
      await deps.claims.markStep(
        event.key,
        lease.token,
        { step: progress.completed.at(-1) ?? 'state', done: 'applied', archiveKey },
        clock(),
      );
      return { done: true, outcome: 'applied' };
    }
    return { done: false, outcome: 'applied', effects: progress.remaining };
  }

  const recorded = own.recordedEffects;
  // A row that does not record its planned effects: which ones ran is unknown, so none is run again.
  const effects = recorded === undefined ? [] : recorded.filter((name) => isRepeatSafe(applier, name, deps));
  const unresumed = recorded === undefined ? ['unknown'] : recorded.filter((name) => !effects.includes(name));
  const done = effects.length === 0;
  if (unresumed.length > 0) {
    deps.log.warn(
      recorded === undefined
        ? 'resuming an event from its business row, which does not record its planned effects: none was run again'
        : 'resuming an event from its business row: effects that may act twice were not run again',
      { key: event.key, eventId: event.eventId, row: `${own.table}:${own.pk}`, resumed: effects, unresumed },
    );
  }
  attempt.unresumed.push(...unresumed);
  await deps.claims.markStep(
    event.key,
    lease.token,
    {
      step: 'state',
      plannedEffects: effects,
      writtenRows: [`${own.table}:${own.pk}`],
      recoveredFrom: RECOVERED_FROM_BUSINESS_ROW,
      unresumedEffects: unresumed,
      archiveKey,
      ...(done ? { done: 'applied' } : {}),
    },
    clock(),
  );
  return done ? { done: true, outcome: 'applied' } : { done: false, outcome: 'applied', effects };
}
