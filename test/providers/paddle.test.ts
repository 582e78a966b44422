import { createHmac } from 'node:crypto';
import { Paddle, WebhooksValidator } from '@paddle/paddle-node-sdk';
import { describe, expect, it } from 'vitest';
import { paddleProvider } from '../../lambdas/providers/paddle.js';
import type { VerifyOptions } from '../../lambdas/providers/types.js';
import { fixture, flipByte, GARBAGE_BODIES, GARBAGE_HEADER_VALUES, request } from './support.js';

// Registers the SDK's Node runtime (its crypto provider) for WebhooksValidator.
new Paddle('pdl_sdbx_apikey_signing_only');

const SECRET = 'pdl_ntfset_01hv8wy2bdkqhvbd3x3gvhwm6h_test_secret';
const OLD_SECRET = 'pdl_ntfset_01hv8previous_secret';
const T = 1_712_917_129;
const body = fixture('paddle', 'transaction.completed.json');

const h1 = (payload: Buffer, secret = SECRET, ts: number | string = T) =>
  createHmac('sha256', secret).update(`${ts}:`).update(payload).digest('hex');

function options(overrides: Partial<VerifyOptions> = {}): VerifyOptions {
  return { secrets: [SECRET], nowSeconds: T, ...overrides };
}

function verify(header: string | undefined, payload = body, opts = options()) {
  return paddleProvider.verify(request({ 'paddle-signature': header }, payload), opts);
}

describe('paddleProvider.verify', () => {
  it("accepts exactly what Paddle's SDK accepts, and the SDK accepts what we sign", async () => {
    const now = Math.floor(Date.now() / 1000);
    const header = paddleProvider.dev.sign(body, SECRET, now)['paddle-signature'] ?? '';
    expect(await new WebhooksValidator().isValidSignature(body.toString('utf8'), SECRET, header)).toBe(true);
    expect(verify(header, body, options({ nowSeconds: now }))).toEqual({ ok: true });
    // One changed byte: both refuse.
    const tampered = flipByte(body, 40);
    expect(await new WebhooksValidator().isValidSignature(tampered.toString('utf8'), SECRET, header)).toBe(
      false,
    );
    expect(verify(header, tampered, options({ nowSeconds: now }))).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('signs `<ts>:<raw body>` with the secret key as-is, hex', () => {
    expect(verify(`ts=${T};h1=${h1(body)}`)).toEqual({ ok: true });
    expect(paddleProvider.dev.sign(body, SECRET, T)).toEqual({
      'paddle-signature': `ts=${T};h1=${h1(body)}`,
    });
  });

  it('accepts any h1 while a secret is rotated, with either secret configured', () => {
    const header = `ts=${T};h1=${h1(body, OLD_SECRET)};h1=${h1(body)}`;
    expect(verify(header)).toEqual({ ok: true });
    expect(verify(header, body, options({ secrets: [OLD_SECRET] }))).toEqual({ ok: true });
    expect(
      verify(`ts=${T};h1=${h1(body, OLD_SECRET)}`, body, options({ secrets: [SECRET, OLD_SECRET] })),
    ).toEqual({ ok: true });
  });

  it('refuses a wrong secret, a changed body, and a ts other than the signed one', () => {
    expect(verify(`ts=${T};h1=${h1(body, 'pdl_ntfset_wrong')}`)).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
    for (const index of [0, 1, body.length >> 1, body.length - 1])
      expect(verify(`ts=${T};h1=${h1(body)}`, flipByte(body, index))).toEqual({
        ok: false,
        reason: 'signature_mismatch',
      });
    expect(verify(`ts=${T + 1};h1=${h1(body)}`, body, options({ nowSeconds: T + 1 }))).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('refuses a stale or future ts outside 300 s, and honours a tolerance override (the SDK: 5 s)', () => {
    const header = `ts=${T};h1=${h1(body)}`;
    expect(verify(header, body, options({ nowSeconds: T + 300 }))).toEqual({ ok: true });
    expect(verify(header, body, options({ nowSeconds: T + 301 }))).toEqual({
      ok: false,
      reason: 'timestamp_outside_tolerance',
    });
    expect(verify(header, body, options({ nowSeconds: T - 301 }))).toEqual({
      ok: false,
      reason: 'timestamp_outside_tolerance',
    });
    expect(verify(header, body, options({ nowSeconds: T + 6, toleranceSeconds: 5 }))).toEqual({
      ok: false,
      reason: 'timestamp_outside_tolerance',
    });
  });

  it('tells a missing header from a malformed one, and a missing secret', () => {
    expect(verify(undefined)).toEqual({ ok: false, reason: 'missing_signature' });
    for (const header of [
      `h1=${h1(body)}`,
      `ts=${T}`,
      `ts=abc;h1=${h1(body)}`,
      `ts=${T};ts=${T + 1};h1=${h1(body)}`,
      `ts=-${T};h1=${h1(body)}`,
    ])
      expect(verify(header), header).toEqual({ ok: false, reason: 'malformed_signature' });
    expect(verify(`ts=${T};h1=not-hex`)).toEqual({ ok: false, reason: 'signature_mismatch' });
    expect(verify(`ts=${T};h1=${h1(body)}`, body, options({ secrets: [] }))).toEqual({
      ok: false,
      reason: 'no_secret_configured',
    });
  });

  it('never throws on garbage headers and bodies', () => {
    for (const header of GARBAGE_HEADER_VALUES)
      for (const payload of GARBAGE_BODIES) expect(verify(header, payload).ok).toBe(false);
  });
});

describe('paddleProvider.extract', () => {
  it('reads the signed event id, type, object and time', () => {
    expect(paddleProvider.extract(request({}, body))).toEqual({
      ok: true,
      event: {
        eventId: 'evt_01hv8x2acma5ynqpqn6vw6rj4h',
        eventType: 'transaction.completed',
        account: 'default',
        objectId: 'txn_01hv8wptq8987qeep44cyrewp9',
        objectKind: 'transaction',
        occurredAt: 1_712_917_129,
      },
    });
  });

  it('names what is missing, and never throws', () => {
    expect(paddleProvider.extract(request({}, '{"event_type":"transaction.paid"}'))).toMatchObject({
      ok: false,
      reason: 'missing_event_id',
    });
    expect(paddleProvider.extract(request({}, '{"event_id":"evt_1"}'))).toMatchObject({
      ok: false,
      reason: 'missing_event_type',
    });
    for (const payload of GARBAGE_BODIES)
      expect(() => paddleProvider.extract(request({}, payload))).not.toThrow();
  });
});
