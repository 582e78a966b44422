/**
 * The contract every provider module fulfils. A provider module is pure: it
 * reads the raw request (headers + exact body bytes) and never touches AWS.
 *
 * Everything about a provider lives in its module (lambdas/providers/<id>.ts, built with
 * `defineProvider`); the route ids, secrets, forwarded headers, alarms, samples and docs tables are
 * all read from the registry (./index.ts), so adding a provider is one file plus one registry line.
 */
/**
 * Route ids, as they appear in `POST /webhooks/{provider}`: the ids of the registry's providers
 * (./index.ts), the built-in ones (`BuiltInProviderId`) and those configured
 * (`WEBHOOK_HMAC_PROVIDERS`, the construct's `hmacProviders`). Only the registry knows which are
 * registered: check a value from outside with `isProviderId` or `getProvider`.
 */
export type ProviderId = string;
export { type BuiltInProviderId, isProviderId, PROVIDER_IDS } from './index.js';

/** What a provider module sees of one HTTP delivery. */
export interface WebhookRequest {
  /** Header names lower-cased; one value per name (API Gateway v2 joins repeats with a comma). */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The exact bytes received (after undoing API Gateway's base64 transport encoding). */
  readonly rawBody: Buffer;
  /**
   * The URL the provider delivered to, as it sees it: the configured public base URL (never the
   * Host header, which the sender chooses), the route's path and the query string as received. Set
   * for every provider when a base URL is configured. A provider that signs it (Square, Twilio)
   * answers `public_url_not_configured` from `verify` without it, which the receiver refuses with 500.
   */
  readonly url?: string;
  /**
   * How the body was read when the receiver accepted it, for a provider whose format depends on more
   * than the forwarded headers (`bodyFormat` below). The queue message carries it, so the processor,
   * which has no URL, reads the body as the receiver did. Wins over the headers and the URL.
   */
  readonly bodyFormat?: BodyFormat;
}

/** How a body's payload is read: a JSON document, or form parameters. */
export type BodyFormat = 'json' | 'form';

/**
 * The answer to a delivery that checks the endpoint rather than reports an event (Slack's
 * `url_verification`, Discord's PING): sent as is, after the signature checked out, and never
 * claimed or queued.
 */
export interface HandshakeResponse extends ProviderReply {
  /** What it was, for the log line and the `reason` metric dimension (`url_verification`, `ping`). */
  readonly name: string;
}

/** An HTTP answer in the provider's own format, sent as is instead of the receiver's JSON. */
export interface ProviderReply {
  readonly statusCode: number;
  readonly contentType: string;
  /** Empty for a body-less answer (a 204). */
  readonly body: string;
}

export type VerifyFailureReason =
  | 'missing_signature'
  | 'malformed_signature'
  | 'signature_mismatch'
  | 'timestamp_outside_tolerance'
  | 'no_secret_configured'
  /** The signature covers the public URL, and the receiver has none configured (`PUBLIC_BASE_URL`). */
  | 'public_url_not_configured';

export type VerifyResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: VerifyFailureReason };

export interface VerifyOptions {
  /** Every secret currently accepted (current first, then previous ones during a rotation). */
  readonly secrets: readonly string[];
  /** Wall-clock now, in epoch seconds, for timestamp tolerance checks. */
  readonly nowSeconds: number;
  /**
   * Overrides the provider's default tolerance (seconds) when set; ignored by providers that sign no
   * timestamp.
   */
  readonly toleranceSeconds?: number | undefined;
}

/** The facts a receiver needs about an authentic delivery, read from the signed body and headers. */
export interface ProviderEvent {
  /** The provider's own stable id of the event (same on every retry). */
  readonly eventId: string;
  /** The provider's event type (`payment_intent.succeeded`, `push`, `orders/create`, `PAYMENT_RECEIVED`, ...). */
  readonly eventType: string;
  /** Account scope: Stripe Connect account, GitHub hook target, Shopify shop, Asaas account, or `default`. */
  readonly account: string;
  /** Id of the business object the event is about (`pi_...`, order id, payment id), when the payload names one. */
  readonly objectId?: string;
  /** Kind of that object (`payment_intent`, `order`, `payment`, ...), when known. */
  readonly objectKind?: string;
  /** When the provider says the event happened, epoch seconds, when the payload says. */
  readonly occurredAt?: number;
}

export type ExtractFailureReason =
  | 'invalid_json'
  | 'missing_event_id'
  | 'missing_event_type'
  /** The unsigned scope header names another account than the signed body (GitHub): answered 401. */
  | 'scope_mismatch';

export type ExtractResult =
  | { readonly ok: true; readonly event: ProviderEvent }
  | { readonly ok: false; readonly reason: ExtractFailureReason; readonly detail?: string };

/** How the idempotency key is built for an event; see lambdas/shared/keys.ts. */
export type KeyRule =
  /** `<provider>:<account>:<event id>` */
  | { readonly kind: 'event-id' }
  /** `<provider>:<account>:<object id>:<event type>` */
  | { readonly kind: 'composite' }
  /** `<provider>:<account>:<object kind>:<object id>` */
  | { readonly kind: 'business-object' };

export interface KeyRules {
  /** Rule for event types not matched below. */
  readonly default: KeyRule;
  /**
   * Per event type. Keys are exact types (`orders/create`) or a prefix ending in `*`
   * (`payment_intent.*`); the exact match wins, then the longest prefix.
   */
  readonly byEventType?: Readonly<Record<string, KeyRule>>;
}

export interface ProviderDefaults {
  /** Claim TTL in seconds: the provider's retry window plus a replay margin. */
  readonly claimTtlSeconds: number;
  /** Signed-timestamp tolerance in seconds, for providers that sign one. */
  readonly toleranceSeconds?: number;
  readonly keyRules: KeyRules;
}

/** Where the provider's secret comes from and what it is. */
export interface ProviderSecret {
  /** Environment variable of the local stack and tests (comma-separated for several). @default `WEBHOOK_SECRET_<ID>` */
  readonly envVar: string;
  /** What the operator puts in the provider's Secrets Manager secret, and where the provider shows it. */
  readonly hint: string;
  /** The local stack's development default (`npm start`, `npm run send`); never used when deployed. */
  readonly devSecret: string;
}

/** The request headers the provider sends, as they concern the queue message. */
export interface ProviderHeaders {
  /** Headers that prove authenticity (signatures, tokens): they never leave the receiver. */
  readonly secret: readonly string[];
  /** Prefixes of the headers worth keeping with the event (ids, topics, delivery times). */
  readonly forward: readonly string[];
}

export interface ProviderAlarms {
  /**
   * Whether `duplicate-ratio-low-<provider>` (retries no longer recognised) is on by default: off for
   * a provider that never retries on its own, for which zero duplicates is the normal state.
   */
  readonly duplicateRatioLow: boolean;
}

/** What `npm run send` and the benchmarks ask of a sample. */
export interface DevSampleOptions {
  /** Fixes the provider event id (for redelivering "the same" event). */
  readonly eventId?: string;
  /** Fixes the business object id (payment intent, order, payment, invoice). */
  readonly objectId?: string;
  /** Epoch seconds; the signed timestamp and the payload's times. */
  readonly nowSeconds: number;
  /** Only for the types in `sizedTypes`: grow the body to exactly this many bytes. */
  readonly bytes?: number;
}

/** A sample delivery before signing: the provider's documented shape and its unsigned headers. */
export interface DevSample {
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  /** What the delivery is about, for printing: `<type> <event id> about <object id>`. */
  readonly summary: string;
}

/**
 * Development support: realistic sample deliveries signed by the provider's documented rule (the
 * tests cross-check `sign` against the providers' official libraries). Used by `npm run send`,
 * `webhooks send`, the local stack's tests and the benchmarks, never by the receiver itself.
 */
export interface ProviderDev {
  /** Event types with a tailored sample; the first is the default. */
  readonly sampleTypes: readonly [string, ...string[]];
  /** Event types whose sample can be grown to an exact size (`--bytes`). @default none */
  readonly sizedTypes: readonly string[];
  /** A sample of `type` (a type without a tailored sample gets the generic shape with that type). */
  sample(type: string, options: DevSampleOptions): DevSample;
  /**
   * The headers that authenticate `body` with `secret` at `nowSeconds`, to merge over the sample's
   * own. `headers` are the unsigned ones (a scheme that signs an id reads it from there); `url` is
   * where the delivery will be posted (a scheme that signs the URL needs it).
   */
  sign(
    body: string | Buffer,
    secret: string,
    nowSeconds: number,
    headers?: Readonly<Record<string, string>>,
    url?: string,
  ): Record<string, string>;
}

/** The provider's rows of the tables in README.md and docs/ (`npm run docs` writes them). */
export interface ProviderDocs {
  /** docs/rules.md, "Signatures": the header, the signed content, digest and key, the tolerance. */
  readonly signature: {
    readonly header: string;
    readonly signedContent: string;
    readonly digest: string;
    readonly tolerance: string;
  };
  /** docs/rules.md, "What identifies an event". */
  readonly identity: {
    readonly eventId: string;
    readonly eventType: string;
    readonly account: string;
    readonly object: string;
  };
  /** The provider's own retry behaviour, with the page it is documented on. */
  readonly retryWindow: { readonly text: string; readonly source: string };
}

/**
 * What a provider's API lets a reconcile job do about events it could not deliver (docs/rules.md,
 * "Reconcile: what each provider's API allows"), each fact with the page it is documented on:
 * - `list-and-redeliver`: the API lists the deliveries (and whether each failed) and sends one
 *   again on request, back through the signed path;
 * - `list-only`: the API lists the events (over TLS, with our API key: authentic), but cannot send
 *   one again;
 * - `queue-state`: the API says only whether delivery is paused, and resumes it on request;
 * - `none`: no API tells which events were not delivered.
 */
export type ReconcileCapability =
  | {
      readonly kind: 'list-and-redeliver';
      readonly list: string;
      readonly redeliver: string;
      /** How long the provider keeps what the list shows. */
      readonly retentionSeconds: number;
      readonly source: string;
    }
  | {
      readonly kind: 'list-only';
      readonly list: string;
      readonly retentionSeconds: number;
      /** What must be done before the list shows anything, and what credential it takes. */
      readonly setup?: string;
      readonly source: string;
    }
  | {
      readonly kind: 'queue-state';
      readonly state: string;
      readonly resume: string;
      readonly retentionSeconds: number;
      readonly source: string;
    }
  | { readonly kind: 'none'; readonly why: string };

export interface Provider<Id extends string = ProviderId> {
  readonly id: Id;
  /** Human name for logs and docs. */
  readonly name: string;
  readonly defaults: ProviderDefaults;
  /** The account scope of an event whose payload names none (docs/rules.md, section 2). */
  readonly defaultAccount: string;
  readonly secret: ProviderSecret;
  readonly headers: ProviderHeaders;
  readonly alarms: ProviderAlarms;
  readonly dev: ProviderDev;
  readonly docs: ProviderDocs;
  /** What its API lets a reconcile job do about events it could not deliver. */
  readonly reconcile: ReconcileCapability;
  /**
   * Checks authenticity over the exact raw body bytes. Never throws: any malformed input is a
   * failure result. Compares in constant time after checking lengths; any configured secret may match.
   */
  verify(request: WebhookRequest, options: VerifyOptions): VerifyResult;
  /** Reads the event's identity from an already verified delivery. Never throws. */
  extract(request: WebhookRequest): ExtractResult;
  /**
   * The delivery's JSON payload, exactly as `extract` reads it; the processor reads queued bodies
   * with it, so an event the receiver accepted is one the processor can read. Never throws.
   */
  readPayload(request: WebhookRequest): Record<string, unknown> | undefined;
  /**
   * The body's format, for a provider that decides it from something the queue message does not
   * carry (Twilio: `bodySHA256` in the signed URL makes the body JSON whatever its content type).
   * The receiver records it in the queue message and both functions pass it back to `readPayload`
   * as `request.bodyFormat`. Absent: the forwarded headers decide. Never throws.
   */
  bodyFormat?(request: WebhookRequest): BodyFormat;
  /**
   * The answer to an authentic delivery that is a handshake or ping rather than an event; undefined
   * for an event. Called after `verify`, before `extract`. Never throws.
   */
  handshake?(request: WebhookRequest): HandshakeResponse | undefined;
  /**
   * The answer the provider expects to an event the receiver took (`accepted`) or already had
   * (`duplicate`), when it is not the receiver's JSON: an interaction response (Discord), TwiML
   * (Twilio). Undefined keeps the JSON. Every other outcome (401, 413, 5xx) keeps the receiver's
   * JSON and status. Never throws.
   */
  acknowledge?(request: WebhookRequest, outcome: 'accepted' | 'duplicate'): ProviderReply | undefined;
  /**
   * The account whose secrets verify this delivery, read before verification from the header that
   * names it (Shopify's shop domain, GitHub's hook target). Unsigned, so it only chooses the secret:
   * an account with a secret of its own accepts nothing signed with another (docs/rules.md, "Tenancy").
   */
  secretScope?(request: WebhookRequest): string | undefined;
}
