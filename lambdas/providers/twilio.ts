/**
 * Twilio: `X-Twilio-Signature: <base64>`, an HMAC of the full URL Twilio requested followed by the
 * POST parameters sorted by name, each as name + value with no separator, keyed with the account's
 * Auth Token. HMAC-SHA1 is Twilio's mandated scheme and is accepted for Twilio only; a webhook that
 * a Webhooks Rule signs with a SharedKey says `algorithm=HMAC_SHA256` in
 * `X-Twilio-Webhooks-Signature-Settings`, and is checked with SHA-256 instead.
 * A JSON body is not parameters: Twilio then adds `bodySHA256=<hex SHA-256 of the body>` to the
 * URL, signs the URL alone, and the body is checked against that hash.
 * The URL is the receiver's configured public one (`PUBLIC_BASE_URL`), never the Host header.
 * https://www.twilio.com/docs/usage/webhooks/webhooks-security
 */

import { createHash, createHmac } from 'node:crypto';
import {
  bodyBytes,
  decodeBase64,
  decodeHex,
  nonEmptyString,
  parseJsonObject,
  randomHex,
  readHeader,
  safeEqual,
  safeEqualAny,
  usableSecrets,
} from './crypto.js';
import { defineProvider } from './define.js';
import type {
  BodyFormat,
  DevSample,
  DevSampleOptions,
  ExtractResult,
  ProviderReply,
  VerifyOptions,
  VerifyResult,
  WebhookRequest,
} from './types.js';

/** Every Twilio request names its account (`AccountSid`); this is for one that does not. */
const DEFAULT_ACCOUNT = 'default';
const BODY_HASH_PARAMETER = 'bodySHA256';

/** The form parameters of a body, repeated names as arrays, values decoded as Twilio signed them. */
export type FormParameters = Record<string, string | string[]>;

function parseForm(raw: Buffer): FormParameters {
  // No prototype: a parameter named `__proto__` is a parameter like any other.
  const parameters = Object.create(null) as FormParameters;
  for (const [name, value] of new URLSearchParams(raw.toString('utf8'))) {
    const seen = parameters[name];
    if (seen === undefined) parameters[name] = value;
    else parameters[name] = Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return parameters;
}

/**
 * What Twilio signs: the URL, then each parameter by name (JavaScript's default sort, as the `twilio`
 * package sorts), a repeated one once per distinct value in sorted order.
 */
export function twilioSignedString(url: string, parameters: Readonly<FormParameters>): string {
  let signed = url;
  for (const name of Object.keys(parameters).sort()) {
    const value = parameters[name] ?? '';
    const values = Array.isArray(value) ? [...new Set(value)].sort() : [value];
    for (const entry of values) signed += name + entry;
  }
  return signed;
}

/**
 * Twilio may sign the URL with or without the scheme's default port (`:443`): both forms are tried,
 * as the `twilio` package does. The URL is ours, so no other normalisation is needed.
 */
function urlVariants(url: string): string[] {
  const match = /^(https?):\/\/([^/?#]+)(.*)$/i.exec(url);
  if (!match) return [url];
  const [, scheme = '', authority = '', rest = ''] = match;
  const defaultPort = scheme.toLowerCase() === 'https' ? '443' : '80';
  const host = authority.replace(/:\d+$/, '');
  const port = /:(\d+)$/.exec(authority)?.[1];
  const withoutPort = `${scheme}://${host}${rest}`;
  const withDefaultPort = `${scheme}://${host}:${defaultPort}${rest}`;
  if (port === undefined) return [withoutPort, withDefaultPort];
  return port === defaultPort ? [withoutPort, withDefaultPort] : [url];
}

type Algorithm = 'sha1' | 'sha256';

/** The digest `X-Twilio-Webhooks-Signature-Settings` names; absent means the Auth Token's SHA-1. */
function algorithmOf(settings: string | undefined): Algorithm | undefined {
  if (settings === undefined) return 'sha1';
  for (const part of settings.split(',')) {
    const separator = part.indexOf('=');
    if (separator < 0 || part.slice(0, separator).trim() !== 'algorithm') continue;
    const named = part
      .slice(separator + 1)
      .trim()
      .toUpperCase();
    if (named === 'HMAC_SHA1' || named === '') return 'sha1';
    return named === 'HMAC_SHA256' ? 'sha256' : undefined;
  }
  return 'sha1';
}

/** The `bodySHA256` value of the URL's query, when Twilio signed a body by its hash. */
function bodyHashOf(url: string): string | undefined {
  const query = url.indexOf('?');
  if (query < 0) return undefined;
  return new URLSearchParams(url.slice(query + 1)).get(BODY_HASH_PARAMETER) ?? undefined;
}

function verify(request: WebhookRequest, options: VerifyOptions): VerifyResult {
  const secrets = usableSecrets(options.secrets);
  if (secrets.length === 0) return { ok: false, reason: 'no_secret_configured' };
  if (request.url === undefined) return { ok: false, reason: 'public_url_not_configured' };
  const header = readHeader(request.headers, 'x-twilio-signature');
  if (header === undefined) return { ok: false, reason: 'missing_signature' };
  const candidate = decodeBase64(header);
  const algorithm = algorithmOf(readHeader(request.headers, 'x-twilio-webhooks-signature-settings'));
  if (candidate === undefined || algorithm === undefined) return { ok: false, reason: 'malformed_signature' };

  // With `bodySHA256` in the URL the body is not parameters: the URL alone is signed.
  const bodyHash = bodyHashOf(request.url);
  const parameters = bodyHash === undefined ? parseForm(request.rawBody) : {};
  const expected = urlVariants(request.url).flatMap((url) => {
    const signed = Buffer.from(twilioSignedString(url, parameters), 'utf8');
    return secrets.map((secret) => createHmac(algorithm, secret).update(signed).digest());
  });
  if (!safeEqualAny(candidate, expected)) return { ok: false, reason: 'signature_mismatch' };
  if (bodyHash !== undefined) {
    // Twilio sends the hash in lower-case hex; the signed URL vouches for it, the body must match it.
    const claimed = decodeHex(bodyHash);
    const actual = createHash('sha256').update(request.rawBody).digest();
    if (claimed === undefined || !safeEqual(claimed, actual))
      return { ok: false, reason: 'signature_mismatch' };
  }
  // Nothing time-related is signed: a replay is caught by the claim, not here.
  return { ok: true };
}

/**
 * How the body is read. `bodySHA256` in the signed URL means Twilio signed a JSON body by its hash,
 * whatever content type it was sent with; without it, a JSON content type means JSON and anything
 * else is form parameters. The receiver records the answer in the queue message (`bodyFormat`), so
 * the processor, which has no URL, reads the body the same way; that recorded answer wins here.
 */
function bodyFormat(request: WebhookRequest): BodyFormat {
  if (request.bodyFormat !== undefined) return request.bodyFormat;
  if (request.url !== undefined && bodyHashOf(request.url) !== undefined) return 'json';
  const contentType = readHeader(request.headers, 'content-type') ?? '';
  return /^application\/json\b/i.test(contentType) ? 'json' : 'form';
}

/**
 * The signed parameters (form body), or the JSON object of a JSON body. Undefined for a JSON body
 * that is not an object.
 */
function readPayload(request: WebhookRequest): Record<string, unknown> | undefined {
  return bodyFormat(request) === 'json' ? parseJsonObject(request.rawBody) : parseForm(request.rawBody);
}

/** One value of a parameter (the first of a repeated one). */
function single(value: unknown): string | undefined {
  return nonEmptyString(Array.isArray(value) ? value[0] : value);
}

/**
 * What a Twilio request is about, by the parameters its products send: a message (status callback or
 * incoming message), a call (status callback), or an event with its own `EventType` (Conversations,
 * for example). Each id is part of what is signed.
 */
interface TwilioSubject {
  readonly kind: 'message' | 'call' | 'event';
  readonly sid: string;
  readonly status?: string;
}

function subjectOf(payload: Record<string, unknown>): TwilioSubject | undefined {
  const messageSid = single(payload.MessageSid) ?? single(payload.SmsSid);
  if (messageSid !== undefined) {
    const status = single(payload.MessageStatus) ?? single(payload.SmsStatus);
    return { kind: 'message', sid: messageSid, ...(status === undefined ? {} : { status }) };
  }
  const callSid = single(payload.CallSid);
  if (callSid !== undefined) {
    const status = single(payload.CallStatus);
    return { kind: 'call', sid: callSid, ...(status === undefined ? {} : { status }) };
  }
  const sid = single(payload.sid) ?? single(payload.id) ?? single(payload.Sid);
  return sid === undefined ? undefined : { kind: 'event', sid };
}

function extract(request: WebhookRequest): ExtractResult {
  const payload = readPayload(request);
  if (payload === undefined)
    return { ok: false, reason: 'invalid_json', detail: 'body is not a JSON object' };
  const subject = subjectOf(payload);
  if (subject === undefined) {
    return {
      ok: false,
      reason: 'missing_event_id',
      detail: 'no MessageSid, SmsSid, CallSid or sid parameter',
    };
  }
  const namedType = single(payload.EventType) ?? single(payload.type) ?? single(payload.StatusCallbackEvent);
  const eventType =
    namedType ??
    (subject.status === undefined ? subject.kind : `${subject.kind}.${subject.status.toLowerCase()}`);
  // A status callback is one state of its message or call: the id is the sid and the state (and
  // a call's sequence number, which orders several callbacks of one state). An event with a type
  // of its own is keyed by the type too. Twilio sends the same parameters again on a retry; the
  // `I-Twilio-Idempotency-Token` header would be shorter, but it is not signed.
  const sequence = single(payload.SequenceNumber);
  const parts = [subject.sid, namedType ?? subject.status, sequence].filter((part) => part !== undefined);
  return {
    ok: true,
    event: {
      eventId: parts.join(':'),
      eventType,
      account: single(payload.AccountSid) ?? single(payload.account_sid) ?? DEFAULT_ACCOUNT,
      objectId: subject.sid,
      objectKind: subject.kind,
    },
  };
}

/**
 * An empty TwiML document: Twilio reads the answer to a messaging webhook as instructions, and an
 * empty `<Response>` is "do nothing" (a reply would come from the processor, through Twilio's API).
 * Status callbacks ignore the body.
 */
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';
function acknowledge(): ProviderReply {
  return { statusCode: 200, contentType: 'text/xml', body: EMPTY_TWIML };
}

/** `X-Twilio-Signature` for the form `body` posted to `url` (Auth Token, HMAC-SHA1), as Twilio computes it. */
function sign(
  body: string | Buffer,
  secret: string,
  _nowSeconds: number,
  _headers?: Readonly<Record<string, string>>,
  url?: string,
): Record<string, string> {
  if (url === undefined) throw new Error('a Twilio signature covers the request URL: pass the URL');
  const signed = twilioSignedString(url, parseForm(bodyBytes(body)));
  return { 'x-twilio-signature': createHmac('sha1', secret).update(signed, 'utf8').digest('base64') };
}

const sid = (prefix: string): string => `${prefix}${randomHex(16)}`;

/** A form body in the shape of Twilio's messaging status callback and incoming message requests. */
function sample(type: string, options: DevSampleOptions): DevSample {
  // Twilio's event id is derived (`<MessageSid>:<status>`), so a fixed event id fixes both parts:
  // `--id SMxxx:delivered`, or `--id SMxxx` with the status taken from the type.
  const [idSid, idStatus] = options.eventId?.split(':', 2) ?? [];
  const messageSid = idSid || options.objectId || sid('SM');
  const accountSid = 'AC0123456789abcdef0123456789abcdef';
  const status = idStatus || (type.startsWith('message.') ? type.slice('message.'.length) : 'delivered');
  const parameters: Record<string, string> = {
    AccountSid: accountSid,
    ApiVersion: '2010-04-01',
    From: '+15017122661',
    To: '+15558675310',
    MessageSid: messageSid,
    SmsSid: messageSid,
    MessageStatus: status,
    SmsStatus: status,
    ...(status === 'received'
      ? { Body: 'Hello from a local sample', NumMedia: '0', NumSegments: '1' }
      : { MessagingServiceSid: 'MG0123456789abcdef0123456789abcdef' }),
  };
  return {
    body: new URLSearchParams(parameters).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'i-twilio-idempotency-token': createHash('sha256')
        .update(messageSid + status)
        .digest('hex')
        .slice(0, 36),
    },
    summary: `${type} ${messageSid}:${status} (${status === 'received' ? 'incoming message' : 'status callback'})`,
  };
}

export const twilioProvider = defineProvider({
  id: 'twilio',
  name: 'Twilio',
  defaults: {
    // Twilio retries a failed connection at most 5 times (1 by default) within 15 seconds in all
    // (connection overrides `rc`, `tt`). Nothing time-related is signed, so the claim is the only
    // guard against a captured request sent again: a week, as for Square.
    // https://www.twilio.com/docs/usage/webhooks/webhooks-connection-overrides
    claimTtlSeconds: 7 * 24 * 3600,
    keyRules: { default: { kind: 'event-id' } },
  },
  defaultAccount: DEFAULT_ACCOUNT,
  secret: {
    hint: "the account's Auth Token (Console > Account > API keys & tokens), or a Webhooks Rule's SharedKey secret",
    devSecret: 'local-twilio-auth-token',
  },
  headers: {
    secret: ['x-twilio-signature', 'x-twilio-webhooks-signature-settings'],
    forward: ['i-twilio-'],
  },
  // Twilio retries only failed connections, within seconds: zero duplicates is the normal state.
  alarms: { duplicateRatioLow: false },
  verify,
  extract,
  readPayload,
  bodyFormat,
  acknowledge,
  dev: {
    sampleTypes: ['message.delivered', 'message.sent', 'message.received', 'message.failed'],
    sample,
    sign,
  },
  reconcile: { kind: 'none', why: 'status callbacks are not listed anywhere after the fact' },
  docs: {
    signature: {
      header: '`X-Twilio-Signature: <b64>` (and `X-Twilio-Webhooks-Signature-Settings` for a SharedKey)',
      signedContent:
        '`<request URL><name><value>…` over the form parameters sorted by name (the URL from `publicBaseUrl`, never the Host header); a JSON body: the URL with its `bodySHA256`, and the body against that hash',
      digest:
        'HMAC-SHA1 base64 with the Auth Token (Twilio only); HMAC-SHA256 when the settings header says so',
      tolerance: 'none signed (a replay is a duplicate of its claim)',
    },
    identity: {
      eventId:
        '`MessageSid`/`CallSid` (or `sid`) with the status or `EventType` and any `SequenceNumber` (signed); `I-Twilio-Idempotency-Token` is unsigned and not used',
      eventType: '`EventType` if sent, else `message.<MessageStatus>` / `call.<CallStatus>` (signed)',
      account: '`AccountSid` (signed)',
      object: '`MessageSid` / `CallSid` (`message` / `call`)',
    },
    retryWindow: {
      text: 'failed connections only, at most 5 retries within 15 s (1 by default)',
      source: 'https://www.twilio.com/docs/usage/webhooks/webhooks-connection-overrides',
    },
  },
});
