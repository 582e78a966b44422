/**
 * Standard Webhooks (and Svix, which uses the same scheme under `svix-*` header names):
 * `webhook-signature: v1,<base64> [v1a,<base64> ...]` over `<webhook-id>.<webhook-timestamp>.<raw
 * body>`: `v1` an HMAC-SHA256 keyed with the base64-decoded `whsec_` secret, `v1a` an Ed25519
 * signature checked with a `whpk_` public key (base64 of its 32 raw bytes).
 * https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 */

import { createPublicKey, type KeyObject, verify as verifySignature } from 'node:crypto';
import {
  bodyBytes,
  decodeBase64,
  effectiveTolerance,
  field,
  hmacSha256,
  idString,
  isoToEpochSeconds,
  nonEmptyString,
  parseUnixSeconds,
  randomHex,
  readHeader,
  readRequestPayload,
  safeEqualAny,
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

/** The reference libraries' `WEBHOOK_TOLERANCE_IN_SECONDS`. */
const DEFAULT_TOLERANCE_SECONDS = 5 * 60;
const SECRET_PREFIX = 'whsec_';
const PUBLIC_KEY_PREFIX = 'whpk_';
/** An Ed25519 public key is 32 bytes; a signature 64. */
const ED25519_KEY_BYTES = 32;
const ED25519_SIGNATURE_BYTES = 64;
/** One secret per endpoint: the endpoint is the scope. */
const DEFAULT_ACCOUNT = 'default';

interface StandardHeaders {
  readonly id: string | undefined;
  readonly timestamp: string | undefined;
  readonly signature: string | undefined;
}

/**
 * The `webhook-*` headers when any of them is present, else the `svix-*` ones. The three are read
 * as one set so that a delivery can never mix an id from one naming with a signature from the other.
 */
function readStandardHeaders(headers: WebhookRequest['headers']): StandardHeaders {
  const prefix =
    readHeader(headers, 'webhook-id') !== undefined ||
    readHeader(headers, 'webhook-timestamp') !== undefined ||
    readHeader(headers, 'webhook-signature') !== undefined
      ? 'webhook'
      : 'svix';
  return {
    id: readHeader(headers, `${prefix}-id`),
    timestamp: readHeader(headers, `${prefix}-timestamp`),
    signature: readHeader(headers, `${prefix}-signature`),
  };
}

/**
 * The HMAC key: the base64 after an optional `whsec_` prefix. Svix-style secrets are sometimes
 * shared without base64 padding, so it is restored before the strict decode. A secret that does
 * not decode is unusable (never a match).
 */
function decodeSecret(secret: string): Buffer | undefined {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const padded = encoded.length % 4 === 0 ? encoded : encoded + '='.repeat(4 - (encoded.length % 4));
  const key = decodeBase64(padded);
  return key !== undefined && key.length > 0 ? key : undefined;
}

/**
 * A `whpk_` public key as a key object; undefined for any other secret or one that is not 32 bytes
 * of base64. Keys are parsed once per container.
 */
const publicKeys = new Map<string, KeyObject | undefined>();
function decodePublicKey(secret: string): KeyObject | undefined {
  if (!secret.startsWith(PUBLIC_KEY_PREFIX)) return undefined;
  if (publicKeys.has(secret)) return publicKeys.get(secret);
  const raw = decodeBase64(secret.slice(PUBLIC_KEY_PREFIX.length));
  let key: KeyObject | undefined;
  if (raw?.length === ED25519_KEY_BYTES) {
    try {
      key = createPublicKey({
        key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') },
        format: 'jwk',
      });
    } catch {
      key = undefined;
    }
  }
  publicKeys.set(secret, key);
  return key;
}

/** The base64 part of each `<version>,<base64>` entry, by version (`v1`, `v1a`); unknown versions are skipped. */
function signaturesOf(header: string): { v1: string[]; v1a: string[] } {
  const found = { v1: [] as string[], v1a: [] as string[] };
  for (const entry of header.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0) continue;
    const version = entry.slice(0, comma);
    if (version === 'v1' || version === 'v1a') found[version].push(entry.slice(comma + 1));
  }
  return found;
}

/** Whether any `v1a` signature verifies with any of the public keys. */
function anyEd25519Matches(
  signatures: readonly string[],
  keys: readonly KeyObject[],
  content: Buffer,
): boolean {
  let matched = false;
  for (const entry of signatures) {
    const signature = decodeBase64(entry);
    if (signature?.length !== ED25519_SIGNATURE_BYTES) continue;
    for (const key of keys) if (verifySignature(null, content, key, signature)) matched = true;
  }
  return matched;
}

function verify(request: WebhookRequest, options: VerifyOptions): VerifyResult {
  const secrets = usableSecrets(options.secrets);
  const publicKeys = secrets.map(decodePublicKey).filter((key): key is KeyObject => key !== undefined);
  // A `whpk_` entry is a public key, never an HMAC key.
  const keys = secrets
    .filter((secret) => !secret.startsWith(PUBLIC_KEY_PREFIX))
    .map(decodeSecret)
    .filter((key): key is Buffer => key !== undefined);
  if (keys.length === 0 && publicKeys.length === 0) return { ok: false, reason: 'no_secret_configured' };
  const { id, timestamp: timestampText, signature } = readStandardHeaders(request.headers);
  if (id === undefined || timestampText === undefined || signature === undefined) {
    return { ok: false, reason: 'missing_signature' };
  }
  const timestamp = parseUnixSeconds(timestampText);
  // The spec says ids and timestamps contain no `.`: with one, `<id>.<timestamp>.` would not split
  // unambiguously, and bytes could be moved between the id and the body under one signature.
  if (timestamp === undefined || id.includes('.')) return { ok: false, reason: 'malformed_signature' };
  const signatures = signaturesOf(signature);
  if (signatures.v1.length === 0 && signatures.v1a.length === 0)
    return { ok: false, reason: 'malformed_signature' };

  const signedContent = Buffer.concat([Buffer.from(`${id}.${timestampText}.`), request.rawBody]);
  const expected = keys.map((key) => hmacSha256(key, signedContent));
  const hmacMatched = signatures.v1.some((entry) => {
    const candidate = decodeBase64(entry);
    return candidate !== undefined && safeEqualAny(candidate, expected);
  });
  const matched = hmacMatched || anyEd25519Matches(signatures.v1a, publicKeys, signedContent);
  if (!matched) return { ok: false, reason: 'signature_mismatch' };

  // Signature first, then time, as for Stripe; too old and too new are both rejected, as the
  // reference libraries do.
  const tolerance = effectiveTolerance(options.toleranceSeconds, DEFAULT_TOLERANCE_SECONDS);
  if (!withinTolerance(timestamp, options.nowSeconds, tolerance)) {
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
  // The message id is the same on every retry of a message.
  const eventId = readStandardHeaders(request.headers).id;
  if (eventId === undefined) return { ok: false, reason: 'missing_event_id' };
  const eventType = nonEmptyString(payload.type);
  if (eventType === undefined) return { ok: false, reason: 'missing_event_type' };

  return {
    ok: true,
    event: {
      eventId,
      eventType,
      account: DEFAULT_ACCOUNT,
      objectId: idString(field(payload.data, 'id')),
      occurredAt: isoToEpochSeconds(payload.timestamp),
    },
  };
}

/**
 * `webhook-id`, `webhook-timestamp` and `webhook-signature` for `body`, as the reference libraries'
 * `sign` computes them; the id is the sample's own `webhook-id`, else a fresh one.
 */
function sign(
  body: string | Buffer,
  secret: string,
  nowSeconds: number,
  headers: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const id = headers['webhook-id'] ?? `msg_${randomHex(12)}`;
  const key = decodeSecret(secret) ?? Buffer.alloc(0);
  const signature = hmacSha256(key, Buffer.concat([Buffer.from(`${id}.${nowSeconds}.`), bodyBytes(body)]));
  return {
    'webhook-id': id,
    'webhook-timestamp': String(nowSeconds),
    'webhook-signature': `v1,${signature.toString('base64')}`,
  };
}

/** An invoice event in the spec's payload shape (`type`, `timestamp`, `data`). */
function sample(type: string, options: DevSampleOptions): DevSample {
  const invoiceId = options.objectId ?? `inv_${randomHex(8)}`;
  const body = JSON.stringify({
    type,
    timestamp: new Date(options.nowSeconds * 1000).toISOString(),
    data: { id: invoiceId, amount: 4200, currency: 'EUR', status: type.split('.').at(-1) },
  });
  const id = options.eventId ?? `msg_${randomHex(12)}`;
  return {
    body,
    headers: { 'content-type': 'application/json', 'webhook-id': id },
    summary: `${type} ${id} about ${invoiceId}`,
  };
}

export const standardProvider = defineProvider({
  id: 'standard',
  name: 'Standard Webhooks',
  defaults: {
    // Svix retries for about 27.6 hours (immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h);
    // 3 days leaves room for manual replays. https://docs.svix.com/retries
    claimTtlSeconds: 3 * 24 * 3600,
    toleranceSeconds: DEFAULT_TOLERANCE_SECONDS,
    keyRules: { default: { kind: 'event-id' } },
  },
  defaultAccount: DEFAULT_ACCOUNT,
  secret: {
    hint: 'the endpoint signing secret (whsec_..., base64 after the prefix), or for asymmetric (v1a) signatures the public key (whpk_...), from the Svix / Standard Webhooks sender',
    // Standard Webhooks secrets are base64 after `whsec_`.
    devSecret: `whsec_${Buffer.from('local-standard-webhooks-secret!!').toString('base64')}`,
  },
  headers: { secret: ['webhook-signature', 'svix-signature'], forward: ['webhook-', 'svix-'] },
  verify,
  extract,
  readPayload,
  dev: { sampleTypes: ['invoice.paid', 'invoice.created'], sample, sign },
  reconcile: {
    kind: 'none',
    why: "the standard defines no API; a sender's own (Svix's message attempts, say) is not the standard's",
  },
  docs: {
    signature: {
      header: '`webhook-signature: v1,<b64> [v1a,<b64> …]` (or `svix-signature`)',
      signedContent: '`<webhook-id>.<webhook-timestamp>.<raw body>`',
      digest:
        '`v1`: HMAC-SHA256 base64, key = base64-decode of the secret after `whsec_`; `v1a`: Ed25519 (64-byte signature, base64) with a `whpk_` public key (32 bytes, base64)',
      tolerance: '300 s either way',
    },
    identity: {
      eventId: 'header `webhook-id` / `svix-id`',
      eventType: 'payload `type`',
      account: '`default`',
      object: '`data.id`',
    },
    retryWindow: {
      text: 'Svix: 8 attempts over about 27.6 hours',
      source: 'https://docs.svix.com/retries',
    },
  },
});
