/**
 * The receiver's core: verify, claim once, enqueue, answer. Pure of AWS: the claim store, the queue,
 * the secrets and the clock are injected. The rules it enforces are written down in docs/rules.md.
 */

import { randomUUID } from 'node:crypto';
import { getProvider } from '../providers/index.js';
import type { Provider, ProviderEvent, VerifyFailureReason, WebhookRequest } from '../providers/types.js';
import {
  claimCheckOf,
  EVENT_MESSAGE_VERSION,
  type EventMessage,
  encodeBody,
  forwardedHeaders,
  SQS_MAX_MESSAGE_BYTES,
} from '../queue/event-message.js';
import type { EventQueue } from '../queue/event-queue.js';
import { retainUntil } from '../shared/claim-retention.js';
import type { FaultInjector } from '../shared/faults.js';
import { buildIdempotencyKey, MAX_KEY_BYTES, resolveKeyRule } from '../shared/keys.js';
import { publicWebhookUrl } from '../shared/public-url.js';
import type { SecretSource } from '../shared/secrets.js';
import {
  type ClaimRecord,
  ClaimStatus,
  type ClaimStore,
  isLeaseLive,
  type Lease,
  type NewClaim,
} from '../store/claim.js';
import type { PayloadArchive } from '../store/payload-archive.js';
import type { ReceiverSettings } from './settings.js';

/** One HTTP delivery, as the adapter hands it over. Header names must be lower-case. */
export interface IncomingDelivery {
  readonly providerId: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: string | undefined;
  readonly isBase64Encoded: boolean;
  /** The query string as received, without `?` (part of what URL-signing providers sign). */
  readonly rawQuery?: string;
}

export type DeliveryOutcome =
  | 'accepted'
  | 'duplicate'
  /** An authentic handshake or ping (Slack `url_verification`, Discord PING): answered, never claimed. */
  | 'handshake'
  | 'invalid_signature'
  | 'malformed'
  | 'unknown_provider'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'in_flight'
  | 'enqueue_failed'
  | 'not_configured'
  | 'internal_error';

export interface DeliveryResult {
  readonly statusCode: number;
  readonly outcome: DeliveryOutcome;
  /** Machine-readable detail (`signature_mismatch`, `missing_event_id`, ...). */
  readonly reason?: string;
  readonly message: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly provider?: Provider['id'];
  readonly key?: string;
  readonly eventId?: string;
  readonly eventType?: string;
  /** Deliveries of the key seen so far, this one included (claims only). */
  readonly deliveries?: number;
  /** Messages this delivery put on the queue (0 or 1). */
  readonly enqueued: number;
  /** True when this delivery took over a stalled or failed claim rather than creating one. */
  readonly tookOver?: boolean;
  /** The provider's own answer (handshakes), sent instead of the receiver's JSON. */
  readonly response?: { readonly contentType: string; readonly body: string };
}

/** Where the core reports what an operator should know beyond the per-delivery log line. */
export interface ReceiverLog {
  warn(message: string, details: Record<string, unknown>): void;
  error(message: string, details: Record<string, unknown>): void;
}

export interface ReceiverDeps {
  readonly settings: ReceiverSettings;
  readonly store: ClaimStore;
  readonly queue: EventQueue;
  readonly secrets: SecretSource;
  readonly log: ReceiverLog;
  /**
   * The archive bucket, where a body too large for a queue message is written before a claim check
   * is sent. Without it, messages over SQS's limit are refused with 413.
   */
  readonly archive?: Pick<PayloadArchive, 'put'>;
  /** Epoch milliseconds. */
  readonly clock?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly newLeaseToken?: () => string;
  /** Test and local-stack hook: throws to simulate a crash at a named point. */
  readonly faultPoint?: FaultInjector;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function reject(
  statusCode: number,
  outcome: DeliveryOutcome,
  message: string,
  extra: Partial<DeliveryResult> = {},
): DeliveryResult {
  return { statusCode, outcome, message, enqueued: 0, ...extra };
}

const errorSummary = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

/** Upper bound on claim/inspect rounds for one delivery, whatever the timing: a guard, not a tuning knob. */
const MAX_ROUNDS = 200;

export async function receiveDelivery(
  delivery: IncomingDelivery,
  deps: ReceiverDeps,
): Promise<DeliveryResult> {
  try {
    return await receive(delivery, deps);
  } catch (error) {
    deps.log.error('delivery failed with an unexpected error', { error: errorSummary(error) });
    return reject(500, 'internal_error', 'Internal error; the delivery was not accepted, please retry.');
  }
}

/**
 * An event taken or already held, answered in the provider's own format when it has one
 * (`acknowledge`); the outcome, the metrics and the log line stay the receiver's.
 */
/** Names the outcome of a delivery answered in the provider's own format. */
export const OUTCOME_HEADER = 'x-webhook-outcome';

function withProviderReply(
  provider: Provider,
  request: WebhookRequest,
  result: DeliveryResult,
): DeliveryResult {
  if (result.outcome !== 'accepted' && result.outcome !== 'duplicate') return result;
  const reply = provider.acknowledge?.(request, result.outcome);
  if (reply === undefined) return result;
  return {
    ...result,
    statusCode: reply.statusCode,
    // The receiver's own verdict stays visible to the sender's tooling and to `npm run send`.
    headers: { ...result.headers, [OUTCOME_HEADER]: result.outcome },
    response: { contentType: reply.contentType, body: reply.body },
  };
}

async function receive(delivery: IncomingDelivery, deps: ReceiverDeps): Promise<DeliveryResult> {
  const clock = deps.clock ?? Date.now;
  const provider = getProvider(delivery.providerId);
  if (!provider) return reject(404, 'unknown_provider', 'No webhook provider is configured at this path.');
  if (delivery.method.toUpperCase() !== 'POST') {
    return reject(405, 'method_not_allowed', 'Webhooks must be sent with POST.', {
      provider: provider.id,
      headers: { allow: 'POST' },
    });
  }

  const { maxBodyBytes } = deps.settings;
  const body = delivery.body ?? '';
  const rawBody = delivery.isBase64Encoded ? decodeBase64Within(body, maxBodyBytes) : Buffer.from(body);
  if (rawBody === undefined || rawBody.length > maxBodyBytes) return tooLarge(provider, maxBodyBytes);

  // A provider that signs its public URL answers `public_url_not_configured` without one (below).
  const { publicBaseUrl } = deps.settings;
  const received: WebhookRequest = {
    headers: delivery.headers,
    rawBody,
    ...(publicBaseUrl === undefined
      ? {}
      : { url: publicWebhookUrl(publicBaseUrl, provider.id, delivery.rawQuery) }),
  };
  // The unsigned scope header only chooses the secret: an account with its own accepts no other.
  const scope = provider.secretScope?.(received);
  const secrets = await deps.secrets.getSecrets(provider.id, scope);
  // Only accounts have secrets, and none for the account named (or none is named): the sender's
  // headers are at fault, not the configuration.
  if (secrets.length === 0 && (await deps.secrets.hasAccountSecrets?.(provider.id))) {
    return reject(401, 'invalid_signature', VERIFY_MESSAGES.unknown_account, {
      provider: provider.id,
      reason: 'unknown_account',
    });
  }
  // No secret at all: every provider's `verify` answers `no_secret_configured` (500 below).
  const settings = deps.settings.providers[provider.id];
  // The settings are parsed for the same registry: a gap is a wiring defect, answered 500 above.
  if (!settings) throw new Error(`the receiver's settings have no entry for provider ${provider.id}`);
  const now = clock();
  const verification = provider.verify(received, {
    secrets,
    nowSeconds: Math.floor(now / 1000),
    toleranceSeconds: settings.toleranceSeconds,
  });
  if (!verification.ok) {
    const { reason } = verification;
    // The receiver's configuration, not the sender's bytes (a secret in no format the scheme reads):
    // 500, so the provider keeps retrying until the operator fixes it.
    if (reason === 'no_secret_configured' || reason === 'public_url_not_configured') {
      return notConfigured(provider, reason, deps);
    }
    return reject(401, 'invalid_signature', VERIFY_MESSAGES[reason], { provider: provider.id, reason });
  }

  // The body's format is decided here and travels with the event: the processor reads the body
  // with the same reader and the same format, though it has no URL (docs/rules.md, section 6).
  const bodyFormat = provider.bodyFormat?.(received);

  // Authentic, and not an event: the provider's own answer, with nothing written or sent.
  const handshake = provider.handshake?.(received);
  if (handshake !== undefined) {
    return {
      statusCode: handshake.statusCode,
      outcome: 'handshake',
      reason: handshake.name,
      message: `Answered the provider's ${handshake.name}; nothing was claimed or queued.`,
      provider: provider.id,
      enqueued: 0,
      response: { contentType: handshake.contentType, body: handshake.body },
    };
  }

  const extracted = provider.extract(received);
  if (!extracted.ok && extracted.reason === 'scope_mismatch') {
    // Authentic bytes under another account's headers: a replay, refused as unauthentic for that account.
    return reject(401, 'invalid_signature', VERIFY_MESSAGES.scope_mismatch, {
      provider: provider.id,
      reason: extracted.reason,
    });
  }
  if (!extracted.ok) {
    return reject(400, 'malformed', `The payload is authentic but unusable: ${extracted.reason}.`, {
      provider: provider.id,
      reason: extracted.reason,
    });
  }
  const event = extracted.event;
  const rule = resolveKeyRule(settings.keyRules, event.eventType);
  const keyResult = buildIdempotencyKey(provider.id, event, rule);
  const ids = { provider: provider.id, eventId: event.eventId, eventType: event.eventType };
  if (!keyResult.ok && keyResult.reason === 'key_too_long')
    return keyTooLong(provider, event, keyResult.bytes, deps);
  if (!keyResult.ok) {
    return reject(
      400,
      'malformed',
      `The ${rule.kind} key rule needs an object id and the payload has none.`,
      {
        ...ids,
        reason: keyResult.reason,
      },
    );
  }
  const key = keyResult.key;
  // The provider's retry window, but never shorter than anything that can still redeliver the event.
  const expiresAt = retainUntil(now, Math.max(settings.claimTtlSeconds, deps.settings.claimRetentionSeconds));

  const message: EventMessage = {
    v: EVENT_MESSAGE_VERSION,
    key,
    provider: provider.id,
    ...pickEvent(event),
    receivedAt: new Date(now).toISOString(),
    claimExpiresAt: expiresAt,
    headers: forwardedHeaders(delivery.headers),
    ...encodeBody(rawBody),
    ...(bodyFormat === undefined ? {} : { bodyFormat }),
  };
  const outgoing = planMessage(message, rawBody.length, deps);
  if (outgoing === undefined) {
    // Only without an archive bucket: then nothing can carry a message past SQS's limit.
    return tooLarge(provider, SQS_MAX_MESSAGE_BYTES, { ...ids, key, reason: 'message_too_large' });
  }

  const claim: NewClaim = {
    pk: key,
    provider: provider.id,
    account: event.account,
    eventId: event.eventId,
    eventType: event.eventType,
    ...(event.objectId === undefined ? {} : { objectId: event.objectId }),
    expiresAt,
    ...(deps.settings.markEnqueued ? {} : { unmarked: true }),
  };
  return withProviderReply(provider, received, await claimAndEnqueue(claim, outgoing, { ...ids, key }, deps));
}

/**
 * What goes on the queue: the message itself when it is within the claim-check threshold, else a
 * claim check (the message goes to the archive bucket first, and a pointer to it on the queue).
 * Undefined when the message is too large for SQS and there is no bucket to put it in.
 */
type Outgoing =
  | { readonly kind: 'inline'; readonly body: string }
  | {
      readonly kind: 'claim-check';
      readonly message: EventMessage;
      readonly bodyBytes: number;
      readonly archive: Pick<PayloadArchive, 'put'>;
    };

function planMessage(message: EventMessage, bodyBytes: number, deps: ReceiverDeps): Outgoing | undefined {
  const body = JSON.stringify(message);
  const size = Buffer.byteLength(body);
  if (size <= deps.settings.claimCheckThresholdBytes) return { kind: 'inline', body };
  if (deps.archive) return { kind: 'claim-check', message, bodyBytes, archive: deps.archive };
  return size <= SQS_MAX_MESSAGE_BYTES ? { kind: 'inline', body } : undefined;
}

/**
 * A base64 body's bytes, or undefined when its length alone shows it decodes to more than `maxBytes`:
 * then it is refused before it is decoded. Four characters carry three bytes, and padding makes
 * the last group count up to two more than it holds, so a body of exactly `maxBytes` passes.
 */
function decodeBase64Within(body: string, maxBytes: number): Buffer | undefined {
  if (Math.floor((body.length * 3) / 4) > maxBytes + 2) return undefined;
  return Buffer.from(body, 'base64');
}

function pickEvent(event: ProviderEvent): ProviderEvent {
  return {
    eventId: event.eventId,
    eventType: event.eventType,
    account: event.account,
    ...(event.objectId === undefined ? {} : { objectId: event.objectId }),
    ...(event.objectKind === undefined ? {} : { objectKind: event.objectKind }),
    ...(event.occurredAt === undefined ? {} : { occurredAt: event.occurredAt }),
  };
}

/** How much of an over-long id the log shows: enough to recognise it, not the whole of it. */
const LOGGED_ID_CHARS = 100;

/**
 * An event whose key could not be stored (over `MAX_KEY_BYTES`): a 400 that every delivery of it gets
 * again, so the provider stops retrying and nothing is written. The ids are left out of the answer
 * and cut short in the log: they are what is too long.
 */
function keyTooLong(
  provider: Provider,
  event: ProviderEvent,
  bytes: number,
  deps: ReceiverDeps,
): DeliveryResult {
  deps.log.warn('refused an event whose idempotency key would be too long to store', {
    provider: provider.id,
    keyBytes: bytes,
    maxKeyBytes: MAX_KEY_BYTES,
    eventIdBytes: Buffer.byteLength(event.eventId),
    eventIdStart: event.eventId.slice(0, LOGGED_ID_CHARS),
    accountStart: event.account.slice(0, LOGGED_ID_CHARS),
  });
  return reject(
    400,
    'malformed',
    `The event's idempotency key would be ${bytes} bytes, over the ${MAX_KEY_BYTES}-byte limit: no provider issues ids that long.`,
    { provider: provider.id, reason: 'key_too_long' },
  );
}

function tooLarge(
  provider: Provider,
  maxBodyBytes: number,
  extra: Partial<DeliveryResult> = {},
): DeliveryResult {
  return reject(
    413,
    'payload_too_large',
    `The body is larger than the receiver accepts (${maxBodyBytes} bytes).`,
    {
      provider: provider.id,
      reason: 'body_too_large',
      ...extra,
    },
  );
}

/** Why the receiver cannot check any delivery for a provider: its configuration, answered 500. */
type ConfigurationGap = Extract<VerifyFailureReason, 'no_secret_configured' | 'public_url_not_configured'>;

const NOT_CONFIGURED: Record<ConfigurationGap, { readonly log: string; readonly message: string }> = {
  no_secret_configured: {
    log: 'no usable signing secret is configured for the provider (none, or none in the format its scheme reads): every delivery is refused',
    message: 'The receiver has no usable secret for this provider.',
  },
  public_url_not_configured: {
    log: 'the provider signs its public URL and no PUBLIC_BASE_URL is set: every delivery is refused',
    message: 'The receiver does not know its public URL for this provider.',
  },
};

function notConfigured(provider: Provider, reason: ConfigurationGap, deps: ReceiverDeps): DeliveryResult {
  deps.log.error(NOT_CONFIGURED[reason].log, { provider: provider.id, reason });
  return reject(500, 'not_configured', NOT_CONFIGURED[reason].message, { provider: provider.id, reason });
}

/** The message of each 401: a verify failure, or an account the delivery's headers name. */
const VERIFY_MESSAGES: Record<
  Exclude<VerifyFailureReason, ConfigurationGap> | 'scope_mismatch' | 'unknown_account',
  string
> = {
  missing_signature: 'The signature header is missing.',
  malformed_signature: 'The signature header is malformed.',
  signature_mismatch: 'The signature does not match any configured secret.',
  timestamp_outside_tolerance: 'The signed timestamp is outside the accepted tolerance.',
  scope_mismatch: 'The unsigned account headers do not match the signed payload.',
  unknown_account: 'No secret is configured for the account this delivery names, or it names none.',
};

type Ids = Required<Pick<DeliveryResult, 'provider' | 'eventId' | 'eventType' | 'key'>>;

/** What a delivery does about a live claim it did not create. */
type Decision = 'duplicate' | 'take-over' | 'wait' | 'send-copy';

/**
 * ENQUEUED, PROCESSING and DONE claims have their event safely on the queue or applied: a duplicate
 * is answered 200 with nothing sent. (PROCESSING: the processor only deletes the message after DONE;
 * if it dies, SQS makes the message visible again.) A RECEIVED claim whose lease is live belongs to a
 * delivery still enqueueing: wait for it. A RECEIVED claim whose lease ran out (its receiver died or
 * released it after a failed send) and a FAILED claim are taken over and enqueued again.
 *
 * An `unmarked` RECEIVED claim (`markEnqueued: false`) never gets its ENQUEUED mark, so there is
 * nothing to wait for and no way to know whether its holder's send went through: the duplicate
 * sends a copy of its own (no claim write) and answers 200 only once that copy is queued. The
 * processor takes the first copy and finds the claim busy or DONE for the others.
 */
export function decide(claim: ClaimRecord, nowMs: number): Decision {
  switch (claim.status) {
    case ClaimStatus.Enqueued:
    case ClaimStatus.Processing:
    case ClaimStatus.Done:
      return 'duplicate';
    case ClaimStatus.Failed:
      return 'take-over';
    case ClaimStatus.Received:
      if (claim.unmarked === true) return 'send-copy';
      return isLeaseLive(claim, nowMs) ? 'wait' : 'take-over';
    default:
      // An unknown status written by a newer version: never answer for it blindly.
      return 'wait';
  }
}

async function claimAndEnqueue(
  claim: NewClaim,
  outgoing: Outgoing,
  ids: Ids,
  deps: ReceiverDeps,
): Promise<DeliveryResult> {
  const clock = deps.clock ?? Date.now;
  const sleep = deps.sleep ?? defaultSleep;
  const { settings, store } = deps;
  const newLease = (): Lease => ({
    token: (deps.newLeaseToken ?? randomUUID)(),
    expiresAt: clock() + settings.leaseSeconds * 1000,
    owner: 'receiver',
  });
  const waitUntil = clock() + settings.duplicateWaitMs;
  // Without the duplicate counter a claim's `deliveries` says nothing about duplicates: not answered.
  const countsOn = settings.countDuplicates;
  const counts = (deliveries: number) => (countsOn ? { deliveries } : {});

  let counted = false;
  let current: ClaimRecord | undefined;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    if (current === undefined) {
      const lease = newLease();
      const created = await store.createClaim(claim, lease, clock());
      if (created.created) {
        const held = { lease, firstSeenAt: created.claim.firstSeenAt };
        return enqueueAsHolder(claim.pk, held, outgoing, ids, 1, false, deps);
      }
      if (settings.countDuplicates && !counted) {
        // One more delivery of a live claim: count it (the answer to "was it claimed once or twice?").
        current = await store.recordDuplicate(claim.pk, clock());
        counted = current !== undefined;
      } else {
        // Uncounted (or counted already): the claim the failed condition returned, at no extra cost.
        current = created.existing;
      }
      if (current === undefined) continue; // It expired or vanished in between: claim again.
    }

    const now = clock();
    const decision = decide(current, now);
    if (decision === 'send-copy') return sendCopy(claim.pk, current, outgoing, ids, counts, deps);
    if (decision === 'duplicate') {
      return {
        statusCode: 200,
        outcome: 'duplicate',
        message: `Already received (${current.status}); nothing new was queued.`,
        ...ids,
        ...counts(current.deliveries),
        enqueued: 0,
      };
    }
    if (decision === 'take-over') {
      const lease = newLease();
      const taken = await store.takeOver(
        claim.pk,
        { status: current.status, leaseToken: current.leaseToken },
        lease,
        clock(),
        { unmarked: !settings.markEnqueued },
      );
      if (taken) {
        const held = { lease, firstSeenAt: taken.firstSeenAt };
        return enqueueAsHolder(
          claim.pk,
          held,
          outgoing,
          ids,
          countsOn ? taken.deliveries : undefined,
          true,
          deps,
        );
      }
      // Someone else moved it first: look again.
      current = await store.getClaim(claim.pk, clock());
      continue;
    }
    // wait: another delivery holds the claim and is still enqueueing.
    if (clock() + settings.duplicatePollMs > waitUntil) {
      const retryAfter = Math.min(
        settings.leaseSeconds,
        Math.max(1, Math.ceil(((current.leaseExpiresAt ?? now) - now) / 1000)),
      );
      return {
        statusCode: 503,
        outcome: 'in_flight',
        message: 'An earlier delivery of this event is still being accepted; retry shortly.',
        headers: { 'retry-after': String(retryAfter) },
        ...ids,
        ...counts(current.deliveries),
        enqueued: 0,
      };
    }
    await sleep(settings.duplicatePollMs);
    current = await store.getClaim(claim.pk, clock());
  }
  deps.log.error('claim did not settle; answering 503', { key: claim.pk });
  return reject(503, 'in_flight', 'The claim did not settle; retry shortly.', {
    ...ids,
    headers: { 'retry-after': '1' },
  });
}

/** A claim this delivery holds: its lease, and the claim's first-seen time (it names the archive object). */
interface HeldClaim {
  readonly lease: Lease;
  readonly firstSeenAt: string;
}

/**
 * Sends the event as the claim's holder. A claim check writes the archive object first and sends
 * the pointer only once the object is durable; either failure releases the claim and answers 500,
 * and the retry writes the same object again (same key, same content) and sends.
 */
async function enqueueAsHolder(
  pk: string,
  held: HeldClaim,
  outgoing: Outgoing,
  ids: Ids,
  deliveries: number | undefined,
  tookOver: boolean,
  deps: ReceiverDeps,
): Promise<DeliveryResult> {
  const clock = deps.clock ?? Date.now;
  const { lease } = held;
  let messageId: string | undefined;
  const stored: { archiveKey?: string } = {};
  try {
    deps.faultPoint?.('receiver.afterClaim', ids.eventId);
    ({ messageId } = await sendEvent(outgoing, held.firstSeenAt, ids, stored, deps));
  } catch (error) {
    const { archiveKey } = stored;
    // Not queued: give the claim back so the provider's retry is not mistaken for a duplicate.
    let released = false;
    try {
      released = await deps.store.releaseClaim(
        pk,
        lease.token,
        `${archiveKey === undefined && outgoing.kind === 'claim-check' ? 'payload store' : 'enqueue'} failed: ${errorSummary(error)}`,
        clock(),
      );
    } catch (releaseError) {
      deps.log.error(
        'could not release the claim after a failed enqueue; it frees itself when the lease ends',
        {
          key: pk,
          error: errorSummary(releaseError),
        },
      );
    }
    deps.log.error(
      'enqueue failed; answering 500 so the provider retries (released: the claim was given back for the retry)',
      {
        key: pk,
        released,
        error: errorSummary(error),
      },
    );
    return reject(500, 'enqueue_failed', 'The event could not be queued; please retry.', {
      ...ids,
      ...(deliveries === undefined ? {} : { deliveries }),
    });
  }

  // The event is durably queued: whatever happens to the mark below, the answer is 200. Without
  // marks the claim stays RECEIVED (`unmarked`) until a processor takes it.
  if (deps.settings.markEnqueued) await markQueued(pk, lease, messageId, stored.archiveKey, deps);
  return {
    statusCode: 200,
    outcome: 'accepted',
    message: tookOver ? 'Accepted (an earlier delivery had not completed).' : 'Accepted.',
    ...ids,
    ...(deliveries === undefined ? {} : { deliveries }),
    enqueued: 1,
    tookOver,
  };
}

/**
 * Sends the event: a claim check writes the archive object first (recorded in `stored`) and sends the
 * pointer only once the object is durable. The object's key follows from the claim, so every sender
 * of one event writes the same object with the same content.
 */
async function sendEvent(
  outgoing: Outgoing,
  firstSeenAt: string,
  ids: Ids,
  stored: { archiveKey?: string },
  deps: ReceiverDeps,
): Promise<{ messageId?: string }> {
  const clock = deps.clock ?? Date.now;
  if (outgoing.kind === 'inline') return deps.queue.send(outgoing.body);
  const archiveKey = await outgoing.archive.put(outgoing.message, firstSeenAt, clock());
  stored.archiveKey = archiveKey;
  deps.faultPoint?.('receiver.afterPayloadStored', ids.eventId);
  return deps.queue.send(JSON.stringify(claimCheckOf(outgoing.message, archiveKey, outgoing.bodyBytes)));
}

/**
 * A duplicate of an `unmarked` RECEIVED claim: its holder may not have sent yet, or may have failed
 * to. Send a copy (the processor absorbs the extra one) and answer 200 once it is queued; a failed
 * send answers 500 so the provider retries. The claim is not written: it is not this delivery's.
 */
async function sendCopy(
  pk: string,
  current: ClaimRecord,
  outgoing: Outgoing,
  ids: Ids,
  counts: (deliveries: number) => { deliveries?: number },
  deps: ReceiverDeps,
): Promise<DeliveryResult> {
  try {
    await sendEvent(outgoing, current.firstSeenAt, ids, {}, deps);
  } catch (error) {
    deps.log.error('could not send a copy of an unmarked claim; answering 500 so the provider retries', {
      key: pk,
      error: errorSummary(error),
    });
    return reject(500, 'enqueue_failed', 'The event could not be queued; please retry.', {
      ...ids,
      ...counts(current.deliveries),
    });
  }
  return {
    statusCode: 200,
    outcome: 'duplicate',
    message:
      'Already received (RECEIVED, not yet taken by a processor); a copy was queued, which the processor absorbs.',
    ...ids,
    ...counts(current.deliveries),
    enqueued: 1,
  };
}

/** RECEIVED -> ENQUEUED by the holder. Its failure changes nothing about the answer: the event is queued. */
async function markQueued(
  pk: string,
  lease: Lease,
  messageId: string | undefined,
  archiveKey: string | undefined,
  deps: ReceiverDeps,
): Promise<void> {
  const clock = deps.clock ?? Date.now;
  try {
    const marked = await deps.store.markEnqueued(pk, lease.token, messageId, clock(), archiveKey);
    if (!marked) {
      deps.log.warn(
        'lease was taken over before the ENQUEUED mark; the extra message is absorbed by the processor',
        {
          key: pk,
        },
      );
    }
  } catch (error) {
    deps.log.warn(
      'could not mark the claim ENQUEUED; the message is queued and the claim recovers by lease',
      {
        key: pk,
        error: errorSummary(error),
      },
    );
  }
}
