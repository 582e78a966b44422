/**
 * The contract every provider module fulfils. A provider module is pure: it
 * reads the raw request (headers + exact body bytes) and never touches AWS.
 */

/** Route ids, as they appear in `POST /webhooks/{provider}`. */
export const PROVIDER_IDS = ['stripe', 'github', 'shopify', 'asaas', 'standard'] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

export function isProviderId(value: string): value is ProviderId {
  return (PROVIDER_IDS as readonly string[]).includes(value);
}

/** What a provider module sees of one HTTP delivery. */
export interface WebhookRequest {
  /** Header names lower-cased; one value per name (API Gateway v2 joins repeats with a comma). */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The exact bytes received (after undoing API Gateway's base64 transport encoding). */
  readonly rawBody: Buffer;
}

export type VerifyFailureReason =
  | 'missing_signature'
  | 'malformed_signature'
  | 'signature_mismatch'
  | 'timestamp_outside_tolerance'
  | 'no_secret_configured';

export type VerifyResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: VerifyFailureReason };

export interface VerifyOptions {
  /** Every secret currently accepted (current first, then previous ones during a rotation). */
  readonly secrets: readonly string[];
  /** Wall-clock now, in epoch seconds, for timestamp tolerance checks. */
  readonly nowSeconds: number;
  /** Overrides the provider's default tolerance (seconds); ignored by providers that sign no timestamp. */
  readonly toleranceSeconds?: number;
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

export interface Provider {
  readonly id: ProviderId;
  /** Human name for logs and docs. */
  readonly name: string;
  readonly defaults: ProviderDefaults;
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
   * The account whose secrets verify this delivery, read before verification from the header that
   * names it (Shopify's shop domain, GitHub's hook target). Unsigned, so it only chooses the secret:
   * an account with a secret of its own accepts nothing signed with another (docs/rules.md, "Tenancy").
   */
  secretScope?(request: WebhookRequest): string | undefined;
}
