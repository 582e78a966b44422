/**
 * Shopify's mandatory compliance topics, applied by the processor itself before any applier:
 * - `customers/redact` and `shop/redact` remove that customer's (or that shop's) events from the
 *   payload archive: a batch object is rewritten without them (conditionally on the ETag it was read
 *   with, so two redactions never resurrect each other's events), an object left with none and a
 *   one-event object (a claim-checked body) are deleted, and so are the customer's (the shop's)
 *   data-request exports. An event whose claim is not DONE keeps its body (an attempt, a redrive or
 *   the sweeper still needs it): its claim is marked pending, and the processor removes the body
 *   right after the event is DONE (./deferred-redaction.ts);
 * - `customers/data_request` writes the customer's archived events to one export object that an
 *   operator fetches (`webhooks compliance export`) and sends to the merchant.
 * Each logs one audit line, `compliance request applied`, with counts and object names only: never
 * a payload, an email or a phone number. Everything here is repeat-safe: a retried request finds
 * less to remove and writes the same export. https://shopify.dev/docs/apps/build/compliance/privacy-law-compliance
 */
import { decodeBody, type EventMessage } from '../queue/event-message.js';
import { ARCHIVE_PREFIX, COMPLIANCE_PREFIX } from '../shared/archive-layout.js';
import { EFFECT_MARGIN_MS } from '../shared/timing-rules.js';
import { parseArchive } from '../store/payload-archive.js';
import type { RedactionRequest, RedactionVerdict } from '../store/redaction-claims.js';
import type { ProcessingEvent } from './types.js';

export const SHOPIFY_COMPLIANCE_TOPICS = [
  'customers/data_request',
  'customers/redact',
  'shop/redact',
] as const;
export type ShopifyComplianceTopic = (typeof SHOPIFY_COMPLIANCE_TOPICS)[number];

/** What a compliance request asks about, read from its signed payload (never from headers). */
export interface ComplianceRequest {
  readonly topic: ShopifyComplianceTopic;
  /** The signed `shop_domain`, lower-cased: the account the archived events were claimed under. */
  readonly shop: string;
  readonly customerId?: string;
  readonly email?: string;
  readonly phone?: string;
  readonly orderIds: readonly string[];
  /** `data_request.id`: names the export. */
  readonly requestId?: string;
}

const idText = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : Number.isFinite(value) ? String(value) : undefined;
const object = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
const lower = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value.trim().toLowerCase() : undefined;

export function isComplianceTopic(topic: string): topic is ShopifyComplianceTopic {
  return (SHOPIFY_COMPLIANCE_TOPICS as readonly string[]).includes(topic);
}

/** The request a Shopify compliance event makes, or undefined for any other event. */
export function complianceRequestOf(
  event: Pick<ProcessingEvent, 'provider' | 'eventType' | 'payload'>,
): ComplianceRequest | undefined {
  if (event.provider !== 'shopify' || !isComplianceTopic(event.eventType)) return undefined;
  const shop = lower(event.payload.shop_domain);
  if (shop === undefined) return undefined;
  const customer = object(event.payload.customer);
  const orders = Array.isArray(event.payload.orders_to_redact)
    ? event.payload.orders_to_redact
    : Array.isArray(event.payload.orders_requested)
      ? event.payload.orders_requested
      : [];
  const customerId = idText(customer?.id);
  const email = lower(customer?.email);
  const phone = lower(customer?.phone);
  const requestId = idText(object(event.payload.data_request)?.id);
  return {
    topic: event.eventType,
    shop,
    ...(customerId === undefined ? {} : { customerId }),
    ...(email === undefined ? {} : { email }),
    ...(phone === undefined ? {} : { phone }),
    orderIds: orders.map(idText).filter((id): id is string => id !== undefined),
    ...(requestId === undefined ? {} : { requestId }),
  };
}

function payloadOf(message: EventMessage): Record<string, unknown> | undefined {
  try {
    return object(JSON.parse(decodeBody(message).toString('utf8')));
  } catch {
    return undefined;
  }
}

/**
 * Whether an archived event is about the request's customer (or, for `shop/redact`, the shop):
 * claimed under that shop, and naming the customer by id (`customer.id`, a customer topic's `id`),
 * by one of the orders listed, or by email or phone.
 */
export function isAbout(request: ComplianceRequest, message: EventMessage): boolean {
  if (message.provider !== 'shopify' || message.account !== request.shop) return false;
  if (request.topic === 'shop/redact') return true;
  const payload = payloadOf(message);
  if (payload === undefined) return false;
  const customer = object(payload.customer);
  const topic = message.eventType;
  const customerId = idText(customer?.id) ?? (topic.startsWith('customers') ? idText(payload.id) : undefined);
  if (request.customerId !== undefined && customerId === request.customerId) return true;
  const orderId = topic.startsWith('orders/') ? idText(payload.id) : undefined;
  if (request.orderIds.some((id) => id === orderId)) return true;
  const emails = [payload.email, payload.contact_email, customer?.email].map(lower);
  if (request.email !== undefined && emails.includes(request.email)) return true;
  const phones = [payload.phone, customer?.phone].map(lower);
  return request.phone !== undefined && phones.includes(request.phone);
}

/** Where a customer's data-request exports live: `compliance/shopify/<shop>/customer-<id>/`. */
export function exportPrefix(shop: string, customerId?: string): string {
  const base = `${COMPLIANCE_PREFIX}/shopify/${encodeURIComponent(shop)}/`;
  return customerId === undefined ? base : `${base}customer-${encodeURIComponent(customerId)}/`;
}

export function exportKey(request: ComplianceRequest, fallbackId: string): string {
  return `${exportPrefix(request.shop, request.customerId ?? 'unknown')}data-request-${encodeURIComponent(request.requestId ?? fallbackId)}.json`;
}

/** The archive bucket as compliance needs it: list, read with the ETag, change only if unchanged. */
export interface ComplianceStore {
  /** Keys under `prefix`, in S3's (lexicographic) order, from after `startAfter` when given. */
  list(prefix: string, startAfter?: string): AsyncIterable<string>;
  /** The object's text and ETag, or undefined when it is gone. */
  read(key: string): Promise<{ readonly text: string; readonly etag: string } | undefined>;
  /** Replaces the object only if its ETag is still `etag`; false when it changed (412) or is gone. */
  replaceIfUnchanged(key: string, body: string, etag: string): Promise<boolean>;
  /** Deletes the object only if its ETag is still `etag`; false when it changed. */
  deleteIfUnchanged(key: string, etag: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  write(key: string, body: string): Promise<void>;
}

export interface ComplianceLog {
  info(message: string, details: Record<string, unknown>): void;
}

/** The claims, as a redaction asks them before it removes an event's body (lambdas/store/redaction-claims.ts). */
export interface ComplianceClaims {
  /**
   * Whether the event `key`'s body may leave `objectKey` now: `deferred` when its claim is not DONE
   * (marked pending redaction by `request`: keep it), `redacted` when it is DONE (marked: remove it),
   * `gone` when no live claim is left (remove it). Throws when the claim cannot be read or written:
   * nothing is removed and the request is retried.
   */
  settle(key: string, request: RedactionRequest, objectKey: string, nowMs: number): Promise<RedactionVerdict>;
}

export interface ComplianceDeps {
  readonly store: ComplianceStore;
  readonly claims: ComplianceClaims;
  readonly log: ComplianceLog;
  readonly clock?: () => number;
  /** Called after each archive object is handled (fault point `compliance.afterObject`). */
  readonly afterObject?: (eventId: string) => void;
  /**
   * Milliseconds left in the invocation. The scan stops before the next object when less than a
   * second is left, failing the attempt with {@link ComplianceDeadlineError} (the claim records it),
   * instead of being cut off by the function's timeout with nothing said. @default unbounded
   */
  readonly timeLeftMs?: () => number;
}

/**
 * A compliance scan that did not fit in the invocation: a failed attempt like any other (retried,
 * then FAILED in the DLQ with this message), repeat-safe (a retry finds less to remove).
 */
export class ComplianceDeadlineError extends Error {
  override readonly name = 'ComplianceDeadlineError';
  constructor(readonly scannedObjects: number) {
    super(
      `the compliance scan ran out of time after ${scannedObjects} archive objects: raise the processor's timeout, shorten archiveRetention, or run the request out of band (applyCompliance); a retry goes on, repeat-safe`,
    );
  }
}

export interface ComplianceResult {
  readonly scannedObjects: number;
  /** Events removed (redact) or exported (data_request). */
  readonly matchedEvents: number;
  /** Events kept because their claim was not DONE: removed once it is (redact only). */
  readonly deferredEvents: number;
  readonly rewrittenObjects: number;
  readonly deletedObjects: number;
  readonly deletedExports: number;
  readonly exportKey?: string;
}

/** How many times an object that changed under a rewrite is read and tried again. */
const MAX_ATTEMPTS = 5;

/** What one object's redaction did. */
export interface ObjectRedaction {
  /** Selected events removed from the object. */
  readonly removed: readonly EventMessage[];
  /** Selected events left in it (their claim is not DONE). */
  readonly kept: readonly EventMessage[];
  /** How the object changed; absent when it did not (nothing to remove, or it was gone). */
  readonly change?: 'rewritten' | 'deleted';
}

/**
 * Removes from one archive object the events `select` picks and `mayRemove` lets go. `mayRemove`
 * runs for each picked event before the object changes (it records the decision on the claim): a
 * crash in between leaves a retry that finds the events still there, never a removed event with an
 * unmarked claim. Rewritten only if unchanged since it was read; on a change (another redaction),
 * read again and retry.
 */
export async function redactObject(
  store: ComplianceStore,
  key: string,
  select: (message: EventMessage) => boolean,
  mayRemove: (message: EventMessage) => Promise<boolean>,
): Promise<ObjectRedaction> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const current = await store.read(key);
    if (current === undefined) return { removed: [], kept: [] };
    const parsed = JSON.parse(current.text) as Record<string, unknown>;
    const events = parseArchive(current.text, key);
    const selected = events.filter(select);
    const leaving = new Set<string>();
    for (const message of selected) if (await mayRemove(message)) leaving.add(message.key);
    const removed = selected.filter((message) => leaving.has(message.key));
    const kept = selected.filter((message) => !leaving.has(message.key));
    if (removed.length === 0) return { removed, kept };
    const rest = events.filter((message) => !leaving.has(message.key));
    const changed =
      rest.length === 0
        ? await store.deleteIfUnchanged(key, current.etag)
        : await store.replaceIfUnchanged(
            key,
            // A batch object keeps its shape (`v`, `archivedAt`), minus the removed events.
            JSON.stringify({ ...parsed, events: rest.map(({ archivedAt: _a, ...message }) => message) }),
            current.etag,
          );
    if (changed) return { removed, kept, change: rest.length === 0 ? 'deleted' : 'rewritten' };
  }
  throw new Error(
    `archive object ${key} kept changing during a compliance redaction; the request is retried`,
  );
}

/** Applies one compliance request; `self` is the request's own idempotency key (never removed). */
export async function applyCompliance(
  request: ComplianceRequest,
  self: Pick<EventMessage, 'key' | 'eventId'>,
  deps: ComplianceDeps,
): Promise<ComplianceResult> {
  const clock = deps.clock ?? Date.now;
  const asking: RedactionRequest = { by: self.key, startedAtMs: clock() };
  const about = (message: EventMessage) => message.key !== self.key && isAbout(request, message);
  const scan = { scanned: 0, matched: [] as EventMessage[], rewritten: 0, deleted: 0 };
  // Kept because their claim is not DONE; the processor removes them once it is.
  const deferred = new Set<string>();
  const redacting = request.topic !== 'customers/data_request';
  for await (const key of deps.store.list(`${ARCHIVE_PREFIX}/shopify/`)) {
    if (deps.timeLeftMs !== undefined && deps.timeLeftMs() < EFFECT_MARGIN_MS)
      throw new ComplianceDeadlineError(scan.scanned);
    scan.scanned++;
    if (redacting) {
      const done = await redactObject(
        deps.store,
        key,
        about,
        async (message) => (await deps.claims.settle(message.key, asking, key, clock())) !== 'deferred',
      );
      scan.matched.push(...done.removed);
      for (const message of done.kept) deferred.add(message.key);
      if (done.change === 'rewritten') scan.rewritten++;
      if (done.change === 'deleted') scan.deleted++;
    } else {
      const current = await deps.store.read(key);
      if (current !== undefined) scan.matched.push(...parseArchive(current.text, key).filter(about));
    }
    deps.afterObject?.(self.eventId);
  }

  let deletedExports = 0;
  let written: string | undefined;
  if (redacting) {
    // A customer's exports go with the customer; a shop's with the shop.
    const prefix = exportPrefix(
      request.shop,
      request.topic === 'shop/redact' ? undefined : (request.customerId ?? 'unknown'),
    );
    for await (const key of deps.store.list(prefix)) {
      await deps.store.delete(key);
      deletedExports++;
    }
  } else {
    written = exportKey(request, self.eventId);
    // One entry per event: the same event may be in a batch object and in its own (a claim check).
    const unique = [...new Map(scan.matched.map((message) => [message.key, message])).values()];
    const events = unique
      .sort((a, b) => a.receivedAt.localeCompare(b.receivedAt) || a.key.localeCompare(b.key))
      .map((message) => ({
        key: message.key,
        eventType: message.eventType,
        eventId: message.eventId,
        receivedAt: message.receivedAt,
        payload: payloadOf(message) ?? null,
      }));
    await deps.store.write(
      written,
      `${JSON.stringify(
        {
          v: 1,
          provider: 'shopify',
          shop: request.shop,
          customerId: request.customerId ?? null,
          dataRequestId: request.requestId ?? null,
          ordersRequested: request.orderIds,
          generatedAt: new Date(clock()).toISOString(),
          note: 'The archived webhook payloads about this customer; business tables are the application’s to add.',
          events,
        },
        null,
        2,
      )}\n`,
    );
  }
  const result: ComplianceResult = {
    scannedObjects: scan.scanned,
    matchedEvents: scan.matched.length,
    deferredEvents: deferred.size,
    rewrittenObjects: scan.rewritten,
    deletedObjects: scan.deleted,
    deletedExports,
    ...(written === undefined ? {} : { exportKey: written }),
  };
  // The audit line: what was asked and what was done, in counts; no payload, email or phone.
  deps.log.info('compliance request applied', {
    provider: 'shopify',
    topic: request.topic,
    shop: request.shop,
    key: self.key,
    ...(request.customerId === undefined ? {} : { customerId: request.customerId }),
    ...(request.requestId === undefined ? {} : { dataRequestId: request.requestId }),
    ...result,
    // Idempotency keys only (provider ids, no personal data), the first 50 of them.
    removedEventKeys: redacting ? scan.matched.slice(0, 50).map((message) => message.key) : [],
    deferredEventKeys: [...deferred].slice(0, 50),
  });
  return result;
}
