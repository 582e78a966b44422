import { createHmac, sign as cryptoSign, generateKeyPairSync } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import nacl from 'tweetnacl';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { standardProvider } from '../../lambdas/providers/standard.js';
import type { VerifyOptions } from '../../lambdas/providers/types.js';
import { fixture, flipByte, GARBAGE_BODIES, GARBAGE_HEADER_VALUES, request } from './support.js';

/** The reference libraries' test vector. */
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1_614_265_330,
  payload: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
const OLD_SECRET = 'whsec_8Dp9zQ2r3T4u5V6w7X8y9Z0a1B2c3D4e5F6g7H8i9J0=';
const MSG_ID = 'msg_2hYpXw4kQ8mZr1Jv4kS2mW8rTq';
const T = 1_718_221_503;
const body = fixture('standard', 'invoice-paid.json');

function sign(payload: Buffer, secret = SECRET, id = MSG_ID, timestamp = T): string {
  return new Webhook(secret).sign(id, new Date(timestamp * 1000), payload.toString('utf8'));
}

function headers(signature: string, id = MSG_ID, timestamp: number | string = T): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
}

function verify(hdrs: Record<string, string | undefined>, payload = body, opts: Partial<VerifyOptions> = {}) {
  return standardProvider.verify(request(hdrs, payload), { secrets: [SECRET], nowSeconds: T, ...opts });
}

afterEach(() => {
  vi.useRealTimers();
});

describe('standardProvider.verify', () => {
  it('verifies the reference test vector', () => {
    const result = standardProvider.verify(
      request(headers(VECTOR.signature, VECTOR.id, VECTOR.timestamp), VECTOR.payload),
      { secrets: [VECTOR.secret], nowSeconds: VECTOR.timestamp },
    );
    expect(result).toEqual({ ok: true });
  });

  it('does not verify the vector signed with the whsec_ string itself as the key (the Stripe way)', () => {
    const wrongKey = createHmac('sha256', VECTOR.secret)
      .update(`${VECTOR.id}.${VECTOR.timestamp}.${VECTOR.payload}`)
      .digest('base64');
    expect(`v1,${wrongKey}`).not.toBe(VECTOR.signature);
    const result = standardProvider.verify(
      request(headers(`v1,${wrongKey}`, VECTOR.id, VECTOR.timestamp), VECTOR.payload),
      { secrets: [VECTOR.secret], nowSeconds: VECTOR.timestamp },
    );
    expect(result).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('accepts what the standardwebhooks Webhook.sign produces', () => {
    expect(verify(headers(sign(body)))).toEqual({ ok: true });
  });

  it('agrees with the standardwebhooks verifier on the same delivery', () => {
    vi.useFakeTimers();
    vi.setSystemTime(T * 1000);
    const hdrs = headers(sign(body));
    expect(new Webhook(SECRET).verify(body, hdrs)).toMatchObject({ type: 'invoice.paid' });
    expect(verify(hdrs)).toEqual({ ok: true });
  });

  it('accepts a secret given without the whsec_ prefix', () => {
    expect(verify(headers(sign(body)), body, { secrets: [SECRET.slice('whsec_'.length)] })).toEqual({
      ok: true,
    });
  });

  it('accepts the svix-* header names', () => {
    const signature = sign(body);
    const svix = { 'svix-id': MSG_ID, 'svix-timestamp': String(T), 'svix-signature': signature };
    expect(verify(svix)).toEqual({ ok: true });
  });

  it('prefers the webhook-* headers when both namings are present', () => {
    const good = headers(sign(body));
    const bad = { 'svix-id': 'msg_other', 'svix-timestamp': String(T), 'svix-signature': 'v1,AAAA' };
    expect(verify({ ...bad, ...good })).toEqual({ ok: true });
    const goodSvix = { 'svix-id': MSG_ID, 'svix-timestamp': String(T), 'svix-signature': sign(body) };
    expect(verify({ ...goodSvix, ...headers('v1,AAAA') })).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('does not mix an id from one naming with a signature from the other', () => {
    const mixed = { 'webhook-id': MSG_ID, 'svix-timestamp': String(T), 'svix-signature': sign(body) };
    expect(verify(mixed)).toEqual({ ok: false, reason: 'missing_signature' });
  });

  it('passes when a v1 entry matches beside a v1a one, and skips unknown versions', () => {
    const signature = sign(body);
    expect(verify(headers(`v1a,${'A'.repeat(86)}== ${signature}`))).toEqual({ ok: true });
    expect(verify(headers(`v2,${signature.slice(3)}`))).toEqual({ ok: false, reason: 'malformed_signature' });
    // A v1a entry is a known scheme: with no public key that verifies it, it is a mismatch.
    expect(verify(headers(`v1a,${signature.slice(3)}`))).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('passes when any of several v1 signatures matches', () => {
    const other = sign(body, 'whsec_bXlvdGhlcnNlY3JldG15b3RoZXJzZWNyZXQ=');
    expect(verify(headers(`${other} ${sign(body)}`))).toEqual({ ok: true });
    expect(verify(headers(`${sign(body)} ${other}`))).toEqual({ ok: true });
    expect(verify(headers(other))).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('accepts a delivery signed with the second of two configured secrets', () => {
    const signature = sign(body, OLD_SECRET);
    expect(verify(headers(signature), body, { secrets: [SECRET, OLD_SECRET] })).toEqual({ ok: true });
  });

  it('rejects a timestamp older than the tolerance', () => {
    const hdrs = headers(sign(body));
    expect(verify(hdrs, body, { nowSeconds: T + 300 })).toEqual({ ok: true });
    expect(verify(hdrs, body, { nowSeconds: T + 301 })).toEqual({
      ok: false,
      reason: 'timestamp_outside_tolerance',
    });
  });

  it('rejects a timestamp further in the future than the tolerance', () => {
    const hdrs = headers(sign(body));
    expect(verify(hdrs, body, { nowSeconds: T - 300 })).toEqual({ ok: true });
    expect(verify(hdrs, body, { nowSeconds: T - 301 })).toEqual({
      ok: false,
      reason: 'timestamp_outside_tolerance',
    });
  });

  it('applies a tolerance override', () => {
    const hdrs = headers(sign(body));
    expect(verify(hdrs, body, { nowSeconds: T + 31, toleranceSeconds: 30 })).toEqual({
      ok: false,
      reason: 'timestamp_outside_tolerance',
    });
  });

  it('rejects a body with one byte changed', () => {
    const hdrs = headers(sign(body));
    for (const index of [0, 3, body.length >> 1, body.length - 1]) {
      expect(verify(hdrs, flipByte(body, index))).toEqual({ ok: false, reason: 'signature_mismatch' });
    }
  });

  it('rejects a changed message id or timestamp, both of which are signed', () => {
    const signature = sign(body);
    expect(verify(headers(signature, `${MSG_ID.slice(0, -1)}X`))).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
    expect(verify(headers(signature, MSG_ID, T + 1))).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('rejects a signature with one byte of the digest changed', () => {
    const digest = Buffer.from(sign(body).slice(3), 'base64');
    for (const index of [0, 16, 31]) {
      const signature = `v1,${flipByte(digest, index).toString('base64')}`;
      expect(verify(headers(signature))).toEqual({ ok: false, reason: 'signature_mismatch' });
    }
  });

  it('rejects a v1 entry that is not canonical base64', () => {
    const encoded = sign(body).slice(3);
    expect(verify(headers(`v1,${encoded.replace(/=+$/, '')}`))).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
    expect(verify(headers(`v1,${encoded}!`))).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('returns missing_signature when any of the three headers is absent', () => {
    const full = headers(sign(body));
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      expect(verify({ ...full, [name]: undefined })).toEqual({ ok: false, reason: 'missing_signature' });
    }
    expect(verify({})).toEqual({ ok: false, reason: 'missing_signature' });
  });

  it('returns malformed_signature for a non-numeric timestamp or an id containing a dot', () => {
    const signature = sign(body);
    for (const timestamp of ['abc', '1.5', `${T}s`, '-1', '1e9']) {
      const result = verify({ ...headers(signature), 'webhook-timestamp': timestamp });
      expect(result, timestamp).toEqual({ ok: false, reason: 'malformed_signature' });
    }
    expect(verify(headers(signature, 'msg.1'))).toEqual({ ok: false, reason: 'malformed_signature' });
    expect(verify(headers('no-version-here'))).toEqual({ ok: false, reason: 'malformed_signature' });
  });

  it('returns no_secret_configured when no secret decodes to a key', () => {
    const hdrs = headers(sign(body));
    expect(verify(hdrs, body, { secrets: [] })).toEqual({ ok: false, reason: 'no_secret_configured' });
    expect(verify(hdrs, body, { secrets: ['whsec_', 'whsec_!!!'] })).toEqual({
      ok: false,
      reason: 'no_secret_configured',
    });
  });

  it('never throws on garbage headers or bodies', () => {
    for (const value of GARBAGE_HEADER_VALUES) {
      for (const payload of GARBAGE_BODIES) {
        const hdrs = { 'webhook-id': value, 'webhook-timestamp': value, 'webhook-signature': value };
        expect(verify(hdrs, payload).ok).toBe(false);
        expect(verify({ ...headers(value), 'webhook-id': MSG_ID }, payload).ok).toBe(false);
      }
    }
  });
});

describe('standardProvider.extract', () => {
  it('reads an invoice.paid message: id from the header, the rest from the payload', () => {
    expect(standardProvider.extract(request(headers('v1,x'), body))).toEqual({
      ok: true,
      event: {
        eventId: MSG_ID,
        eventType: 'invoice.paid',
        account: 'default',
        objectId: 'inv_2hYpXw4kQ8mZr1',
        occurredAt: Math.floor(Date.UTC(2024, 5, 12, 19, 45, 3, 512) / 1000),
      },
    });
  });

  it('reads the id from svix-id when only the svix-* headers are present', () => {
    const svix = { 'svix-id': 'msg_svix_1', 'svix-timestamp': String(T), 'svix-signature': 'v1,x' };
    expect(standardProvider.extract(request(svix, body))).toMatchObject({
      ok: true,
      event: { eventId: 'msg_svix_1' },
    });
  });

  it('reads a numeric data.id and leaves out an unparseable timestamp', () => {
    const payload = JSON.stringify({ type: 'user.created', timestamp: 'now', data: { id: 42 } });
    expect(standardProvider.extract(request(headers('v1,x'), payload))).toEqual({
      ok: true,
      event: { eventId: MSG_ID, eventType: 'user.created', account: 'default', objectId: '42' },
    });
  });

  it('returns missing_event_id without a message id header', () => {
    expect(standardProvider.extract(request({}, body))).toEqual({ ok: false, reason: 'missing_event_id' });
  });

  it('returns missing_event_type without a string type', () => {
    expect(standardProvider.extract(request(headers('v1,x'), '{"data":{}}'))).toEqual({
      ok: false,
      reason: 'missing_event_type',
    });
  });

  it('returns invalid_json for a body that is not a JSON object', () => {
    for (const payload of ['', 'null', '[]', '{"test": 2432232314']) {
      expect(standardProvider.extract(request(headers('v1,x'), payload))).toMatchObject({
        ok: false,
        reason: 'invalid_json',
      });
    }
  });

  it('never throws on garbage bodies', () => {
    for (const payload of GARBAGE_BODIES) {
      expect(typeof standardProvider.extract(request(headers('v1,x'), payload)).ok).toBe('boolean');
    }
  });
});

describe('standardProvider.defaults', () => {
  it('keeps claims 3 days, tolerates 300 s and keys on the message id', () => {
    expect(standardProvider.id).toBe('standard');
    expect(standardProvider.defaults).toEqual({
      claimTtlSeconds: 259_200,
      toleranceSeconds: 300,
      keyRules: { default: { kind: 'event-id' } },
    });
  });
});

describe('standardProvider.verify, asymmetric (v1a, Ed25519 with a whpk_ key)', () => {
  const pair = nacl.sign.keyPair.fromSeed(new Uint8Array(32).fill(7));
  const PUBLIC = `whpk_${Buffer.from(pair.publicKey).toString('base64')}`;
  const content = (payload: Buffer, id = MSG_ID, timestamp = T) =>
    Buffer.concat([Buffer.from(`${id}.${timestamp}.`), payload]);
  /** Signed by tweetnacl, an implementation independent of Node's crypto. */
  const v1a = (payload: Buffer, id = MSG_ID, timestamp = T) =>
    `v1a,${Buffer.from(nacl.sign.detached(content(payload, id, timestamp), pair.secretKey)).toString('base64')}`;
  const withKey = (hdrs: Record<string, string>, payload = body, secrets = [PUBLIC]) =>
    standardProvider.verify(request(hdrs, payload), { secrets, nowSeconds: T });

  it('accepts a v1a signature made by another Ed25519 implementation', () => {
    expect(withKey(headers(v1a(body)))).toEqual({ ok: true });
  });

  it('signs what tweetnacl verifies: Node crypto and tweetnacl agree on the scheme', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const raw = publicKey.export({ format: 'jwk' }).x ?? '';
    const signature = cryptoSign(null, content(body), privateKey);
    expect(
      nacl.sign.detached.verify(
        new Uint8Array(content(body)),
        new Uint8Array(signature),
        new Uint8Array(Buffer.from(raw, 'base64url')),
      ),
    ).toBe(true);
    const whpk = `whpk_${Buffer.from(raw, 'base64url').toString('base64')}`;
    expect(withKey(headers(`v1a,${signature.toString('base64')}`), body, [whpk])).toEqual({ ok: true });
  });

  it('refuses a tampered body, another id or timestamp, and another key', () => {
    expect(withKey(headers(v1a(body)), flipByte(body, 5))).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
    expect(withKey(headers(v1a(body), 'msg_other'))).toEqual({ ok: false, reason: 'signature_mismatch' });
    const other = nacl.sign.keyPair.fromSeed(new Uint8Array(32).fill(9));
    expect(
      withKey(headers(v1a(body)), body, [`whpk_${Buffer.from(other.publicKey).toString('base64')}`]),
    ).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('takes v1 and v1a in one header, with whsec_ and whpk_ secrets side by side (key rotation)', () => {
    const both = headers(`${sign(body)} ${v1a(body)}`);
    expect(withKey(both, body, [PUBLIC])).toEqual({ ok: true });
    expect(withKey(both, body, [SECRET])).toEqual({ ok: true });
    expect(withKey(headers(v1a(body)), body, [SECRET, PUBLIC])).toEqual({ ok: true });
    // A public key is never used as an HMAC key, nor an HMAC secret as a public key.
    expect(
      withKey(
        headers(
          `v1,${createHmac('sha256', Buffer.from(pair.publicKey)).update(content(body)).digest('base64')}`,
        ),
        body,
        [PUBLIC],
      ),
    ).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('still enforces the tolerance after a v1a match, and refuses garbage keys and signatures', () => {
    expect(
      standardProvider.verify(request(headers(v1a(body)), body), { secrets: [PUBLIC], nowSeconds: T + 301 }),
    ).toEqual({ ok: false, reason: 'timestamp_outside_tolerance' });
    for (const key of [
      'whpk_',
      'whpk_AAAA',
      'whpk_not base64',
      `whpk_${Buffer.alloc(31).toString('base64')}`,
    ])
      expect(withKey(headers(v1a(body)), body, [key]), key).toEqual({
        ok: false,
        reason: 'no_secret_configured',
      });
    for (const entry of ['v1a,', 'v1a,AAAA', `v1a,${Buffer.alloc(64).toString('base64')}`, 'v1a,!!'])
      expect(withKey(headers(entry)), entry).toEqual({ ok: false, reason: 'signature_mismatch' });
  });
});
