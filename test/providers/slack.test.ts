import { createHmac } from 'node:crypto';
import { isValidSlackRequest } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { slackProvider } from '../../lambdas/providers/slack.js';
import type { VerifyOptions } from '../../lambdas/providers/types.js';
import { fixture, flipByte, GARBAGE_BODIES, GARBAGE_HEADER_VALUES, request } from './support.js';

const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const T = 1_531_420_618;
const body = fixture('slack', 'app_mention.json');

const v0 = (payload: Buffer | string, secret = SECRET, ts: number | string = T) =>
  `v0=${createHmac('sha256', secret).update(`v0:${ts}:`).update(payload).digest('hex')}`;

function options(overrides: Partial<VerifyOptions> = {}): VerifyOptions {
  return { secrets: [SECRET], nowSeconds: T, ...overrides };
}

function verify(
  signature: string | undefined,
  payload: Buffer | string = body,
  ts: string | undefined = String(T),
  opts = options(),
) {
  return slackProvider.verify(
    request({ 'x-slack-signature': signature, 'x-slack-request-timestamp': ts }, payload),
    opts,
  );
}

describe('slackProvider.verify', () => {
  it("matches Slack's documented example signature", () => {
    // https://docs.slack.dev/authentication/verifying-requests-from-slack (the worked example).
    const example =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    expect(verify('v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503', example)).toEqual({
      ok: true,
    });
  });

  it("accepts exactly what Bolt's verifier accepts, and Bolt accepts what we sign", () => {
    const now = Math.floor(Date.now() / 1000);
    const headers = slackProvider.dev.sign(body, SECRET, now);
    const bolt = (payload: Buffer) =>
      isValidSlackRequest({
        signingSecret: SECRET,
        body: payload.toString('utf8'),
        headers: {
          'x-slack-signature': headers['x-slack-signature'] ?? '',
          'x-slack-request-timestamp': Number(headers['x-slack-request-timestamp']),
        },
      });
    expect(bolt(body)).toBe(true);
    expect(slackProvider.verify(request(headers, body), options({ nowSeconds: now }))).toEqual({ ok: true });
    const tampered = flipByte(body, 30);
    expect(bolt(tampered)).toBe(false);
    expect(slackProvider.verify(request(headers, tampered), options({ nowSeconds: now }))).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('refuses a wrong secret, a changed body and a moved timestamp; accepts a rotated-out secret still configured', () => {
    expect(verify(v0(body, 'another-secret'))).toEqual({ ok: false, reason: 'signature_mismatch' });
    expect(verify(v0(body), flipByte(body, body.length - 1))).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
    expect(verify(v0(body), body, String(T + 1), options({ nowSeconds: T + 1 }))).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
    expect(verify(v0(body, 'old'), body, String(T), options({ secrets: [SECRET, 'old'] }))).toEqual({
      ok: true,
    });
  });

  it('refuses a timestamp over 5 minutes old or ahead', () => {
    expect(verify(v0(body), body, String(T), options({ nowSeconds: T + 300 }))).toEqual({ ok: true });
    for (const now of [T + 301, T - 301])
      expect(verify(v0(body), body, String(T), options({ nowSeconds: now }))).toEqual({
        ok: false,
        reason: 'timestamp_outside_tolerance',
      });
  });

  it('tells missing headers from malformed ones', () => {
    expect(verify(undefined)).toEqual({ ok: false, reason: 'missing_signature' });
    expect(slackProvider.verify(request({ 'x-slack-signature': v0(body) }, body), options())).toEqual({
      ok: false,
      reason: 'missing_signature',
    });
    for (const [signature, ts] of [
      [v0(body).replace('v0=', 'v1='), String(T)],
      [v0(body), 'yesterday'],
      ['v0=zz', String(T)],
      [v0(body).slice(3), String(T)],
    ] as const)
      expect(verify(signature, body, ts), `${signature} ${ts}`).toEqual({
        ok: false,
        reason: 'malformed_signature',
      });
    expect(verify(v0(body), body, String(T), options({ secrets: [''] }))).toEqual({
      ok: false,
      reason: 'no_secret_configured',
    });
  });

  it('never throws on garbage headers and bodies', () => {
    for (const header of GARBAGE_HEADER_VALUES)
      for (const payload of GARBAGE_BODIES) {
        expect(verify(header, payload, header).ok).toBe(false);
        expect(() => slackProvider.handshake?.(request({}, payload))).not.toThrow();
      }
  });
});

describe('slackProvider.handshake', () => {
  it('answers url_verification with its challenge, and app_rate_limited with an acknowledgement', () => {
    const challenge = '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P';
    expect(
      slackProvider.handshake?.(
        request(
          {},
          JSON.stringify({ token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl', challenge, type: 'url_verification' }),
        ),
      ),
    ).toEqual({
      name: 'url_verification',
      statusCode: 200,
      contentType: 'application/json',
      body: JSON.stringify({ challenge }),
    });
    expect(
      slackProvider.handshake?.(
        request(
          {},
          '{"token":"x","type":"app_rate_limited","team_id":"T123456","minute_rate_limited":1518467820,"api_app_id":"A123456"}',
        ),
      ),
    ).toMatchObject({ name: 'app_rate_limited', statusCode: 200 });
  });

  it('leaves events (and a url_verification without a challenge) to extract', () => {
    expect(slackProvider.handshake?.(request({}, body))).toBeUndefined();
    expect(slackProvider.handshake?.(request({}, '{"type":"url_verification"}'))).toBeUndefined();
  });
});

describe('slackProvider.extract', () => {
  it('reads the signed event id, the inner type, the workspace, the channel and the time', () => {
    expect(slackProvider.extract(request({}, body))).toEqual({
      ok: true,
      event: {
        eventId: 'Ev0LAN670R',
        eventType: 'app_mention',
        account: 'T061EG9R6',
        objectId: 'C0LAN2Q65',
        objectKind: 'channel',
        occurredAt: 1_515_449_522,
      },
    });
  });

  it('names what is missing, refuses forms (interactivity) as not JSON, and never throws', () => {
    expect(
      slackProvider.extract(request({}, '{"type":"event_callback","event":{"type":"message"}}')),
    ).toMatchObject({
      ok: false,
      reason: 'missing_event_id',
    });
    expect(slackProvider.extract(request({}, '{"event_id":"Ev1","type":"event_callback"}'))).toMatchObject({
      ok: false,
      reason: 'missing_event_type',
    });
    expect(
      slackProvider.extract(request({}, 'payload=%7B%22type%22%3A%22block_actions%22%7D')),
    ).toMatchObject({
      ok: false,
      reason: 'invalid_json',
    });
    for (const payload of GARBAGE_BODIES)
      expect(() => slackProvider.extract(request({}, payload))).not.toThrow();
  });
});
