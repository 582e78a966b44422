import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { hmacSha256 } from '../../lambdas/providers/crypto.js';
import { stripeProvider } from '../../lambdas/providers/stripe.js';
import type { VerifyOptions } from '../../lambdas/providers/types.js';
import { changeChar, fixture, flipByte, GARBAGE_BODIES, GARBAGE_HEADER_VALUES, request } from './support.js';

const SECRET = 'whsec_test_5f3b2a1c9d8e7f6a5b4c3d2e1f0a9b8c';
const OLD_SECRET = 'whsec_test_previous_0a1b2c3d4e5f6a7b8c9d';
const T = 1_718_210_710;
const body = fixture('stripe', 'payment_intent.succeeded.json');

function options(overrides: Partial<VerifyOptions> = {}): VerifyOptions {
  return { secrets: [SECRET], nowSeconds: T, ...overrides };
}

/** The header stripe-node's own test helper produces. */
function stripeHeader(payload: Buffer, secret = SECRET, timestamp = T): string {
  return Stripe.webhooks.generateTestHeaderString({ payload: payload.toString('utf8'), secret, timestamp });
}

function v1(payload: Buffer, secret: string, timestamp: number | string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(payload).digest('hex');
}

function verify(header: string | undefined, payload = body, opts = options()) {
  return stripeProvider.verify(request({ 'stripe-signature': header }, payload), opts);
}

describe('stripeProvider.verify', () => {
  it('computes the HMAC step of stripe-node (key test_secret) exactly', () => {
    expect(hmacSha256('test_secret', '{"obj1":"hello","obj2":"world"}').toString('hex')).toBe(
      'bebb1a643997f419b315ddba19e6f5411e1ce7f810ba6d3617ce72823092f363',
    );
  });

  it('accepts the header that stripe-node generateTestHeaderString produces', () => {
    expect(verify(stripeHeader(body))).toEqual({ ok: true });
  });

  it('accepts exactly what stripe-node constructEvent accepts for the same delivery', () => {
    const header = stripeHeader(body);
    const event = Stripe.webhooks.constructEvent(body, header, SECRET, 300, undefined, T * 1000);
    expect(event.id).toBe('evt_3PQoeBLkdIwHu7ix0KuV4Gvb');
    expect(verify(header)).toEqual({ ok: true });
  });

  it('rejects a body with one byte changed', () => {
    const header = stripeHeader(body);
    for (const index of [0, 1, body.length >> 1, body.length - 1]) {
      expect(verify(header, flipByte(body, index))).toEqual({ ok: false, reason: 'signature_mismatch' });
    }
  });

  it('rejects a re-serialized body, which is no longer the signed bytes', () => {
    const reserialized = Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8'))));
    expect(verify(stripeHeader(body), reserialized)).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('rejects a header whose t was changed by one second', () => {
    const header = stripeHeader(body).replace(`t=${T}`, `t=${T + 1}`);
    expect(verify(header)).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('rejects a signature with one hex digit changed', () => {
    const header = stripeHeader(body);
    const at = header.indexOf('v1=') + 3;
    for (const offset of [0, 31, 63]) {
      expect(verify(changeChar(header, at + offset))).toEqual({ ok: false, reason: 'signature_mismatch' });
    }
  });

  it('rejects a truncated or extended signature', () => {
    const signature = v1(body, SECRET, T);
    expect(verify(`t=${T},v1=${signature.slice(0, 62)}`)).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
    expect(verify(`t=${T},v1=${signature}00`)).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('rejects a v1 value that is not hex', () => {
    expect(verify(`t=${T},v1=${'z'.repeat(64)}`)).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('accepts a signature written in upper-case hex', () => {
    expect(verify(`t=${T},v1=${v1(body, SECRET, T).toUpperCase()}`)).toEqual({ ok: true });
  });

  it('accepts a rotation header with two v1 entries when only the second matches', () => {
    const header = `t=${T},v1=${v1(body, 'whsec_some_other_secret', T)},v1=${v1(body, SECRET, T)}`;
    expect(verify(header)).toEqual({ ok: true });
  });

  it('accepts a delivery signed with the second of two configured secrets', () => {
    const header = stripeHeader(body, OLD_SECRET);
    expect(verify(header, body, options({ secrets: [SECRET, OLD_SECRET] }))).toEqual({ ok: true });
    expect(verify(header, body, options({ secrets: [SECRET] }))).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('ignores v0 entries, even a v0 that carries the correct HMAC', () => {
    const correct = v1(body, SECRET, T);
    expect(verify(`t=${T},v0=${correct}`)).toEqual({ ok: false, reason: 'malformed_signature' });
    expect(verify(`t=${T},v0=${'0'.repeat(64)},v1=${correct}`)).toEqual({ ok: true });
    expect(verify(`t=${T},v0=${correct},v1=${'0'.repeat(64)}`)).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('ignores unknown schemes and entries without =', () => {
    expect(verify(`t=${T},v9=abc,junk,v1=${v1(body, SECRET, T)}`)).toEqual({ ok: true });
  });

  it('uses the whsec_ secret as the key as-is, not base64-decoded', () => {
    const decodedKey = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
    const signature = createHmac('sha256', decodedKey).update(`${T}.`).update(body).digest('hex');
    expect(verify(`t=${T},v1=${signature}`)).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('signs t exactly as sent, so a zero-padded t is not the same timestamp', () => {
    expect(verify(`t=0${T},v1=${v1(body, SECRET, T)}`)).toEqual({ ok: false, reason: 'signature_mismatch' });
    expect(verify(`t=0${T},v1=${v1(body, SECRET, `0${T}`)}`)).toEqual({ ok: true });
  });

  it('returns missing_signature when the header is absent or blank', () => {
    expect(verify(undefined)).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verify('')).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verify('   ')).toEqual({ ok: false, reason: 'missing_signature' });
  });

  it('returns malformed_signature when t or v1 is missing or t is not an integer', () => {
    const signature = v1(body, SECRET, T);
    for (const header of [
      `v1=${signature}`,
      `t=${T}`,
      `t=,v1=${signature}`,
      `t=abc,v1=${signature}`,
      `t=${T}abc,v1=${signature}`,
      `t=1.7e9,v1=${signature}`,
      `t=-${T},v1=${signature}`,
      `t=${T},t=${T + 1},v1=${signature}`,
    ]) {
      expect(verify(header), header).toEqual({ ok: false, reason: 'malformed_signature' });
    }
  });

  it('rejects a Stripe timestamp older than the tolerance', () => {
    const header = stripeHeader(body);
    expect(verify(header, body, options({ nowSeconds: T + 300 }))).toEqual({ ok: true });
    expect(verify(header, body, options({ nowSeconds: T + 301 }))).toEqual({
      ok: false,
      reason: 'timestamp_outside_tolerance',
    });
  });

  it('rejects a Stripe timestamp further in the future than the tolerance', () => {
    const header = stripeHeader(body);
    expect(verify(header, body, options({ nowSeconds: T - 300 }))).toEqual({ ok: true });
    expect(verify(header, body, options({ nowSeconds: T - 301 }))).toEqual({
      ok: false,
      reason: 'timestamp_outside_tolerance',
    });
  });

  it('applies a tolerance override, and falls back to the default for an invalid one', () => {
    const header = stripeHeader(body);
    expect(verify(header, body, options({ nowSeconds: T + 61, toleranceSeconds: 60 }))).toEqual({
      ok: false,
      reason: 'timestamp_outside_tolerance',
    });
    expect(verify(header, body, options({ nowSeconds: T + 3600, toleranceSeconds: 7200 }))).toEqual({
      ok: true,
    });
    expect(verify(header, body, options({ nowSeconds: T + 301, toleranceSeconds: Number.NaN }))).toEqual({
      ok: false,
      reason: 'timestamp_outside_tolerance',
    });
    expect(verify(header, body, options({ nowSeconds: T + 1, toleranceSeconds: 0 }))).toEqual({
      ok: false,
      reason: 'timestamp_outside_tolerance',
    });
  });

  it('rejects any timestamp when the clock reading is not a finite number', () => {
    expect(verify(stripeHeader(body), body, options({ nowSeconds: Number.NaN }))).toEqual({
      ok: false,
      reason: 'timestamp_outside_tolerance',
    });
  });

  it('reports a forged header with a stale timestamp as a signature mismatch, not as stale', () => {
    const header = `t=${T - 10_000},v1=${'ab'.repeat(32)}`;
    expect(verify(header)).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('returns no_secret_configured when no usable secret is configured', () => {
    const header = stripeHeader(body);
    expect(verify(header, body, options({ secrets: [] }))).toEqual({
      ok: false,
      reason: 'no_secret_configured',
    });
    expect(verify(header, body, options({ secrets: [''] }))).toEqual({
      ok: false,
      reason: 'no_secret_configured',
    });
  });

  it('never throws on garbage headers or bodies', () => {
    for (const header of GARBAGE_HEADER_VALUES) {
      for (const payload of GARBAGE_BODIES) {
        expect(verify(header, payload).ok).toBe(false);
      }
    }
  });
});

describe('stripeProvider.extract', () => {
  it('reads a platform payment_intent.succeeded event', () => {
    expect(stripeProvider.extract(request({}, body))).toEqual({
      ok: true,
      event: {
        eventId: 'evt_3PQoeBLkdIwHu7ix0KuV4Gvb',
        eventType: 'payment_intent.succeeded',
        account: 'platform',
        objectId: 'pi_3PQoeBLkdIwHu7ix0vGsw9sJ',
        objectKind: 'payment_intent',
        occurredAt: 1_718_210_703,
      },
    });
  });

  it('scopes a Connect event to its connected account', () => {
    const result = stripeProvider.extract(
      request({}, fixture('stripe', 'payment_intent.succeeded.connect.json')),
    );
    expect(result).toMatchObject({
      ok: true,
      event: {
        account: 'acct_1OoJ2ZQwErTyUiOp',
        objectId: 'pi_3PQpJ0QwErTyUiOp1aBcDeFg',
        occurredAt: 1_718_213_296,
      },
    });
  });

  it('reads a charge.refunded event as being about the charge', () => {
    expect(stripeProvider.extract(request({}, fixture('stripe', 'charge.refunded.json')))).toEqual({
      ok: true,
      event: {
        eventId: 'evt_3PQqA1LkdIwHu7ix1Refund01',
        eventType: 'charge.refunded',
        account: 'platform',
        objectId: 'ch_3PQoeBLkdIwHu7ix0rWj6N6d',
        objectKind: 'charge',
        occurredAt: 1_718_216_000,
      },
    });
  });

  it('reads a thin v2 event from related_object, context and its ISO created time', () => {
    expect(stripeProvider.extract(request({}, fixture('stripe', 'v2.core.event.thin.json')))).toEqual({
      ok: true,
      event: {
        eventId: 'evt_test_65R9Ijk8d6Uy8ZX6GhO16TMG3ZrNSQRWyxFTbDy5PGeq',
        eventType: 'v1.billing.meter.error_report_triggered',
        account: 'acct_1OoJ2ZQwErTyUiOp',
        objectId: 'mtr_test_61R9IjkhT8HChJCvU41IHv4SRaQEI0c6',
        objectKind: 'billing.meter',
        occurredAt: Math.floor(Date.UTC(2024, 8, 26, 17, 46, 22, 134) / 1000),
      },
    });
  });

  it('scopes a thin event without context to the platform', () => {
    const thin = {
      id: 'evt_thin_1',
      object: 'v2.core.event',
      type: 'v2.core.account.updated',
      created: 'later',
    };
    expect(stripeProvider.extract(request({}, JSON.stringify(thin)))).toEqual({
      ok: true,
      event: { eventId: 'evt_thin_1', eventType: 'v2.core.account.updated', account: 'platform' },
    });
  });

  it('treats an empty account as the platform', () => {
    const event = { id: 'evt_1', type: 'charge.succeeded', account: '', data: { object: {} } };
    expect(stripeProvider.extract(request({}, JSON.stringify(event)))).toMatchObject({
      ok: true,
      event: { account: 'platform', objectId: undefined, occurredAt: undefined },
    });
  });

  it('returns missing_event_id when id is absent or not a string', () => {
    for (const id of [undefined, 42, '', null]) {
      const payload = JSON.stringify({ id, type: 'charge.succeeded' });
      expect(stripeProvider.extract(request({}, payload))).toEqual({ ok: false, reason: 'missing_event_id' });
    }
  });

  it('returns missing_event_type when type is absent or not a string', () => {
    for (const type of [undefined, 7, '']) {
      const payload = JSON.stringify({ id: 'evt_1', type });
      expect(stripeProvider.extract(request({}, payload))).toEqual({
        ok: false,
        reason: 'missing_event_type',
      });
    }
  });

  it('returns invalid_json for a body that is not a JSON object', () => {
    for (const payload of ['', 'null', '[]', '"evt"', '{"id":']) {
      expect(stripeProvider.extract(request({}, payload))).toMatchObject({
        ok: false,
        reason: 'invalid_json',
      });
    }
  });

  it('never throws on garbage bodies', () => {
    for (const payload of GARBAGE_BODIES) {
      expect(typeof stripeProvider.extract(request({}, payload)).ok).toBe('boolean');
    }
  });
});

describe('stripeProvider.defaults', () => {
  it('keeps claims 7 days, tolerates 300 s and keys payment intents by object and type', () => {
    expect(stripeProvider.id).toBe('stripe');
    expect(stripeProvider.defaults).toEqual({
      claimTtlSeconds: 604_800,
      toleranceSeconds: 300,
      keyRules: { default: { kind: 'event-id' }, byEventType: { 'payment_intent.*': { kind: 'composite' } } },
    });
  });
});
