/**
 * Paddle Billing: `Paddle-Signature: ts=<unix>;h1=<hex>[;h1=<hex>...]`, HMAC-SHA256 of
 * `<ts>:<raw body>` keyed with the notification destination's secret key as-is.
 * https://developer.paddle.com/webhooks/signature-verification
 */

import {
  anyHexSignatureMatches,
  bodyBytes,
  effectiveTolerance,
  field,
  hmacSha256,
  idString,
  isoToEpochSeconds,
  nonEmptyString,
  parseTimestampedSignatures,
  randomHex,
  readHeader,
  readRequestPayload,
  usableSecrets,
  withinTolerance,
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

/** Paddle's notifications name no seller: one secret per notification destination, which is the scope. */
const DEFAULT_ACCOUNT = 'default';

/**
 * Ours, not the SDK's. `@paddle/paddle-node-sdk` allows 5 s, which an honest delivery misses under
 * a few seconds of clock skew or an API Gateway retry. 300 s is what Stripe, Slack and Standard
 * Webhooks use: a replay inside it is a duplicate the claim absorbs (the claim outlives it by days),
 * so a wider window costs no second effect. Set the provider's `toleranceSeconds` to 5 to match the SDK.
 */
const DEFAULT_TOLERANCE_SECONDS = 300;

/** `ts` is the signed timestamp; `h1` entries the signatures (several while a secret is rotated). */
const HEADER_KEYS = { separator: ';', timestamp: 'ts', signature: 'h1' } as const;

function verify(request: WebhookRequest, options: VerifyOptions): VerifyResult {
  const secrets = usableSecrets(options.secrets);
  if (secrets.length === 0) return { ok: false, reason: 'no_secret_configured' };
  const header = readHeader(request.headers, 'paddle-signature');
  if (header === undefined) return { ok: false, reason: 'missing_signature' };
  const parsed = parseTimestampedSignatures(header, HEADER_KEYS);
  if (parsed === undefined) return { ok: false, reason: 'malformed_signature' };

  const signedContent = Buffer.concat([Buffer.from(`${parsed.timestampText}:`), request.rawBody]);
  const expected = secrets.map((secret) => hmacSha256(secret, signedContent));
  if (!anyHexSignatureMatches(parsed.signatures, expected))
    return { ok: false, reason: 'signature_mismatch' };

  // Signature first, then time (as for Stripe): only an authentic delivery is reported as stale.
  const tolerance = effectiveTolerance(options.toleranceSeconds, DEFAULT_TOLERANCE_SECONDS);
  if (!withinTolerance(parsed.timestamp, options.nowSeconds, tolerance)) {
    return { ok: false, reason: 'timestamp_outside_tolerance' };
  }
  return { ok: true };
}

function readPayload(request: WebhookRequest): Record<string, unknown> | undefined {
  return readRequestPayload(request);
}

/** `transaction.completed` -> `transaction`, `subscription.past_due` -> `subscription`. */
function objectKind(eventType: string): string | undefined {
  const dot = eventType.indexOf('.');
  return dot > 0 ? eventType.slice(0, dot) : undefined;
}

function extract(request: WebhookRequest): ExtractResult {
  const payload = readPayload(request);
  if (payload === undefined) {
    return { ok: false, reason: 'invalid_json', detail: 'body is not a JSON object' };
  }
  // `event_id` is the event's; `notification_id` is one per destination, kept on every retry of it.
  const eventId = nonEmptyString(payload.event_id);
  if (eventId === undefined) return { ok: false, reason: 'missing_event_id' };
  const eventType = nonEmptyString(payload.event_type);
  if (eventType === undefined) return { ok: false, reason: 'missing_event_type' };
  return {
    ok: true,
    event: {
      eventId,
      eventType,
      account: DEFAULT_ACCOUNT,
      objectId: idString(field(payload.data, 'id')),
      objectKind: objectKind(eventType),
      occurredAt: isoToEpochSeconds(payload.occurred_at),
    },
  };
}

/** `Paddle-Signature` for `body`, as Paddle computes it. */
function sign(body: string | Buffer, secret: string, nowSeconds: number): Record<string, string> {
  const signature = hmacSha256(secret, Buffer.concat([Buffer.from(`${nowSeconds}:`), bodyBytes(body)]));
  return { 'paddle-signature': `ts=${nowSeconds};h1=${signature.toString('hex')}` };
}

const TRANSACTION_STATUS: Readonly<Record<string, string>> = {
  'transaction.created': 'draft',
  'transaction.ready': 'ready',
  'transaction.paid': 'paid',
  'transaction.completed': 'completed',
  'transaction.canceled': 'canceled',
  'transaction.past_due': 'past_due',
  'transaction.payment_failed': 'ready',
};

/** A notification in the documented shape (https://developer.paddle.com/webhooks/overview). */
function sample(type: string, options: DevSampleOptions): DevSample {
  const occurredAt = new Date(options.nowSeconds * 1000).toISOString();
  const data = type.startsWith('subscription.')
    ? {
        id: options.objectId ?? `sub_01${randomHex(12)}`,
        status: type === 'subscription.canceled' ? 'canceled' : 'active',
        customer_id: 'ctm_01hv6y1jedq4p1n0yqn5ba3ky4',
        currency_code: 'USD',
        updated_at: occurredAt,
      }
    : {
        id: options.objectId ?? `txn_01${randomHex(12)}`,
        status: TRANSACTION_STATUS[type] ?? 'ready',
        customer_id: 'ctm_01hv6y1jedq4p1n0yqn5ba3ky4',
        currency_code: 'USD',
        origin: 'web',
        details: { totals: { total: '2400', currency_code: 'USD' } },
        updated_at: occurredAt,
      };
  const notification = {
    event_id: options.eventId ?? `evt_01${randomHex(12)}`,
    event_type: type,
    occurred_at: occurredAt,
    notification_id: `ntf_01${randomHex(12)}`,
    data,
  };
  return {
    body: JSON.stringify(notification),
    headers: { 'content-type': 'application/json' },
    summary: `${type} ${notification.event_id} about ${data.id}`,
  };
}

export const paddleProvider = defineProvider({
  id: 'paddle',
  name: 'Paddle',
  defaults: {
    // Live accounts: up to 60 retries over 3 days (sandbox: 3 in 15 minutes); 7 days leaves room for
    // replays through the API. https://developer.paddle.com/webhooks/about/respond-to-webhooks
    claimTtlSeconds: 7 * 24 * 3600,
    toleranceSeconds: DEFAULT_TOLERANCE_SECONDS,
    keyRules: { default: { kind: 'event-id' } },
  },
  defaultAccount: DEFAULT_ACCOUNT,
  secret: {
    hint: "the notification destination's secret key (pdl_ntfset_...) from Developer tools > Notifications",
    devSecret: 'pdl_ntfset_local_development_secret',
  },
  headers: { secret: ['paddle-signature'] },
  verify,
  extract,
  readPayload,
  dev: {
    sampleTypes: [
      'transaction.completed',
      'transaction.paid',
      'transaction.payment_failed',
      'subscription.activated',
      'subscription.canceled',
    ],
    sample,
    sign,
  },
  // A replay is a new notification of the same event: the same `event_id`, which keys the claim.
  reconcile: {
    kind: 'list-and-redeliver',
    list: '`GET /notifications` with `status` (`delivered`, `failed`, `needs_retry`, `not_attempted`), `from` and `to`',
    redeliver:
      '`POST /notifications/{notification_id}/replay`, for a `delivered` or `failed` notification of origin `event` (not a replay)',
    retentionSeconds: 90 * 86_400,
    source:
      'https://developer.paddle.com/api-reference/notifications/replay-notification; https://developer.paddle.com/changelog/2023/notification-filter-parameters',
  },
  docs: {
    signature: {
      header: '`Paddle-Signature: ts=…;h1=…[;h1=…]`',
      signedContent: '`<ts>:<raw body>`',
      digest: 'HMAC-SHA256 hex; the secret key as-is',
      tolerance: '300 s either way (the SDK uses 5 s: set `toleranceSeconds: 5` to match)',
    },
    identity: {
      eventId: 'payload `event_id` (signed)',
      eventType: 'payload `event_type` (signed)',
      account: '`default` (one secret per notification destination)',
      object: '`data.id`; kind: the type before the first `.`',
    },
    retryWindow: {
      text: 'live: up to 60 retries over 3 days; sandbox: 3 in 15 minutes',
      source: 'https://developer.paddle.com/webhooks/about/respond-to-webhooks',
    },
  },
});
