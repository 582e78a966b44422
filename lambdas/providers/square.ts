/**
 * Square: `x-square-hmacsha256-signature: <base64>`, HMAC-SHA256 of `<notification URL><raw body>`
 * keyed with the subscription's signature key as-is. The URL is the one registered with Square,
 * which the receiver knows from its configured public base URL, never from the Host header.
 * (The legacy `x-square-signature`, HMAC-SHA1, is not accepted.)
 * https://developer.squareup.com/docs/webhooks/step3validate
 */

import {
  bodyBytes,
  decodeBase64,
  field,
  hmacSha256,
  idString,
  isoToEpochSeconds,
  nonEmptyString,
  randomHex,
  readHeader,
  readRequestPayload,
  safeEqualAny,
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

/** A notification that names no merchant (never seen in practice). */
const DEFAULT_ACCOUNT = 'default';

function verify(request: WebhookRequest, options: VerifyOptions): VerifyResult {
  const secrets = usableSecrets(options.secrets);
  if (secrets.length === 0) return { ok: false, reason: 'no_secret_configured' };
  if (request.url === undefined) return { ok: false, reason: 'public_url_not_configured' };
  const header = readHeader(request.headers, 'x-square-hmacsha256-signature');
  if (header === undefined) return { ok: false, reason: 'missing_signature' };
  const candidate = decodeBase64(header);
  if (candidate === undefined) return { ok: false, reason: 'malformed_signature' };
  const signedContent = Buffer.concat([Buffer.from(request.url), request.rawBody]);
  // Nothing time-related is signed: a replay is caught by the claim, not here.
  const expected = secrets.map((secret) => hmacSha256(secret, signedContent));
  return safeEqualAny(candidate, expected) ? { ok: true } : { ok: false, reason: 'signature_mismatch' };
}

function readPayload(request: WebhookRequest): Record<string, unknown> | undefined {
  return readRequestPayload(request);
}

function extract(request: WebhookRequest): ExtractResult {
  const payload = readPayload(request);
  if (payload === undefined) {
    return { ok: false, reason: 'invalid_json', detail: 'body is not a JSON object' };
  }
  const eventId = nonEmptyString(payload.event_id);
  if (eventId === undefined) return { ok: false, reason: 'missing_event_id' };
  const eventType = nonEmptyString(payload.type);
  if (eventType === undefined) return { ok: false, reason: 'missing_event_type' };
  return {
    ok: true,
    event: {
      eventId,
      eventType,
      account: nonEmptyString(payload.merchant_id) ?? DEFAULT_ACCOUNT,
      objectId: idString(field(payload.data, 'id')),
      objectKind: nonEmptyString(field(payload.data, 'type')),
      occurredAt: isoToEpochSeconds(payload.created_at),
    },
  };
}

/** `x-square-hmacsha256-signature` for `body` posted to `url`, as Square computes it. */
function sign(
  body: string | Buffer,
  secret: string,
  _nowSeconds: number,
  _headers?: Readonly<Record<string, string>>,
  url?: string,
): Record<string, string> {
  if (url === undefined) throw new Error('a Square signature covers the notification URL: pass the URL');
  const signature = hmacSha256(secret, Buffer.concat([Buffer.from(url), bodyBytes(body)]));
  return { 'x-square-hmacsha256-signature': signature.toString('base64') };
}

const PAYMENT_STATUS: Readonly<Record<string, string>> = {
  'payment.created': 'APPROVED',
  'payment.updated': 'COMPLETED',
};

/** A notification in the documented shape (https://developer.squareup.com/reference/square/payments-api/webhooks). */
function sample(type: string, options: DevSampleOptions): DevSample {
  const at = new Date(options.nowSeconds * 1000).toISOString();
  const objectType = type.slice(0, Math.max(type.indexOf('.'), 0)) || 'payment';
  const objectId = options.objectId ?? randomHex(14).toUpperCase();
  const object =
    objectType === 'payment'
      ? {
          payment: {
            id: objectId,
            status: PAYMENT_STATUS[type] ?? 'COMPLETED',
            amount_money: { amount: 2500, currency: 'USD' },
            location_id: 'L88917AVBK2S5',
            order_id: `ord_${randomHex(8)}`,
            created_at: at,
            updated_at: at,
            version: type === 'payment.created' ? 1 : 2,
          },
        }
      : { [objectType]: { id: objectId, created_at: at, updated_at: at } };
  const notification = {
    merchant_id: '6SSW7HV8K2ST5',
    type,
    event_id:
      options.eventId ?? `${randomHex(4)}-${randomHex(2)}-${randomHex(2)}-${randomHex(2)}-${randomHex(6)}`,
    created_at: at,
    data: { type: objectType, id: objectId, object },
  };
  return {
    body: JSON.stringify(notification),
    headers: { 'content-type': 'application/json', 'square-environment': 'Sandbox' },
    summary: `${type} ${notification.event_id} about ${objectId}`,
  };
}

export const squareProvider = defineProvider({
  id: 'square',
  name: 'Square',
  defaults: {
    // Square retries an unacknowledged notification for up to 72 hours (an older copy of the page
    // says 24); 7 days leaves room for resends from the Developer Console.
    // https://developer.squareup.com/docs/webhooks/troubleshooting
    claimTtlSeconds: 7 * 24 * 3600,
    keyRules: { default: { kind: 'event-id' } },
  },
  defaultAccount: DEFAULT_ACCOUNT,
  secret: {
    hint: "the subscription's Signature Key from Developer Console > Webhooks > Subscriptions > your endpoint",
    devSecret: 'local-square-signature-key',
  },
  headers: { secret: ['x-square-hmacsha256-signature', 'x-square-signature'], forward: ['square-'] },
  verify,
  extract,
  readPayload,
  dev: {
    sampleTypes: ['payment.updated', 'payment.created', 'refund.created', 'customer.created'],
    sample,
    sign,
  },
  // Square's own words: the Events API is the recovery path for missed webhook events.
  reconcile: {
    kind: 'list-only',
    list: '`POST /v2/events` (SearchEvents), cursor-paged',
    retentionSeconds: 28 * 86_400,
    setup:
      'events must first be enabled (`PUT /v2/events/enable`); only a personal access token, no OAuth token, may search',
    source: 'https://developer.squareup.com/docs/events-api/overview',
  },
  docs: {
    signature: {
      header: '`x-square-hmacsha256-signature: <b64>`',
      signedContent: '`<notification URL><raw body>` (the URL from `publicBaseUrl`, never the Host header)',
      digest: 'HMAC-SHA256 base64; the signature key as-is',
      tolerance: 'none signed (a replay is a duplicate of its claim)',
    },
    identity: {
      eventId: 'payload `event_id` (signed)',
      eventType: 'payload `type` (signed)',
      account: 'payload `merchant_id` (signed)',
      object: '`data.id` (`data.type`)',
    },
    retryWindow: {
      text: 'up to 72 hours (an older copy of the page: 24)',
      source: 'https://developer.squareup.com/docs/webhooks/troubleshooting',
    },
  },
});
