/**
 * Shopify: `X-Shopify-Hmac-Sha256: <base64>`, HMAC-SHA256 of the raw body keyed with the app's
 * client secret. Nothing time-related is signed, and no header is.
 * https://shopify.dev/docs/apps/build/webhooks
 */
import { randomUUID } from 'node:crypto';
import {
  bodyBytes,
  decodeBase64,
  hmacSha256,
  idString,
  isoToEpochSeconds,
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

/** A delivery without a shop domain header. */
const DEFAULT_ACCOUNT = 'default';

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
      account: readHeader(request.headers, 'x-shopify-shop-domain')?.toLowerCase() ?? DEFAULT_ACCOUNT,
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

/** `X-Shopify-Hmac-Sha256` for `body`, as Shopify computes it. */
function sign(body: string | Buffer, secret: string): Record<string, string> {
  return { 'x-shopify-hmac-sha256': hmacSha256(secret, bodyBytes(body)).toString('base64') };
}

const SAMPLE_SHOP = 'example-shop.myshopify.com';
const SAMPLE_CUSTOMER = { id: 207119551, email: 'bob.norman@mail.example.com', phone: '+16136120707' };

/**
 * A mandatory compliance request in the documented shape; `objectId` is the customer id.
 * https://shopify.dev/docs/apps/build/compliance/privacy-law-compliance
 */
function complianceSample(type: string, options: DevSampleOptions): Record<string, unknown> {
  const shop = { shop_id: 954889, shop_domain: SAMPLE_SHOP };
  if (type === 'shop/redact') return shop;
  const customer = {
    ...SAMPLE_CUSTOMER,
    ...(options.objectId === undefined ? {} : { id: Number(options.objectId) }),
  };
  if (type === 'customers/redact') return { ...shop, customer, orders_to_redact: [] };
  return {
    ...shop,
    orders_requested: [],
    customer,
    data_request: { id: Number.parseInt(randomHex(3), 16) },
  };
}

/** An order webhook (https://shopify.dev/docs/api/webhooks?reference=toml#list-orders/create). */
function sample(type: string, options: DevSampleOptions): DevSample {
  const webhookId = options.eventId ?? randomUUID();
  const headers = (now: number) => ({
    'content-type': 'application/json',
    'x-shopify-topic': type,
    'x-shopify-shop-domain': SAMPLE_SHOP,
    'x-shopify-webhook-id': webhookId,
    'x-shopify-event-id': webhookId,
    'x-shopify-triggered-at': new Date(now).toISOString(),
    'x-shopify-api-version': '2025-10',
  });
  if (type === 'customers/data_request' || type === 'customers/redact' || type === 'shop/redact') {
    const body = complianceSample(type, options);
    const customer = (body.customer as { id?: number } | undefined)?.id;
    return {
      body: JSON.stringify(body),
      headers: headers(options.nowSeconds * 1000),
      summary: `${type} ${customer === undefined ? `shop ${SAMPLE_SHOP}` : `customer ${customer}`} (compliance)`,
    };
  }
  const orderId = options.objectId ?? String(5_000_000_000_000 + Number.parseInt(randomHex(3), 16));
  const now = options.nowSeconds * 1000;
  const orderEmail = SAMPLE_CUSTOMER.email;
  const order = {
    id: Number(orderId),
    admin_graphql_api_id: `gid://shopify/Order/${orderId}`,
    name: '#1001',
    email: orderEmail,
    created_at: new Date(now - 60_000).toISOString(),
    updated_at: new Date(now).toISOString(),
    financial_status: type === 'orders/create' ? 'pending' : 'paid',
    fulfillment_status: null,
    total_price: '199.00',
    currency: 'USD',
    customer: {
      id: SAMPLE_CUSTOMER.id,
      email: orderEmail,
      admin_graphql_api_id: `gid://shopify/Customer/${SAMPLE_CUSTOMER.id}`,
    },
  };
  return {
    body: JSON.stringify(order),
    headers: headers(now),
    summary: `${type} order ${orderId}`,
  };
}

export const shopifyProvider = defineProvider({
  id: 'shopify',
  name: 'Shopify',
  defaults: {
    // Shopify retries 8 times over 4 hours (since 2024-09); 3 days leaves room for manual replays.
    // https://shopify.dev/changelog/updates-to-webhook-retry-mechanism
    claimTtlSeconds: 3 * 24 * 3600,
    keyRules: { default: { kind: 'event-id' } },
  },
  defaultAccount: DEFAULT_ACCOUNT,
  secret: {
    hint: "the app's client secret (Partners dashboard / app settings > API credentials)",
    devSecret: 'local-shopify-secret',
  },
  headers: { secret: ['x-shopify-hmac-sha256'], forward: ['x-shopify-'] },
  verify,
  extract,
  readPayload,
  secretScope,
  dev: {
    sampleTypes: [
      'orders/create',
      'orders/updated',
      'customers/data_request',
      'customers/redact',
      'shop/redact',
    ],
    sample,
    sign,
  },
  reconcile: { kind: 'none', why: 'no API lists the deliveries of a webhook subscription' },
  docs: {
    signature: {
      header: '`X-Shopify-Hmac-Sha256: <base64>`',
      signedContent: 'raw body',
      digest: "HMAC-SHA256 base64; the app's client secret",
      tolerance: 'none signed',
    },
    identity: {
      eventId: 'header `X-Shopify-Event-Id`, else `X-Shopify-Webhook-Id`',
      eventType: 'header `X-Shopify-Topic`',
      account:
        "header `X-Shopify-Shop-Domain` (lower-cased; unsigned: it chooses the shop's own secret, and business rows are keyed by global ids, see Tenancy)",
      object: 'payload `id` (topic resource, e.g. `order`)',
    },
    retryWindow: {
      text: '8 retries over 4 hours',
      source: 'https://shopify.dev/changelog/updates-to-webhook-retry-mechanism',
    },
  },
});
