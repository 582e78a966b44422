/**
 * Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>...]`, HMAC-SHA256 of `<t>.<raw body>`
 * keyed with the endpoint secret string as-is. https://docs.stripe.com/webhooks/signature
 */

import {
  anyHexSignatureMatches,
  bodyBytes,
  effectiveTolerance,
  field,
  hmacSha256,
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

/** The platform's own events name no `account`. */
const DEFAULT_ACCOUNT = 'platform';

/** stripe-node's `DEFAULT_TOLERANCE`. */
const DEFAULT_TOLERANCE_SECONDS = 300;

/** `t` is the signed timestamp; `v1` entries the signatures (`v0` and unknown schemes ignored). */
const HEADER_KEYS = { separator: ',', timestamp: 't', signature: 'v1' } as const;

function verify(request: WebhookRequest, options: VerifyOptions): VerifyResult {
  const secrets = usableSecrets(options.secrets);
  if (secrets.length === 0) return { ok: false, reason: 'no_secret_configured' };
  const header = readHeader(request.headers, 'stripe-signature');
  if (header === undefined) return { ok: false, reason: 'missing_signature' };
  const parsed = parseTimestampedSignatures(header, HEADER_KEYS);
  if (parsed === undefined) return { ok: false, reason: 'malformed_signature' };

  // The signed content is the header's own `t`, byte for byte, then `.` and the raw body.
  const signedContent = Buffer.concat([Buffer.from(`${parsed.timestampText}.`), request.rawBody]);
  // While a secret is rolled Stripe sends one v1 per active secret: any v1 may match any secret.
  const expected = secrets.map((secret) => hmacSha256(secret, signedContent));
  if (!anyHexSignatureMatches(parsed.signatures, expected))
    return { ok: false, reason: 'signature_mismatch' };

  // Signature first, then time: a forged header is reported as a mismatch, and only an authentic
  // but stale (or future) delivery as outside the tolerance. stripe-node rejects only old
  // timestamps; we also reject ones more than the tolerance ahead, because Stripe never signs in
  // the future, and an allowance equal to the tolerance already absorbs clock skew.
  const tolerance = effectiveTolerance(options.toleranceSeconds, DEFAULT_TOLERANCE_SECONDS);
  if (!withinTolerance(parsed.timestamp, options.nowSeconds, tolerance)) {
    return { ok: false, reason: 'timestamp_outside_tolerance' };
  }
  return { ok: true };
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
  const eventId = nonEmptyString(payload.id);
  if (eventId === undefined) return { ok: false, reason: 'missing_event_id' };
  const eventType = nonEmptyString(payload.type);
  if (eventType === undefined) return { ok: false, reason: 'missing_event_type' };

  // Thin (v2) events carry only references. https://docs.stripe.com/event-destinations
  if (payload.object === 'v2.core.event') {
    const related = payload.related_object;
    return {
      ok: true,
      event: {
        eventId,
        eventType,
        // A thin event names its Connect account in `context` rather than `account`.
        account: nonEmptyString(payload.account) ?? nonEmptyString(payload.context) ?? DEFAULT_ACCOUNT,
        objectId: nonEmptyString(field(related, 'id')),
        objectKind: nonEmptyString(field(related, 'type')),
        occurredAt: isoToEpochSeconds(payload.created),
      },
    };
  }

  const object = field(payload.data, 'object');
  const created = payload.created;
  return {
    ok: true,
    event: {
      eventId,
      eventType,
      // Connect events name the connected account; the platform's own events have no `account`.
      account: nonEmptyString(payload.account) ?? DEFAULT_ACCOUNT,
      objectId: nonEmptyString(field(object, 'id')),
      objectKind: nonEmptyString(field(object, 'object')),
      occurredAt: typeof created === 'number' && Number.isSafeInteger(created) ? created : undefined,
    },
  };
}

/** `Stripe-Signature` for `body`, as Stripe computes it (stripe-node's `generateTestHeaderString`). */
function sign(body: string | Buffer, secret: string, nowSeconds: number): Record<string, string> {
  const signature = hmacSha256(secret, Buffer.concat([Buffer.from(`${nowSeconds}.`), bodyBytes(body)]));
  return { 'stripe-signature': `t=${nowSeconds},v1=${signature.toString('hex')}` };
}

const INTENT_STATUS: Readonly<Record<string, string>> = {
  'payment_intent.succeeded': 'succeeded',
  'payment_intent.processing': 'processing',
  'payment_intent.payment_failed': 'requires_payment_method',
  'payment_intent.canceled': 'canceled',
};

/** A customer, a price and a subscription the billing samples share. */
const BILLING = {
  customer: 'cus_NffrFeUfNV2Hib',
  price: 'price_1MowQULkdIwHu7ixraBm864M',
  product: 'prod_NWjs8kKbJWmuuc',
  amount: 2000,
  currency: 'usd',
  /** A monthly period, in seconds. */
  period: 30 * 24 * 3600,
} as const;

/**
 * An invoice of a subscription cycle (https://docs.stripe.com/api/invoices/object), as the
 * 2024-06-20 API version sends it: `subscription` at the top level; the invoice's `period_*` is the
 * usage period just ended, its subscription line's `period` the one billed in advance (starting now).
 * `invoice.paid` has it `paid`; `invoice.payment_failed` leaves it `open`, attempted once, with the
 * next attempt scheduled.
 */
function invoice(type: string, options: DevSampleOptions) {
  const paid = type !== 'invoice.payment_failed';
  const periodEnd = options.nowSeconds;
  const periodStart = periodEnd - BILLING.period;
  const billed = { start: periodEnd, end: periodEnd + BILLING.period };
  const subscription = `sub_${randomHex(12)}`;
  return {
    id: options.objectId ?? `in_${randomHex(12)}`,
    object: 'invoice',
    customer: BILLING.customer,
    customer_email: 'jenny.rosen@example.com',
    subscription,
    status: paid ? 'paid' : 'open',
    paid,
    billing_reason: 'subscription_cycle',
    collection_method: 'charge_automatically',
    currency: BILLING.currency,
    amount_due: BILLING.amount,
    amount_paid: paid ? BILLING.amount : 0,
    amount_remaining: paid ? 0 : BILLING.amount,
    attempt_count: 1,
    attempted: true,
    next_payment_attempt: paid ? null : options.nowSeconds + 3 * 24 * 3600,
    period_start: periodStart,
    period_end: periodEnd,
    created: options.nowSeconds,
    lines: {
      object: 'list',
      data: [
        {
          id: `il_${randomHex(12)}`,
          object: 'line_item',
          amount: BILLING.amount,
          currency: BILLING.currency,
          description: '1 × Pro (at $20.00 / month)',
          period: billed,
          price: {
            id: BILLING.price,
            object: 'price',
            product: BILLING.product,
            unit_amount: BILLING.amount,
          },
          quantity: 1,
          subscription,
          type: 'subscription',
        },
      ],
      has_more: false,
      total_count: 1,
    },
  };
}

/**
 * A subscription (https://docs.stripe.com/api/subscriptions/object). `updated`: still `active`,
 * set to cancel at the period's end (the event's `previous_attributes` say what changed);
 * `deleted`: `canceled`, ended now.
 */
function subscription(type: string, options: DevSampleOptions) {
  const deleted = type === 'customer.subscription.deleted';
  const start = options.nowSeconds - 10 * 24 * 3600;
  const id = options.objectId ?? `sub_${randomHex(12)}`;
  return {
    id,
    object: 'subscription',
    customer: BILLING.customer,
    status: deleted ? 'canceled' : 'active',
    cancel_at_period_end: !deleted,
    cancel_at: deleted ? null : start + BILLING.period,
    canceled_at: options.nowSeconds,
    ended_at: deleted ? options.nowSeconds : null,
    collection_method: 'charge_automatically',
    currency: BILLING.currency,
    current_period_start: start,
    current_period_end: start + BILLING.period,
    start_date: start,
    latest_invoice: `in_${randomHex(12)}`,
    items: {
      object: 'list',
      data: [
        {
          id: `si_${randomHex(8)}`,
          object: 'subscription_item',
          price: {
            id: BILLING.price,
            object: 'price',
            product: BILLING.product,
            unit_amount: BILLING.amount,
            currency: BILLING.currency,
            recurring: { interval: 'month', interval_count: 1 },
          },
          quantity: 1,
          subscription: id,
        },
      ],
      has_more: false,
      total_count: 1,
    },
  };
}

/** The data object of an event of `type`: a charge, a payment intent, an invoice, a subscription, else a customer. */
function dataObject(
  type: string,
  options: DevSampleOptions,
): Readonly<Record<string, unknown>> & { readonly id: string } {
  const intentId = options.objectId ?? `pi_${randomHex(12)}`;
  if (type.startsWith('charge.'))
    return {
      id: `ch_${randomHex(12)}`,
      object: 'charge',
      payment_intent: intentId,
      amount: 2000,
      amount_refunded: 2000,
      refunded: true,
      currency: 'usd',
    };
  if (type.startsWith('payment_intent.'))
    return {
      id: intentId,
      object: 'payment_intent',
      amount: 2000,
      amount_received: type === 'payment_intent.succeeded' ? 2000 : 0,
      currency: 'usd',
      status: INTENT_STATUS[type] ?? 'requires_action',
      receipt_email: 'jenny.rosen@example.com',
      customer: 'cus_NffrFeUfNV2Hib',
    };
  if (type.startsWith('invoice.')) return invoice(type, options);
  if (type.startsWith('customer.subscription.')) return subscription(type, options);
  return { id: `cus_${randomHex(8)}`, object: 'customer', email: 'jenny.rosen@example.com' };
}

/** An event in the documented shape (https://docs.stripe.com/api/events/object), compact JSON as Stripe sends. */
function sample(type: string, options: DevSampleOptions): DevSample {
  const object = dataObject(type, options);
  const event = {
    id: options.eventId ?? `evt_${randomHex(12)}`,
    object: 'event',
    api_version: '2024-06-20',
    created: options.nowSeconds,
    livemode: false,
    pending_webhooks: 1,
    type,
    data: {
      object,
      // An `*.updated` event names the fields that changed, with their values before.
      ...(type === 'customer.subscription.updated'
        ? { previous_attributes: { cancel_at_period_end: false, cancel_at: null, canceled_at: null } }
        : {}),
    },
  };
  return {
    body: JSON.stringify(event),
    headers: { 'content-type': 'application/json; charset=utf-8' },
    summary: `${type} ${event.id} about ${object.id}`,
  };
}

export const stripeProvider = defineProvider({
  id: 'stripe',
  name: 'Stripe',
  defaults: {
    // Stripe retries live-mode deliveries for up to 3 days; the rest is margin for manual resends,
    // disputes and refunds. https://docs.stripe.com/webhooks
    claimTtlSeconds: 7 * 24 * 3600,
    toleranceSeconds: DEFAULT_TOLERANCE_SECONDS,
    keyRules: {
      default: { kind: 'event-id' },
      // A payment flow is keyed by what happened to which intent, so a second event id for the
      // same intent and transition (a re-sent or re-created event) is still one business fact.
      byEventType: { 'payment_intent.*': { kind: 'composite' } },
    },
  },
  defaultAccount: DEFAULT_ACCOUNT,
  secret: {
    hint: 'the endpoint signing secret (whsec_...) from Developers > Webhooks > your endpoint',
    devSecret: 'whsec_local_development_secret',
  },
  headers: { secret: ['stripe-signature'], forward: ['stripe-'] },
  verify,
  extract,
  readPayload,
  dev: {
    sampleTypes: [
      'payment_intent.succeeded',
      'payment_intent.processing',
      'payment_intent.payment_failed',
      'charge.refunded',
      'customer.created',
      // Billing: keyed by event id (the default rule), as every type but payment_intent.*.
      'invoice.paid',
      'invoice.payment_failed',
      'customer.subscription.updated',
      'customer.subscription.deleted',
    ],
    sample,
    sign,
  },
  // `delivery_success=false`: events still pending or that failed every attempt to an endpoint.
  reconcile: {
    kind: 'list-only',
    list: '`GET /v1/events` with `delivery_success=false` and `created[gte]`, paged by `starting_after`',
    retentionSeconds: 30 * 86_400,
    setup: 'a restricted key with read access to events',
    source: 'https://docs.stripe.com/api/events/list',
  },
  docs: {
    signature: {
      header: '`Stripe-Signature: t=…,v1=…[,v1=…]` (`v0` ignored)',
      signedContent: '`<t>.<raw body>`',
      digest: 'HMAC-SHA256 hex; the `whsec_…` secret as-is',
      tolerance:
        '300 s, old **and** future (stripe-node only rejects old ones: a far-future timestamp is never legitimate)',
    },
    identity: {
      eventId: 'payload `id`',
      eventType: 'payload `type`',
      account: 'payload `account`, else `platform`',
      object: '`data.object.id` (`data.object.object`); thin events: `related_object.id`',
    },
    retryWindow: {
      text: '3 days (live mode, exponential back-off); dashboard/CLI resends later',
      source: 'https://docs.stripe.com/webhooks',
    },
  },
});
