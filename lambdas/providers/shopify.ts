/**
 * Shopify: `X-Shopify-Hmac-Sha256: <base64>`, HMAC-SHA256 of the raw body keyed with the app's
 * client secret. Nothing time-related is signed, and no header is.
 * https://shopify.dev/docs/apps/build/webhooks
 */
import {
  decodeBase64,
  hmacSha256,
  idString,
  isoToEpochSeconds,
  readHeader,
  readRequestPayload,
  safeEqualAny,
  usableSecrets,
} from './crypto.js';
import type { ExtractResult, Provider, VerifyOptions, VerifyResult, WebhookRequest } from './types.js';

function verify(request: WebhookRequest, options: VerifyOptions): VerifyResult {
  const secrets = usableSecrets(options.secrets);
  if (secrets.length === 0) return { ok: false, reason: 'no_secret_configured' };
  const header = readHeader(request.headers, 'x-shopify-hmac-sha256');
  if (header === undefined) return { ok: false, reason: 'missing_signature' };
  const candidate = decodeBase64(header);
  if (candidate === undefined) return { ok: false, reason: 'signature_mismatch' };
  // After a client-secret rotation Shopify may keep signing with the old secret for up to an hour.
  const expected = secrets.map((secret) => hmacSha256(secret, request.rawBody));
  return safeEqualAny(candidate, expected) ? { ok: true } : { ok: false, reason: 'signature_mismatch' };
}

/** `orders/create` -> `order`, `inventory_levels/update` -> `inventory_level`, `shop/update` -> `shop`. */
export function shopifyObjectKind(topic: string): string | undefined {
  const slash = topic.indexOf('/');
  if (slash <= 0) return undefined;
  const resource = topic.slice(0, slash);
  return resource.endsWith('s') ? resource.slice(0, -1) : resource;
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
  // `X-Shopify-Event-Id` names the underlying event and is shared by the copies sent to each of
  // several subscriptions, so keying on it processes one event once; `X-Shopify-Webhook-Id` is
  // per delivery (stable across its retries only). Shopify's pages disagree on which to use
  // ("ignore duplicates" says event id, "verify deliveries" says webhook id): we prefer the event
  // id and fall back to the webhook id. https://shopify.dev/docs/apps/build/webhooks/ignore-duplicates
  const eventId =
    readHeader(request.headers, 'x-shopify-event-id') ?? readHeader(request.headers, 'x-shopify-webhook-id');
  if (eventId === undefined) return { ok: false, reason: 'missing_event_id' };
  const eventType = readHeader(request.headers, 'x-shopify-topic');
  if (eventType === undefined) return { ok: false, reason: 'missing_event_type' };

  return {
    ok: true,
    event: {
      eventId,
      eventType,
      // Not signed, and every shop shares the app secret: cross-check it against the installation
      // before trusting it for anything beyond key scope.
      account: readHeader(request.headers, 'x-shopify-shop-domain')?.toLowerCase() ?? 'default',
      objectId: shopifyResourceId(payload),
      objectKind: shopifyObjectKind(eventType),
      occurredAt: isoToEpochSeconds(payload.updated_at),
    },
  };
}

/**
 * The resource's id as an exact string. Shopify ids are JSON numbers, and its own sample payloads use
 * ids beyond 2^53 that JSON.parse cannot hold exactly, so the `admin_graphql_api_id`
 * (`gid://shopify/Order/820982911946154508`) is read first; the numeric `id` only when it is safe.
 */
export function shopifyResourceId(payload: Readonly<Record<string, unknown>>): string | undefined {
  const gid = payload.admin_graphql_api_id;
  if (typeof gid === 'string') {
    const tail = /^gid:\/\/shopify\/[A-Za-z]+\/(\d+)$/.exec(gid)?.[1];
    if (tail) return tail;
  }
  return idString(payload.id);
}

/** The shop whose secret verifies the delivery: a custom app has one secret per shop. */
function secretScope(request: WebhookRequest): string | undefined {
  return readHeader(request.headers, 'x-shopify-shop-domain')?.toLowerCase();
}

export const shopifyProvider: Provider = {
  id: 'shopify',
  name: 'Shopify',
  defaults: {
    // Shopify retries 8 times over 4 hours (since 2024-09); 3 days leaves room for manual replays.
    // https://shopify.dev/changelog/updates-to-webhook-retry-mechanism
    claimTtlSeconds: 3 * 24 * 3600,
    keyRules: { default: { kind: 'event-id' } },
  },
  verify,
  extract,
  readPayload,
  secretScope,
};
