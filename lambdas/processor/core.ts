/**
 * The processor's core: apply one queued event exactly once. Pure of the SQS wiring: the claim
 * store, the business tables, the handlers, the effect adapters and the clock are injected.
 *
 *   claim the processing lease ─▶ plan (read rows) ─▶ commit writes + step `state` (one transaction)
 *     ─▶ effect 1 ─▶ marker ─▶ effect 2 ─▶ marker + DONE
 *
 * A resumed event (a worker died, or an attempt failed) skips every step its marker says is done.
 * The rules are written down in docs/processor.md.
 */
import { randomUUID } from 'node:crypto';
import type { EventMessage } from '../queue/event-message';
import { decodeBody } from '../queue/event-message';
import type { FaultInjector } from '../shared/faults';
import { matchEventType } from '../shared/keys';
import type { ClaimRecord, Lease, NewClaim } from '../store/claim';
import { LeaseLostError, type ProcessingClaims, type ProcessingOutcome } from '../store/processing-claims';
import type { PayloadArchive } from './archive';
import { isNewer, type ReadMark, type StateStore, WriteConflictError } from './state-store';
import type {
  BusinessHandler,
  EffectContext,
  HandlerRegistry,
  LedgerAdapter,
  MailerAdapter,
  PlanContext,
  ProcessingEvent,
} from './types';

export interface ProcessorLog {
  info(message: string, details: Record<string, unknown>): void;
  warn(message: string, details: Record<string, unknown>): void;
  error(message: string, details: Record<string, unknown>): void;
}

export interface ProcessorDeps {
  readonly claims: ProcessingClaims;
  readonly state: StateStore;
  readonly handlers: HandlerRegistry;
  readonly leaseSeconds: number;
  readonly maxReceiveCount: number;
  readonly ledger?: LedgerAdapter;
  readonly mailer?: MailerAdapter;
  readonly log: ProcessorLog;
  readonly clock?: () => number;
  readonly newLeaseToken?: () => string;
  readonly faultPoint?: FaultInjector;
  /** Where payloads are archived; archiving is off when absent. */
  readonly archive?: PayloadArchive;
}

export type ProcessResult =
  | {
      readonly kind: 'done';
      readonly outcome: ProcessingOutcome;
      readonly key: string;
      readonly event: EventMessage;
    }
  /** The claim was already DONE: the message was a duplicate and nothing was applied. */
  | { readonly kind: 'already-done'; readonly key: string; readonly event: EventMessage };

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

/** Lifetime of a claim the processor has to re-create, at least: long enough to absorb redeliveries. */
const FALLBACK_CLAIM_TTL_SECONDS = 24 * 3600;

/** How many times a plan is redone when a business row changed under it before giving up the attempt. */
const MAX_PLAN_ROUNDS = 5;

export function parseEventMessage(body: string): ProcessingEvent {
  let message: EventMessage;
  try {
    message = JSON.parse(body) as EventMessage;
  } catch {
    throw new PoisonMessageError('message body is not JSON');
  }
  if (
    typeof message !== 'object' ||
    message === null ||
    message.v !== 1 ||
    typeof message.key !== 'string' ||
    typeof message.provider !== 'string' ||
    typeof message.eventId !== 'string' ||
    typeof message.eventType !== 'string' ||
    typeof message.body !== 'string'
  ) {
    throw new PoisonMessageError('message is not a version 1 event message');
  }
  return { ...message, payload: parsePayload(message) };
}

function parsePayload(message: EventMessage): Record<string, unknown> {
  let text = decodeBody(message).toString('utf8');
  const contentType = message.headers?.['content-type'] ?? '';
  // GitHub can deliver `application/x-www-form-urlencoded` with the JSON in `payload`.
  if (contentType.startsWith('application/x-www-form-urlencoded')) {
    text = new URLSearchParams(text).get('payload') ?? '';
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

export function resolveHandler(
  registry: HandlerRegistry,
  provider: string,
  eventType: string,
): BusinessHandler | undefined {
  const byType = Object.hasOwn(registry, provider) ? registry[provider] : undefined;
  return byType ? matchEventType(byType, eventType) : undefined;
}

const errorSummary = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

/**
 * Processes one message. Resolves when the event is DONE (now or before); throws when the message
 * must be retried (SQS redelivers it) or, after `maxReceiveCount` attempts, left to the DLQ.
 */
export async function processMessage(
  body: string,
  receiveCount: number,
  deps: ProcessorDeps,
): Promise<ProcessResult> {
  const event = parseEventMessage(body);
  const clock = deps.clock ?? Date.now;
  const lease: Lease = {
    token: (deps.newLeaseToken ?? randomUUID)(),
    expiresAt: clock() + deps.leaseSeconds * 1000,
    owner: 'processor',
  };
  const claim: NewClaim = {
    pk: event.key,
    provider: event.provider,
    account: event.account,
    eventId: event.eventId,
    eventType: event.eventType,
    ...(event.objectId === undefined ? {} : { objectId: event.objectId }),
    // Used only when the processor must re-create the claim (it expired, or a replay outlived it).
    expiresAt: Math.max(event.claimExpiresAt ?? 0, Math.floor(clock() / 1000) + FALLBACK_CLAIM_TTL_SECONDS),
  };
  const begun = await deps.claims.beginProcessing(claim, lease, clock());
  if (begun.kind === 'done') return { kind: 'already-done', key: event.key, event };
  if (begun.kind === 'busy') throw new ClaimBusyError(event.key);

  // Recorded on the claim with the next write this attempt makes (state step, failure or release).
  let archiveKey: string | undefined;
  try {
    if (deps.archive && begun.claim.archiveKey === undefined) {
      const { payload: _payload, ...message } = event;
      archiveKey = await deps.archive.put(message, begun.claim.firstSeenAt, clock());
    }
    deps.faultPoint?.('processor.afterClaim', event.eventId);
    const outcome = await applyEvent(event, begun.claim, lease, archiveKey, deps);
    return { kind: 'done', outcome, key: event.key, event };
  } catch (error) {
    if (error instanceof LeaseLostError) {
      // Another worker took the event over: leave the claim to it; our message is retried and
      // then acknowledged as already done.
      deps.log.warn('processing lease was taken over; leaving the event to its new holder', {
        key: event.key,
      });
      throw error;
    }
    const summary = errorSummary(error);
    const lastAttempt = receiveCount >= deps.maxReceiveCount;
    try {
      if (lastAttempt) await deps.claims.failProcessing(event.key, lease.token, summary, clock(), archiveKey);
      else await deps.claims.releaseProcessing(event.key, lease.token, summary, clock(), archiveKey);
    } catch (markError) {
      deps.log.warn('could not record the failure on the claim', {
        key: event.key,
        error: errorSummary(markError),
      });
    }
    deps.log.error(
      lastAttempt
        ? 'processing failed for the last time; the message goes to the DLQ'
        : 'processing failed; SQS will redeliver',
      {
        key: event.key,
        eventId: event.eventId,
        eventType: event.eventType,
        receiveCount,
        maxReceiveCount: deps.maxReceiveCount,
        error: summary,
      },
    );
    throw error;
  }
}

async function applyEvent(
  event: ProcessingEvent,
  claim: Pick<ClaimRecord, 'lastCompletedStep' | 'plannedEffects'>,
  lease: Lease,
  archiveKey: string | undefined,
  deps: ProcessorDeps,
): Promise<ProcessingOutcome> {
  const clock = deps.clock ?? Date.now;
  const { lastCompletedStep, plannedEffects } = claim;
  const archived = archiveKey === undefined ? {} : { archiveKey };
  const handler = resolveHandler(deps.handlers, event.provider, event.eventType);
  if (!handler) {
    deps.log.info('no business handler for this event type; completing it as unhandled', {
      key: event.key,
      provider: event.provider,
      eventType: event.eventType,
    });
    await deps.claims.markStep(
      event.key,
      lease.token,
      { step: 'state', plannedEffects: [], done: 'unhandled', ...archived },
      clock(),
    );
    return 'unhandled';
  }

  let effects = plannedEffects ?? [];
  let outcome: ProcessingOutcome = 'applied';
  if (lastCompletedStep === undefined) {
    const committed = await commitState(event, handler, lease, archiveKey, deps);
    if (committed.done) return committed.outcome;
    effects = committed.effects;
    outcome = committed.outcome;
  }

  const start =
    lastCompletedStep === undefined || lastCompletedStep === 'state'
      ? 0
      : effects.indexOf(lastCompletedStep) + 1;
  if (start >= effects.length) {
    // Every step is already done but the claim is not DONE (a forced replay set it back): finish it.
    await deps.claims.markStep(
      event.key,
      lease.token,
      { step: lastCompletedStep ?? 'state', done: outcome, ...archived },
      clock(),
    );
    return outcome;
  }
  for (let index = start; index < effects.length; index++) {
    const name = effects[index] ?? '';
    const effect = handler.effects?.[name];
    if (!effect) throw new Error(`handler for ${event.eventType} planned effect "${name}" but defines none`);
    const context: EffectContext = {
      idempotencyKey: `${event.key}:${name}`,
      ledger: deps.ledger,
      mailer: deps.mailer,
    };
    await effect(event, context);
    if (name === 'ledger') deps.faultPoint?.('processor.beforeLedgerMarker', event.eventId);
    const last = index === effects.length - 1;
    await deps.claims.markStep(
      event.key,
      lease.token,
      // The archive key rides on the first write of an attempt that resumed after the state step.
      { step: name, ...(last ? { done: outcome } : {}), ...(index === start ? archived : {}) },
      clock(),
    );
    if (name === 'ledger') deps.faultPoint?.('processor.afterLedger', event.eventId);
  }
  return outcome;
}

/** Plans and commits the business writes with the `state` marker, re-planning when a row moved under us. */
async function commitState(
  event: ProcessingEvent,
  handler: BusinessHandler,
  lease: Lease,
  archiveKey: string | undefined,
  deps: ProcessorDeps,
): Promise<
  | { done: true; outcome: ProcessingOutcome }
  | { done: false; outcome: ProcessingOutcome; effects: readonly string[] }
> {
  const clock = deps.clock ?? Date.now;
  for (let round = 1; ; round++) {
    const reads: ReadMark[] = [];
    const context: PlanContext = {
      read: async (table, pk, order, guard) => {
        const row = await deps.state.get(table, pk);
        const guardName = guard ?? 'lastEvent';
        const lastEventId = row?.[`${guardName}Id`];
        reads.push({
          table,
          pk,
          guard: guardName,
          exists: row !== undefined,
          lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined,
        });
        return { row, newer: isNewer(order, row, guard) };
      },
      has: (adapter) => (adapter === 'ledger' ? deps.ledger !== undefined : deps.mailer !== undefined),
    };
    const plan = await handler.plan(event, context);
    const writes = plan.writes ?? [];
    const effects = plan.effects ?? [];
    const outcome: ProcessingOutcome = plan.outcome ?? (writes.length > 0 ? 'applied' : 'noop');
    const done = effects.length === 0;
    const claimUpdate = deps.claims.stepUpdate(
      event.key,
      lease.token,
      {
        step: 'state',
        plannedEffects: effects,
        writtenRows: writes.map((w) => `${w.table}:${w.pk}`),
        ...(archiveKey === undefined ? {} : { archiveKey }),
        ...(done ? { done: outcome } : {}),
      },
      clock(),
    );
    try {
      await deps.state.commit(writes, reads, claimUpdate, clock());
      return done ? { done: true, outcome } : { done: false, outcome, effects };
    } catch (error) {
      if (error instanceof WriteConflictError && round < MAX_PLAN_ROUNDS) continue;
      throw error;
    }
  }
}
