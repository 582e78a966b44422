import { createHmac } from 'node:crypto';
import { WebhooksHelper } from 'square';
import { describe, expect, it } from 'vitest';
import { squareProvider } from '../../lambdas/providers/square.js';
import type { VerifyOptions } from '../../lambdas/providers/types.js';
import { fixture, flipByte, GARBAGE_BODIES, GARBAGE_HEADER_VALUES, request } from './support.js';

const KEY = 'asdf1234-square-signature-key';
const URL_ = 'https://hooks.example.com/webhooks/square';
const body = fixture('square', 'payment.updated.json');

const signature = (payload: Buffer | string, url = URL_, key = KEY) =>
  createHmac('sha256', key).update(url).update(payload).digest('base64');

const options = (overrides: Partial<VerifyOptions> = {}): VerifyOptions => ({
  secrets: [KEY],
  nowSeconds: 0,
  ...overrides,
});

function verify(
  header: string | undefined,
  payload: Buffer | string = body,
  url: string | undefined = URL_,
  opts = options(),
) {
  return squareProvider.verify(
    {
      headers: { 'x-square-hmacsha256-signature': header },
      rawBody: Buffer.from(payload),
      ...(url === undefined ? {} : { url }),
    },
    opts,
  );
}

const sdk = (payload: Buffer | string, header: string, url = URL_) =>
  WebhooksHelper.verifySignature({
    requestBody: payload.toString(),
    signatureHeader: header,
    signatureKey: KEY,
    notificationUrl: url,
  });

describe('squareProvider.verify', () => {
  it("accepts exactly what Square's SDK accepts, and the SDK accepts what we sign", async () => {
    const header = squareProvider.dev.sign(body, KEY, 0, {}, URL_)['x-square-hmacsha256-signature'] ?? '';
    expect(await sdk(body, header)).toBe(true);
    expect(verify(header)).toEqual({ ok: true });
    for (const [payload, url] of [
      [flipByte(body, 10), URL_],
      [body, 'https://hooks.example.com/webhooks/square/'],
      [body, 'http://hooks.example.com/webhooks/square'],
      [body, 'https://attacker.example.net/webhooks/square'],
    ] as const) {
      expect(await sdk(payload, header, url)).toBe(false);
      expect(verify(header, payload, url)).toEqual({ ok: false, reason: 'signature_mismatch' });
    }
  });

  it('signs `<notification URL><raw body>`, so a query string is part of it', () => {
    const withQuery = `${URL_}?env=prod`;
    expect(verify(signature(body, withQuery), body, withQuery)).toEqual({ ok: true });
    expect(verify(signature(body, withQuery), body, URL_)).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('refuses a wrong key and accepts any configured one', () => {
    expect(verify(signature(body, URL_, 'other-key'))).toEqual({ ok: false, reason: 'signature_mismatch' });
    expect(
      verify(signature(body, URL_, 'old-key'), body, URL_, options({ secrets: [KEY, 'old-key'] })),
    ).toEqual({
      ok: true,
    });
  });

  it('refuses to check without the public URL, and tells missing from malformed headers', () => {
    expect(
      squareProvider.verify(
        { headers: { 'x-square-hmacsha256-signature': signature(body) }, rawBody: body },
        options(),
      ),
    ).toEqual({ ok: false, reason: 'public_url_not_configured' });
    expect(verify(undefined)).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verify('not base64!')).toEqual({ ok: false, reason: 'malformed_signature' });
    expect(verify(signature(body), body, URL_, options({ secrets: [] }))).toEqual({
      ok: false,
      reason: 'no_secret_configured',
    });
  });

  it('ignores the legacy HMAC-SHA1 header', () => {
    const sha1 = createHmac('sha1', KEY).update(URL_).update(body).digest('base64');
    expect(
      squareProvider.verify({ headers: { 'x-square-signature': sha1 }, rawBody: body, url: URL_ }, options()),
    ).toEqual({ ok: false, reason: 'missing_signature' });
  });

  it('never throws on garbage headers and bodies', () => {
    for (const header of GARBAGE_HEADER_VALUES)
      for (const payload of GARBAGE_BODIES) expect(verify(header, payload).ok).toBe(false);
  });
});

describe('squareProvider.extract', () => {
  it('reads the signed event id, type, merchant, object and time', () => {
    expect(squareProvider.extract(request({}, body))).toEqual({
      ok: true,
      event: {
        eventId: '6a8f5f28-54a1-4eb0-a98a-3111513fd4fc',
        eventType: 'payment.updated',
        account: '6SSW7HV8K2ST5',
        objectId: 'hYy9pRFVxpDsO1FB05SunFWUe9JZY',
        objectKind: 'payment',
        occurredAt: 1_581_024_454,
      },
    });
  });

  it('names what is missing, and never throws', () => {
    expect(squareProvider.extract(request({}, '{"type":"payment.updated"}'))).toMatchObject({
      ok: false,
      reason: 'missing_event_id',
    });
    for (const payload of GARBAGE_BODIES)
      expect(() => squareProvider.extract(request({}, payload))).not.toThrow();
  });
});
