/**
 * Asaas: no signature, only a static shared token in `asaas-access-token` (optional in Asaas,
 * required here). https://docs.asaas.com/docs/receive-asaas-events-at-your-webhook-endpoint
 */

import {
  field,
  isoToEpochSeconds,
  nonEmptyString,
  randomHex,
  readHeader,
  readRequestPayload,
  safeEqualAny,
  sha256,
  usableSecrets,
} from './crypto.js';
import { defineProvider } from './define.js';
import type {
  DevSample,
  DevSampleOptions,
  ExtractResult,
  VerifyOptions,
  VerifyResult,
  WebhookRequest,
} from './types.js';

/**
 * Asaas is Brazilian and writes `dateCreated` without a zone: read it as Brasília time, UTC-03:00
 * (Brazil has had no daylight saving time since 2019).
 */
const ASAAS_OFFSET_MINUTES = -3 * 60;

/** An event whose payload names no account. */
const DEFAULT_ACCOUNT = 'default';

function verify(request: WebhookRequest, options: VerifyOptions): VerifyResult {
  const tokens = usableSecrets(options.secrets);
  if (tokens.length === 0) return { ok: false, reason: 'no_secret_configured' };
  const header = readHeader(request.headers, 'asaas-access-token');
  if (header === undefined) return { ok: false, reason: 'missing_signature' };

  // Both sides are hashed first so they always have equal length: timingSafeEqual then leaks
  // neither the token's content nor its length. Every token is compared (no early exit).
  const matched = safeEqualAny(
    sha256(header),
    tokens.map((token) => sha256(token)),
  );
  return matched ? { ok: true } : { ok: false, reason: 'signature_mismatch' };
}

/** `PAYMENT_RECEIVED` -> `payment`, `TRANSFER_DONE` -> `transfer`. */
export function asaasObjectKind(event: string): string | undefined {
  const word = event.split('_', 1)[0];
  return word === undefined || word === '' ? undefined : word.toLowerCase();
}

/** The JSON body, whatever its content type says (the processor reads it the same way). */
function readPayload(request: WebhookRequest): Record<string, unknown> | undefined {
  return readRequestPayload(request);
}

function extract(request: WebhookRequest): ExtractResult {
  const payload = readPayload(request);
  if (payload === undefined) {
    return { ok: false, reason: 'invalid_json', detail: 'body is not a JSON object' };
  }
  // Asaas keeps `id` (`evt_...&<n>`, an `&` inside) across resends and recommends a unique key on it.
  const eventId = nonEmptyString(payload.id);
  if (eventId === undefined) return { ok: false, reason: 'missing_event_id' };
  const eventType = nonEmptyString(payload.event);
  if (eventType === undefined) return { ok: false, reason: 'missing_event_type' };

  const objectKind = asaasObjectKind(eventType);
  return {
    ok: true,
    event: {
      eventId,
      eventType,
      account: nonEmptyString(field(payload.account, 'id')) ?? DEFAULT_ACCOUNT,
      objectId:
        objectKind === undefined ? undefined : nonEmptyString(field(field(payload, objectKind), 'id')),
      objectKind,
      // `2024-06-12 16:45:03` is read as UTC-03:00; an ISO value with an offset is taken as is.
      occurredAt: isoToEpochSeconds(payload.dateCreated, ASAAS_OFFSET_MINUTES),
    },
  };
}

/** Asaas signs nothing: the token travels as is. */
function sign(_body: string | Buffer, secret: string): Record<string, string> {
  return { 'asaas-access-token': secret };
}

const PAYMENT_STATUS: Readonly<Record<string, string>> = {
  PAYMENT_RECEIVED: 'RECEIVED',
  PAYMENT_CREATED: 'PENDING',
  PAYMENT_CONFIRMED: 'CONFIRMED',
};

/** A payment event (https://docs.asaas.com/docs/webhook-para-cobrancas). */
function sample(type: string, options: DevSampleOptions): DevSample {
  const paymentId = options.objectId ?? `pay_${randomHex(8)}`;
  const now = options.nowSeconds * 1000;
  const event = {
    id: options.eventId ?? `evt_${randomHex(16)}&${Number.parseInt(randomHex(3), 16)}`,
    event: type,
    // Brasília time without a zone, as Asaas writes it (UTC-03:00).
    dateCreated: new Date(now - 3 * 3600_000).toISOString().replace('T', ' ').slice(0, 19),
    account: { id: 'acc_local_0001', ownerId: null },
    payment: {
      object: 'payment',
      id: paymentId,
      customer: 'cus_000005113026',
      value: 100,
      netValue: 94.51,
      billingType: 'PIX',
      status: PAYMENT_STATUS[type] ?? 'PENDING',
      dueDate: new Date(now).toISOString().slice(0, 10),
    },
  };
  return {
    body: JSON.stringify(event),
    headers: { 'content-type': 'application/json' },
    summary: `${type} ${event.id} about ${paymentId}`,
  };
}

export const asaasProvider = defineProvider({
  id: 'asaas',
  name: 'Asaas',
  defaults: {
    // Asaas pauses a failing queue and keeps its events for 14 days, sending the backlog on
    // reactivation; 21 days covers that with a week of margin.
    // https://docs.asaas.com/docs/faq-de-webhooks
    claimTtlSeconds: 21 * 24 * 3600,
    keyRules: { default: { kind: 'event-id' } },
  },
  defaultAccount: DEFAULT_ACCOUNT,
  secret: {
    // Asaas sends a static token rather than signing.
    envVar: 'WEBHOOK_TOKEN_ASAAS',
    hint: 'the webhook authentication token (asaas-access-token) set in the Asaas webhook settings',
    devSecret: 'local-asaas-token',
  },
  headers: { secret: ['asaas-access-token'] },
  verify,
  extract,
  readPayload,
  dev: { sampleTypes: ['PAYMENT_RECEIVED', 'PAYMENT_CREATED', 'PAYMENT_CONFIRMED'], sample, sign },
  // After 15 consecutive failures Asaas interrupts the queue; events wait there up to 14 days.
  reconcile: {
    kind: 'queue-state',
    state: "`GET /v3/webhooks`: each webhook's `interrupted`",
    resume:
      '`PUT /v3/webhooks/{id}` with `{"interrupted": false}`, only when the operator asks (the queue then sends what it holds, in order)',
    retentionSeconds: 14 * 86_400,
    source:
      'https://docs.asaas.com/docs/how-to-reactivate-an-interrupted-queue; https://docs.asaas.com/docs/webhooks-faq',
  },
  docs: {
    signature: {
      header: '`asaas-access-token: <token>`',
      signedContent: 'nothing: a static shared token',
      digest: 'constant-time comparison',
      tolerance: 'none',
    },
    identity: {
      eventId: 'payload `id` (`evt_…&…`)',
      eventType: 'payload `event`',
      account: 'payload `account.id`, else `default`',
      object: "`payment.id` etc., named by the event's first word",
    },
    retryWindow: {
      text: 'events kept 14 days while a paused queue waits',
      source: 'https://docs.asaas.com/docs/faq-de-webhooks',
    },
  },
});
