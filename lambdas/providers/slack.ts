/**
 * Slack Events API: `X-Slack-Signature: v0=<hex>`, HMAC-SHA256 of `v0:<X-Slack-Request-Timestamp>:<raw
 * body>` keyed with the app's signing secret as-is. The `url_verification` handshake Slack sends when
 * the Request URL is saved is signed the same way; it is answered with its challenge and never claimed.
 * https://docs.slack.dev/authentication/verifying-requests-from-slack
 */

import {
  bodyBytes,
  decodeHex,
  effectiveTolerance,
  field,
  hmacSha256,
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
  HandshakeResponse,
  VerifyOptions,
  VerifyResult,
  WebhookRequest,
} from './types.js';

/** An event that names no workspace (never seen in practice). */
const DEFAULT_ACCOUNT = 'default';
/** Slack's own rule: "more than five minutes from local time ... could be a replay attack". */
const DEFAULT_TOLERANCE_SECONDS = 300;
const VERSION = 'v0';

function verify(request: WebhookRequest, options: VerifyOptions): VerifyResult {
  const secrets = usableSecrets(options.secrets);
  if (secrets.length === 0) return { ok: false, reason: 'no_secret_configured' };
  const header = readHeader(request.headers, 'x-slack-signature');
  const timestampText = readHeader(request.headers, 'x-slack-request-timestamp');
  if (header === undefined || timestampText === undefined) return { ok: false, reason: 'missing_signature' };
  const timestamp = parseUnixSeconds(timestampText);
  if (timestamp === undefined || !header.startsWith(`${VERSION}=`)) {
    return { ok: false, reason: 'malformed_signature' };
  }
  const candidate = decodeHex(header.slice(VERSION.length + 1));
  if (candidate === undefined) return { ok: false, reason: 'malformed_signature' };

  const signedContent = Buffer.concat([Buffer.from(`${VERSION}:${timestampText}:`), request.rawBody]);
  const expected = secrets.map((secret) => hmacSha256(secret, signedContent));
  if (!safeEqualAny(candidate, expected)) return { ok: false, reason: 'signature_mismatch' };

  // Signature first, then time; too old and too new are both refused, as Bolt's verifier does.
  const tolerance = effectiveTolerance(options.toleranceSeconds, DEFAULT_TOLERANCE_SECONDS);
  if (!withinTolerance(timestamp, options.nowSeconds, tolerance)) {
    return { ok: false, reason: 'timestamp_outside_tolerance' };
  }
  return { ok: true };
}

function readPayload(request: WebhookRequest): Record<string, unknown> | undefined {
  return readRequestPayload(request);
}

/**
 * Envelopes that are not events: `url_verification` (answered with its challenge, as JSON, which
 * Slack accepts beside plain text) and `app_rate_limited` (Slack telling the app it dropped events
 * for a minute: acknowledged and logged, there is nothing to apply).
 */
function handshake(request: WebhookRequest): HandshakeResponse | undefined {
  const payload = readPayload(request);
  if (payload === undefined) return undefined;
  if (payload.type === 'url_verification') {
    const challenge = nonEmptyString(payload.challenge);
    if (challenge === undefined) return undefined;
    return {
      name: 'url_verification',
      statusCode: 200,
      contentType: 'application/json',
      body: JSON.stringify({ challenge }),
    };
  }
  if (payload.type === 'app_rate_limited') {
    return {
      name: 'app_rate_limited',
      statusCode: 200,
      contentType: 'application/json',
      body: JSON.stringify({ outcome: 'acknowledged', reason: 'app_rate_limited' }),
    };
  }
  return undefined;
}

function extract(request: WebhookRequest): ExtractResult {
  const payload = readPayload(request);
  if (payload === undefined) {
    // Interactivity and slash commands post forms; only the Events API's JSON is an event here.
    return { ok: false, reason: 'invalid_json', detail: 'body is not a JSON object (Events API only)' };
  }
  // `event_id` is the same on every retry; the inner `event.type` is the business type
  // (`event_callback` is the envelope's).
  const eventId = nonEmptyString(payload.event_id);
  if (eventId === undefined) return { ok: false, reason: 'missing_event_id' };
  const eventType = nonEmptyString(field(payload.event, 'type'));
  if (eventType === undefined) return { ok: false, reason: 'missing_event_type' };
  const eventTime = payload.event_time;
  return {
    ok: true,
    event: {
      eventId,
      eventType,
      // Signed: the workspace (or, for org-wide apps, the enterprise) the event happened in.
      account: nonEmptyString(payload.team_id) ?? nonEmptyString(payload.enterprise_id) ?? DEFAULT_ACCOUNT,
      objectId: nonEmptyString(field(payload.event, 'channel')),
      ...(nonEmptyString(field(payload.event, 'channel')) === undefined ? {} : { objectKind: 'channel' }),
      occurredAt:
        typeof eventTime === 'number' && Number.isSafeInteger(eventTime) && eventTime >= 0
          ? eventTime
          : undefined,
    },
  };
}

/** `X-Slack-Signature` and `X-Slack-Request-Timestamp` for `body`, as Slack computes them. */
function sign(body: string | Buffer, secret: string, nowSeconds: number): Record<string, string> {
  const signature = hmacSha256(
    secret,
    Buffer.concat([Buffer.from(`${VERSION}:${nowSeconds}:`), bodyBytes(body)]),
  );
  return {
    'x-slack-request-timestamp': String(nowSeconds),
    'x-slack-signature': `${VERSION}=${signature.toString('hex')}`,
  };
}

/** An Events API envelope in the documented shape (https://docs.slack.dev/apis/events-api). */
function sample(type: string, options: DevSampleOptions): DevSample {
  if (type === 'url_verification') {
    const body = JSON.stringify({
      token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl',
      challenge: options.eventId ?? randomHex(24),
      type: 'url_verification',
    });
    return { body, headers: { 'content-type': 'application/json' }, summary: 'url_verification handshake' };
  }
  const channel = options.objectId ?? `C${randomHex(5).toUpperCase()}`;
  const ts = `${options.nowSeconds}.${randomHex(3)}`;
  const event =
    type === 'reaction_added'
      ? {
          type,
          user: 'U061F7AUR',
          reaction: 'thumbsup',
          item: { type: 'message', channel, ts },
          event_ts: ts,
        }
      : {
          type,
          user: 'U061F7AUR',
          text: '<@U0LAN0Z89> is it everything a river should be?',
          ts,
          channel,
          event_ts: ts,
        };
  const envelope = {
    token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl',
    team_id: 'T061EG9R6',
    api_app_id: 'A0MDYCDME',
    event: type === 'reaction_added' ? { ...event, channel } : event,
    type: 'event_callback',
    event_id: options.eventId ?? `Ev${randomHex(5).toUpperCase()}`,
    event_time: options.nowSeconds,
    authorizations: [{ team_id: 'T061EG9R6', user_id: 'U0LAN0Z89', is_bot: true }],
  };
  return {
    body: JSON.stringify(envelope),
    headers: { 'content-type': 'application/json' },
    summary: `${type} ${envelope.event_id} about ${channel}`,
  };
}

export const slackProvider = defineProvider({
  id: 'slack',
  name: 'Slack',
  defaults: {
    // Slack retries a failed delivery 3 times: at once, after 1 minute and after 5 minutes, and
    // gives up on an answer after 3 s. A day covers that many times over.
    // https://docs.slack.dev/apis/events-api#retries
    claimTtlSeconds: 24 * 3600,
    toleranceSeconds: DEFAULT_TOLERANCE_SECONDS,
    keyRules: { default: { kind: 'event-id' } },
  },
  defaultAccount: DEFAULT_ACCOUNT,
  secret: {
    hint: "the app's Signing Secret from Basic Information > App Credentials (not the verification token)",
    devSecret: 'local-slack-signing-secret',
  },
  headers: { secret: ['x-slack-signature'], forward: ['x-slack-retry-'] },
  verify,
  handshake,
  extract,
  readPayload,
  dev: {
    sampleTypes: ['app_mention', 'message', 'reaction_added', 'url_verification'],
    sample,
    sign,
  },
  reconcile: { kind: 'none', why: 'the Events API lists no past deliveries' },
  docs: {
    signature: {
      header: '`X-Slack-Signature: v0=<hex>` with `X-Slack-Request-Timestamp`',
      signedContent: '`v0:<timestamp>:<raw body>`',
      digest: 'HMAC-SHA256 hex; the signing secret as-is',
      tolerance: '300 s either way',
    },
    identity: {
      eventId: 'payload `event_id` (signed)',
      eventType:
        'payload `event.type` (signed); `url_verification` and `app_rate_limited` are answered, never claimed',
      account: 'payload `team_id`, else `enterprise_id` (signed)',
      object: '`event.channel`, when there is one',
    },
    retryWindow: {
      text: '3 retries: at once, after 1 min, after 5 min; an answer after 3 s counts as failed',
      source: 'https://docs.slack.dev/apis/events-api#retries',
    },
  },
});
