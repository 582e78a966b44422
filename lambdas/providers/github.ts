/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex>`, HMAC-SHA256 of the raw body keyed with the secret
 * string. Nothing time-related is signed. The legacy SHA-1 `X-Hub-Signature` is not accepted.
 * https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
 */
import {
  decodeHex,
  field,
  hmacSha256,
  idString,
  readHeader,
  readRequestPayload,
  safeEqualAny,
  usableSecrets,
} from './crypto.js';
import type { ExtractResult, Provider, VerifyOptions, VerifyResult, WebhookRequest } from './types.js';

const SIGNATURE_PREFIX = 'sha256=';

function verify(request: WebhookRequest, options: VerifyOptions): VerifyResult {
  const secrets = usableSecrets(options.secrets);
  if (secrets.length === 0) return { ok: false, reason: 'no_secret_configured' };
  const header = readHeader(request.headers, 'x-hub-signature-256');
  if (header === undefined) return { ok: false, reason: 'missing_signature' };
  if (!header.startsWith(SIGNATURE_PREFIX)) return { ok: false, reason: 'malformed_signature' };

  const candidate = decodeHex(header.slice(SIGNATURE_PREFIX.length));
  if (candidate === undefined) return { ok: false, reason: 'signature_mismatch' };
  const expected = secrets.map((secret) => hmacSha256(secret, request.rawBody));
  // The unsigned hook-target headers are checked against the body in extract (scope_mismatch),
  // so the body is parsed once.
  return safeEqualAny(candidate, expected) ? { ok: true } : { ok: false, reason: 'signature_mismatch' };
}

type Scope = { readonly ok: true; readonly account: string } | { readonly ok: false };

/**
 * The account scope, from signed content only: the body's `installation.id` (present only in
 * deliveries to a GitHub App), else `repository.id`, else `organization.id`. Fixed by the body, so
 * no header can move a delivery to another account: an organization hook's and a repository hook's
 * copy of one push land in the same account (the repository's).
 *
 * The unsigned hook-target headers must agree with the body: a `repository` hook's target id is
 * `repository.id`, an `organization` hook's `organization.id`, and neither is an App delivery (no
 * `installation`); without a type, the id must be one of the body's ids. A GitHub App's target id is
 * the App id, which the body does not carry (the App's own secret binds it).
 * https://docs.github.com/en/webhooks/webhook-events-and-payloads#delivery-headers
 */
function scopeOf(request: WebhookRequest, payload: Readonly<Record<string, unknown>>): Scope {
  const targetId = readHeader(request.headers, 'x-github-hook-installation-target-id');
  const targetType = readHeader(request.headers, 'x-github-hook-installation-target-type')?.toLowerCase();
  const installation = idString(field(payload.installation, 'id'));
  const repository = idString(field(payload.repository, 'id'));
  const organization = idString(field(payload.organization, 'id'));
  const account = installation ?? repository ?? organization ?? 'default';
  if (targetType === 'repository' || targetType === 'organization') {
    const signed = targetType === 'repository' ? repository : organization;
    if (installation !== undefined || signed === undefined || signed !== targetId) return { ok: false };
    return { ok: true, account };
  }
  if (targetType === undefined && targetId !== undefined) {
    if (![repository, organization, installation].includes(targetId)) return { ok: false };
  }
  return { ok: true, account };
}

/** The hook whose secret verifies the delivery (each hook, and each App, has its own secret). */
function secretScope(request: WebhookRequest): string | undefined {
  return readHeader(request.headers, 'x-github-hook-installation-target-id');
}

/**
 * The JSON payload. A webhook configured with content type `application/x-www-form-urlencoded`
 * sends `payload=<url-encoded JSON>`; the signature still covers the form body as received.
 * https://docs.github.com/en/webhooks/using-webhooks/creating-webhooks
 */
function readPayload(request: WebhookRequest): Record<string, unknown> | undefined {
  return readRequestPayload(request, { formField: 'payload' });
}

function extract(request: WebhookRequest): ExtractResult {
  const payload = readPayload(request);
  if (payload === undefined) {
    return { ok: false, reason: 'invalid_json', detail: 'body is not a JSON object' };
  }
  // The delivery GUID stays the same when a delivery is redelivered.
  const eventId = readHeader(request.headers, 'x-github-delivery');
  if (eventId === undefined) return { ok: false, reason: 'missing_event_id' };
  const eventType = readHeader(request.headers, 'x-github-event');
  if (eventType === undefined) return { ok: false, reason: 'missing_event_type' };

  const objectId = idString(field(payload.repository, 'id'));
  const scope = scopeOf(request, payload);
  if (!scope.ok) return { ok: false, reason: 'scope_mismatch' };
  return {
    ok: true,
    event: {
      eventId,
      eventType,
      // From the signed body, checked against the unsigned header (scopeOf). Nothing time-related
      // is signed: a captured delivery replayed with a fresh delivery id passes verification, but
      // only in its own scope, where absolute writes and the stale-order guard make it harmless.
      account: scope.account,
      objectId,
      objectKind: objectId === undefined ? undefined : 'repository',
    },
  };
}

export const githubProvider: Provider = {
  id: 'github',
  name: 'GitHub',
  defaults: {
    // GitHub does not retry; failed deliveries from the past 3 days (7 on Enterprise Server) can be
    // redelivered by hand, which 7 days covers.
    // https://docs.github.com/en/webhooks/testing-and-troubleshooting-webhooks/redelivering-webhooks
    claimTtlSeconds: 7 * 24 * 3600,
    keyRules: { default: { kind: 'event-id' } },
  },
  verify,
  extract,
  readPayload,
  secretScope,
};
