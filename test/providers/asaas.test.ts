import { describe, expect, it } from 'vitest';
import { asaasObjectKind, asaasProvider } from '../../lambdas/providers/asaas.js';
import { fixture, GARBAGE_BODIES, GARBAGE_HEADER_VALUES, request } from './support.js';

const TOKEN = 'whk_7d2f9c4a1b8e4f3a9c6d2e1f0a5b7c9d3e8f1a2b';
const OLD_TOKEN = 'whk_0f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6';
const NOW = 1_718_221_510;
const body = fixture('asaas', 'payment-received.json');

function verify(token: string | undefined, tokens: readonly string[] = [TOKEN]) {
  return asaasProvider.verify(request({ 'asaas-access-token': token }, body), {
    secrets: tokens,
    nowSeconds: NOW,
  });
}

describe('asaasProvider.verify', () => {
  it('accepts the configured access token', () => {
    expect(verify(TOKEN)).toEqual({ ok: true });
  });

  it('rejects a wrong token, including a prefix, an extension or a change of case', () => {
    for (const token of [
      'wrong',
      TOKEN.slice(0, -1),
      `${TOKEN}x`,
      TOKEN.toUpperCase(),
      `${TOKEN.slice(0, 10)}`,
    ]) {
      expect(verify(token)).toEqual({ ok: false, reason: 'signature_mismatch' });
    }
  });

  it('returns missing_signature when the token header is absent or blank', () => {
    expect(verify(undefined)).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verify('')).toEqual({ ok: false, reason: 'missing_signature' });
  });

  it('accepts the second of two configured tokens during a rotation', () => {
    expect(verify(OLD_TOKEN, [TOKEN, OLD_TOKEN])).toEqual({ ok: true });
    expect(verify(OLD_TOKEN, [TOKEN])).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('returns no_secret_configured without a usable token, so an empty token never matches', () => {
    expect(verify(TOKEN, [])).toEqual({ ok: false, reason: 'no_secret_configured' });
    expect(verify(TOKEN, [''])).toEqual({ ok: false, reason: 'no_secret_configured' });
  });

  it('never throws on garbage header values', () => {
    for (const token of GARBAGE_HEADER_VALUES) {
      expect(verify(token).ok).toBe(false);
    }
  });
});

describe('asaasProvider.extract', () => {
  it('reads a PAYMENT_RECEIVED event with its & event id intact', () => {
    expect(asaasProvider.extract(request({}, body))).toEqual({
      ok: true,
      event: {
        eventId: 'evt_05b708f961d739ea7eba7e4db318f621&368604920',
        eventType: 'PAYMENT_RECEIVED',
        account: '7b3b1c2e-9d4f-4a5b-8c6d-1e2f3a4b5c6d',
        objectId: 'pay_080225913252',
        objectKind: 'payment',
        // 16:45:03 in Brasília (UTC-03:00) is 19:45:03 UTC.
        occurredAt: Date.UTC(2024, 5, 12, 19, 45, 3) / 1000,
      },
    });
  });

  it('reads a TRANSFER_DONE event, its transfer id and an ISO dateCreated with an offset', () => {
    expect(asaasProvider.extract(request({}, fixture('asaas', 'transfer-done.json')))).toEqual({
      ok: true,
      event: {
        eventId: 'evt_d26e303b238e509335ac9ba210e51b0f&9235419',
        eventType: 'TRANSFER_DONE',
        account: 'default',
        objectId: '777eb7c8-b1a2-4356-8fd8-a1b0644b5282',
        objectKind: 'transfer',
        occurredAt: Date.UTC(2024, 5, 13, 12, 12, 44) / 1000,
      },
    });
  });

  it('leaves out the object id when the object is missing or its id is not a string', () => {
    const payload = {
      id: 'evt_1&2',
      event: 'PAYMENT_CREATED',
      payment: { id: 42 },
      dateCreated: 'yesterday',
    };
    expect(asaasProvider.extract(request({}, JSON.stringify(payload)))).toEqual({
      ok: true,
      event: { eventId: 'evt_1&2', eventType: 'PAYMENT_CREATED', account: 'default', objectKind: 'payment' },
    });
  });

  it('returns missing_event_id and missing_event_type for absent fields', () => {
    expect(asaasProvider.extract(request({}, '{"event":"PAYMENT_RECEIVED"}'))).toEqual({
      ok: false,
      reason: 'missing_event_id',
    });
    expect(asaasProvider.extract(request({}, '{"id":"evt_1&2","event":3}'))).toEqual({
      ok: false,
      reason: 'missing_event_type',
    });
  });

  it('returns invalid_json for a body that is not a JSON object', () => {
    for (const payload of ['', 'null', '[]', 'id=evt_1']) {
      expect(asaasProvider.extract(request({}, payload))).toMatchObject({
        ok: false,
        reason: 'invalid_json',
      });
    }
  });

  it('never throws on garbage bodies', () => {
    for (const payload of GARBAGE_BODIES) {
      expect(typeof asaasProvider.extract(request({}, payload)).ok).toBe('boolean');
    }
  });
});

describe('asaasObjectKind', () => {
  it.each([
    ['PAYMENT_RECEIVED', 'payment'],
    ['TRANSFER_DONE', 'transfer'],
    ['SUBSCRIPTION_CREATED', 'subscription'],
    ['INVOICE_AUTHORIZED', 'invoice'],
  ])('names the object of %s as %s', (event, kind) => {
    expect(asaasObjectKind(event)).toBe(kind);
  });

  it('names no object for an event that starts with _', () => {
    expect(asaasObjectKind('_X')).toBeUndefined();
  });
});

describe('asaasProvider.defaults', () => {
  it('keeps claims 21 days and keys on the event id', () => {
    expect(asaasProvider.id).toBe('asaas');
    expect(asaasProvider.defaults).toEqual({
      claimTtlSeconds: 1_814_400,
      keyRules: { default: { kind: 'event-id' } },
    });
  });
});
