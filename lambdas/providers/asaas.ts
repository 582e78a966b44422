/**
 * Asaas: no signature, only a static shared token in `asaas-access-token` (optional in Asaas,
 * required here). https://docs.asaas.com/docs/receive-asaas-events-at-your-webhook-endpoint
 */
import {
  field,
  isoToEpochSeconds,
  nonEmptyString,
  readHeader,
  readRequestPayload,
  safeEqualAny,
  sha256,
  usableSecrets,
} from './crypto.js';
import type { ExtractResult, Provider, VerifyOptions, VerifyResult, WebhookRequest } from './types.js';

/**
 * Asaas is Brazilian and writes `dateCreated` without a zone: read it as Brasília time, UTC-03:00
 * (Brazil has had no daylight saving time since 2019).
 */
const ASAAS_OFFSET_MINUTES = -3 * 60;

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
      account: nonEmptyString(field(payload.account, 'id')) ?? 'default',
      objectId:
        objectKind === undefined ? undefined : nonEmptyString(field(field(payload, objectKind), 'id')),
      objectKind,
      // `2024-06-12 16:45:03` is read as UTC-03:00; an ISO value with an offset is taken as is.
      occurredAt: isoToEpochSeconds(payload.dateCreated, ASAAS_OFFSET_MINUTES),
    },
  };
}

export const asaasProvider: Provider = {
  id: 'asaas',
  name: 'Asaas',
  defaults: {
    // Asaas pauses a failing queue and keeps its events for 14 days, sending the backlog on
    // reactivation; 21 days covers that with a week of margin.
    // https://docs.asaas.com/docs/faq-de-webhooks
    claimTtlSeconds: 21 * 24 * 3600,
    keyRules: { default: { kind: 'event-id' } },
  },
  verify,
  extract,
  readPayload,
};
