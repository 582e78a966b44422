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
} from './crypto';
import type { ExtractResult, Provider, VerifyOptions, VerifyResult, WebhookRequest } from './types';

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
  return safeEqualAny(candidate, expected) ? { ok: true } : { ok: false, reason: 'signature_mismatch' };
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
  return {
    ok: true,
    event: {
      eventId,
      eventType,
      // This header is not signed. Delivery GUIDs are globally unique, so the scope is only
      // belt-and-braces. Nor is anything time-related signed: a captured delivery replayed with a
      // fresh delivery id passes verification, so absolute (not incremental) writes downstream
      // are the defence against it.
      account: readHeader(request.headers, 'x-github-hook-installation-target-id') ?? 'default',
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
};
