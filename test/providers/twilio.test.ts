import { createHash, createHmac } from 'node:crypto';
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { twilioProvider, twilioSignedString } from '../../lambdas/providers/twilio.js';
import type { VerifyOptions, WebhookRequest } from '../../lambdas/providers/types.js';
import { fixture, flipByte, GARBAGE_BODIES, GARBAGE_HEADER_VALUES } from './support.js';

const TOKEN = 'twilio-unit-test-auth-token';
const URL_ = 'https://hooks.example.com/webhooks/twilio';
const body = fixture('twilio', 'message-status.delivered.form');
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

const options = (overrides: Partial<VerifyOptions> = {}): VerifyOptions => ({
  secrets: [TOKEN],
  nowSeconds: 0,
  ...overrides,
});

const params = (payload: Buffer | string) => Object.fromEntries(new URLSearchParams(payload.toString()));

function verify(
  headers: Record<string, string | undefined>,
  payload: Buffer | string = body,
  url: string | undefined = URL_,
  opts = options(),
) {
  return twilioProvider.verify(
    {
      headers: { ...FORM, ...headers },
      rawBody: Buffer.from(payload),
      ...(url === undefined ? {} : { url }),
    },
    opts,
  );
}

/** The header our dev signer writes for `payload` posted to `url`. */
const ours = (payload: Buffer | string, url = URL_, token = TOKEN) =>
  twilioProvider.dev.sign(payload, token, 0, {}, url)['x-twilio-signature'] ?? '';

/** The `twilio` package's signature of form parameters. */
const theirs = (payload: Buffer | string, url = URL_, token = TOKEN, algorithm?: string) =>
  twilio.getExpectedTwilioSignature(token, url, params(payload), algorithm);

describe('twilioProvider.verify', () => {
  it("matches the example of Twilio's security page", () => {
    // https://www.twilio.com/docs/usage/webhooks/webhooks-security (the page's worked example).
    const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
    const example =
      'CallSid=CA1234567890ABCDE&Caller=%2B12349013030&Digits=1234&From=%2B12349013030&To=%2B18005551212';
    expect(ours(example, url, '12345')).toBe('0/KCTR6DLpKmkAf8muzZqo1nDgQ=');
    expect(
      verify(
        { 'x-twilio-signature': '0/KCTR6DLpKmkAf8muzZqo1nDgQ=' },
        example,
        url,
        options({ secrets: ['12345'] }),
      ),
    ).toEqual({ ok: true });
  });

  it('accepts exactly what the twilio package accepts, and the package accepts what we sign', () => {
    const header = ours(body);
    expect(header).toBe(theirs(body));
    expect(twilio.validateRequest(TOKEN, header, URL_, params(body))).toBe(true);
    expect(verify({ 'x-twilio-signature': header })).toEqual({ ok: true });
    for (const [payload, url] of [
      [body.toString().replace('delivered', 'undelivered'), URL_],
      [body, `${URL_}/`],
      [body, 'http://hooks.example.com/webhooks/twilio'],
      [body, 'https://attacker.example.net/webhooks/twilio'],
      [body, `${URL_}?x=1`],
    ] as const) {
      expect(twilio.validateRequest(TOKEN, header, url, params(payload))).toBe(false);
      expect(verify({ 'x-twilio-signature': header }, payload, url)).toEqual({
        ok: false,
        reason: 'signature_mismatch',
      });
    }
  });

  it('signs the parameters sorted by name, a repeated one once per distinct value in order', () => {
    const payload = 'To=%2B1555&MediaUrl0=b&From=%2B1444&MediaUrl0=a&MediaUrl0=b&Body=hi+there';
    const withRepeats = { To: '+1555', MediaUrl0: ['b', 'a', 'b'], From: '+1444', Body: 'hi there' };
    expect(twilioSignedString(URL_, withRepeats)).toBe(
      `${URL_}Bodyhi thereFrom+1444MediaUrl0aMediaUrl0bTo+1555`,
    );
    const header = twilio.getExpectedTwilioSignature(TOKEN, URL_, withRepeats);
    expect(ours(payload)).toBe(header);
    expect(verify({ 'x-twilio-signature': header }, payload)).toEqual({ ok: true });
  });

  it('accepts the URL signed with or without the default port, as the twilio package does, and no other port', () => {
    for (const signedUrl of ['https://hooks.example.com:443/webhooks/twilio', URL_]) {
      const header = theirs(body, signedUrl);
      expect(twilio.validateRequest(TOKEN, header, URL_, params(body))).toBe(true);
      expect(verify({ 'x-twilio-signature': header })).toEqual({ ok: true });
    }
    const otherPort = theirs(body, 'https://hooks.example.com:8443/webhooks/twilio');
    expect(verify({ 'x-twilio-signature': otherPort })).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('checks a JSON body against the signed bodySHA256 of its URL, as validateRequestWithBody does', () => {
    const json = '{"sid":"EV0123","type":"com.twilio.messaging.message.delivered","account_sid":"AC1"}';
    const hash = createHash('sha256').update(json).digest('hex');
    const url = `${URL_}?bodySHA256=${hash}`;
    const header = twilio.getExpectedTwilioSignature(TOKEN, url, {});
    expect(twilio.validateRequestWithBody(TOKEN, header, url, json)).toBe(true);
    const json_ = { 'content-type': 'application/json', 'x-twilio-signature': header };
    expect(verify(json_, json, url)).toEqual({ ok: true });
    const tampered = json.replace('delivered', 'failed');
    expect(twilio.validateRequestWithBody(TOKEN, header, url, tampered)).toBe(false);
    expect(verify(json_, tampered, url)).toEqual({ ok: false, reason: 'signature_mismatch' });
    // A hash swapped in the URL breaks the URL's signature.
    const otherUrl = `${URL_}?bodySHA256=${createHash('sha256').update(tampered).digest('hex')}`;
    expect(verify(json_, tampered, otherUrl)).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('checks with SHA-256 when the settings header names HMAC_SHA256, and refuses an unknown algorithm', () => {
    const settings = 'key=webhooks_sharedkey_0123,algorithm=HMAC_SHA256';
    const header = theirs(body, URL_, TOKEN, 'HMAC_SHA256');
    expect(
      twilio.validateRequest(TOKEN, header, URL_, params(body), twilio.getSignatureAlgorithm(settings)),
    ).toBe(true);
    expect(
      verify({ 'x-twilio-signature': header, 'x-twilio-webhooks-signature-settings': settings }),
    ).toEqual({ ok: true });
    // The same SHA-256 signature without the header is checked as SHA-1 and fails.
    expect(verify({ 'x-twilio-signature': header })).toEqual({ ok: false, reason: 'signature_mismatch' });
    expect(
      verify({ 'x-twilio-signature': header, 'x-twilio-webhooks-signature-settings': 'algorithm=HMAC_MD5' }),
    ).toEqual({ ok: false, reason: 'malformed_signature' });
  });

  it('refuses a wrong token and accepts any configured one', () => {
    expect(verify({ 'x-twilio-signature': ours(body, URL_, 'other-token') })).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
    expect(
      verify(
        { 'x-twilio-signature': ours(body, URL_, 'old-token') },
        body,
        URL_,
        options({ secrets: [TOKEN, 'old-token'] }),
      ),
    ).toEqual({ ok: true });
  });

  it('refuses a tampered body, and tells a missing signature, a missing URL and no token apart', () => {
    expect(verify({ 'x-twilio-signature': ours(body) }, flipByte(body, 40))).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
    expect(verify({})).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verify({ 'x-twilio-signature': 'not base64!' })).toEqual({
      ok: false,
      reason: 'malformed_signature',
    });
    expect(
      twilioProvider.verify(
        { headers: { ...FORM, 'x-twilio-signature': ours(body) }, rawBody: body },
        options(),
      ),
    ).toEqual({ ok: false, reason: 'public_url_not_configured' });
    expect(verify({ 'x-twilio-signature': ours(body) }, body, URL_, options({ secrets: [] }))).toEqual({
      ok: false,
      reason: 'no_secret_configured',
    });
  });

  it('treats a parameter named __proto__ as a parameter', () => {
    const payload = '__proto__=x&__proto__=y&MessageSid=SM1';
    const header = createHmac('sha1', TOKEN)
      .update(`${URL_}MessageSidSM1__proto__x__proto__y`)
      .digest('base64');
    expect(verify({ 'x-twilio-signature': header }, payload)).toEqual({ ok: true });
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('never throws on garbage headers and bodies', () => {
    for (const header of GARBAGE_HEADER_VALUES)
      for (const payload of GARBAGE_BODIES) {
        expect(verify({ 'x-twilio-signature': header }, payload).ok).toBe(false);
        expect(verify({ 'x-twilio-signature': header }, payload, `${URL_}?bodySHA256=${header}`).ok).toBe(
          false,
        );
      }
  });
});

const asRequest = (payload: string, headers: Record<string, string> = FORM): WebhookRequest => ({
  headers,
  rawBody: Buffer.from(payload),
  url: URL_,
});

describe('twilioProvider.extract', () => {
  it('keys a message status callback by its sid and status, in its account', () => {
    expect(twilioProvider.extract(asRequest(body.toString()))).toEqual({
      ok: true,
      event: {
        eventId: 'SM1f0e8ae6ade43cb3c0ce4525424e404f:delivered',
        eventType: 'message.delivered',
        account: 'AC0123456789abcdef0123456789abcdef',
        objectId: 'SM1f0e8ae6ade43cb3c0ce4525424e404f',
        objectKind: 'message',
      },
    });
  });

  it('tells the states of one message apart, and a call callback by its sequence number', () => {
    const sent = twilioProvider.extract(asRequest(body.toString().replaceAll('delivered', 'sent')));
    expect(sent).toMatchObject({ ok: true, event: { eventId: 'SM1f0e8ae6ade43cb3c0ce4525424e404f:sent' } });
    const call = 'AccountSid=AC1&CallSid=CA9&CallStatus=in-progress&SequenceNumber=2&Timestamp=x';
    expect(twilioProvider.extract(asRequest(call))).toEqual({
      ok: true,
      event: {
        eventId: 'CA9:in-progress:2',
        eventType: 'call.in-progress',
        account: 'AC1',
        objectId: 'CA9',
        objectKind: 'call',
      },
    });
  });

  it('keys an event with a type of its own by that type, and reads a JSON body', () => {
    const conversation =
      'AccountSid=AC1&EventType=onMessageAdded&MessageSid=IM7&ConversationSid=CH1&RetryCount=0';
    expect(twilioProvider.extract(asRequest(conversation))).toMatchObject({
      ok: true,
      event: { eventId: 'IM7:onMessageAdded', eventType: 'onMessageAdded', objectKind: 'message' },
    });
    const json = '{"sid":"EV1","type":"com.twilio.x","account_sid":"AC2"}';
    expect(twilioProvider.extract(asRequest(json, { 'content-type': 'application/json' }))).toEqual({
      ok: true,
      event: {
        eventId: 'EV1:com.twilio.x',
        eventType: 'com.twilio.x',
        account: 'AC2',
        objectId: 'EV1',
        objectKind: 'event',
      },
    });
  });

  it('reads a body signed by its bodySHA256 as JSON whatever its content type, and says so for the queue', () => {
    const json = '{"sid":"EV1","type":"com.twilio.x","account_sid":"AC2"}';
    const url = `${URL_}?bodySHA256=${createHash('sha256').update(json).digest('hex')}`;
    const signedByHash = { ...asRequest(json, { 'content-type': 'text/plain' }), url };
    expect(twilioProvider.bodyFormat?.(signedByHash)).toBe('json');
    expect(twilioProvider.extract(signedByHash)).toMatchObject({
      ok: true,
      event: { eventId: 'EV1:com.twilio.x' },
    });
    // The processor has no URL: the format the receiver recorded decides.
    const queued = { ...asRequest(json, { 'content-type': 'text/plain' }), bodyFormat: 'json' as const };
    expect(twilioProvider.readPayload(queued)).toEqual(JSON.parse(json));
    expect(twilioProvider.bodyFormat?.(asRequest(body.toString()))).toBe('form');
    expect(twilioProvider.bodyFormat?.(asRequest(json, { 'content-type': 'application/json' }))).toBe('json');
  });

  it('names what is missing, and never throws', () => {
    expect(twilioProvider.extract(asRequest('AccountSid=AC1&Body=hi'))).toMatchObject({
      ok: false,
      reason: 'missing_event_id',
    });
    expect(twilioProvider.extract(asRequest('[1]', { 'content-type': 'application/json' }))).toMatchObject({
      ok: false,
      reason: 'invalid_json',
    });
    for (const payload of GARBAGE_BODIES)
      expect(() => twilioProvider.extract({ headers: FORM, rawBody: payload })).not.toThrow();
  });
});

describe('twilioProvider.acknowledge', () => {
  it('answers an event with empty TwiML, so a messaging webhook sends no reply', () => {
    for (const outcome of ['accepted', 'duplicate'] as const) {
      expect(twilioProvider.acknowledge?.(asRequest(body.toString()), outcome)).toEqual({
        statusCode: 200,
        contentType: 'text/xml',
        body: '<?xml version="1.0" encoding="UTF-8"?><Response></Response>',
      });
    }
  });
});

describe('twilioProvider.dev', () => {
  it('samples form bodies that extract to the type asked for', () => {
    for (const type of twilioProvider.dev.sampleTypes) {
      const sample = twilioProvider.dev.sample(type, { nowSeconds: 0, objectId: 'SMfixed' });
      expect(sample.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(twilioProvider.extract(asRequest(sample.body))).toMatchObject({
        ok: true,
        event: { eventType: type, objectId: 'SMfixed' },
      });
    }
  });
});
