/**
 * The generic HMAC provider (lambdas/providers/hmac.ts), checked against the official signers:
 * GitHub, Shopify and Standard Webhooks expressed as configurations accept what @octokit, Shopify's
 * documented HMAC and the standardwebhooks library sign, refuse tampering, and read the same
 * identity as the built-in modules.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { githubProvider } from '../../lambdas/providers/github.js';
import {
  type HmacProviderConfig,
  HmacProviderConfigError,
  hmacProvider,
} from '../../lambdas/providers/hmac.js';
import { shopifyProvider } from '../../lambdas/providers/shopify.js';
import type { WebhookRequest } from '../../lambdas/providers/types.js';
import { githubPushEvent, shopifyOrder } from '../helpers/events.js';
import { githubHeaders, shopifyHeaders, standardHeaders, TEST_SECRETS } from '../helpers/signing.js';

const now = () => Math.floor(Date.now() / 1000);
const request = (headers: Record<string, string>, body: string): WebhookRequest => ({
  headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
  rawBody: Buffer.from(body),
});

const GITHUB: HmacProviderConfig = {
  id: 'ghconfig',
  name: 'GitHub (configured)',
  signature: { header: 'X-Hub-Signature-256', algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' },
  signedContent: '{body}',
  eventId: { header: 'X-GitHub-Delivery' },
  eventType: { header: 'X-GitHub-Event' },
  account: { pointer: '/repository/id' },
  claimTtlSeconds: 7 * 86_400,
};

const SHOPIFY: HmacProviderConfig = {
  id: 'shconfig',
  name: 'Shopify (configured)',
  signature: { header: 'X-Shopify-Hmac-Sha256', algorithm: 'sha256', encoding: 'base64' },
  signedContent: '{body}',
  eventId: { header: 'X-Shopify-Webhook-Id' },
  eventType: { header: 'X-Shopify-Topic' },
  // A custom app serves one shop: its domain is the account (a header would be unsigned).
  account: { value: 'example-shop.myshopify.com' },
  objectId: { pointer: '/id' },
  objectKind: { value: 'order' },
  claimTtlSeconds: 3 * 86_400,
};

const STANDARD: HmacProviderConfig = {
  id: 'stdconfig',
  name: 'Standard Webhooks (configured)',
  signature: {
    header: 'webhook-signature',
    algorithm: 'sha256',
    encoding: 'base64',
    prefix: 'v1,',
    separator: ' ',
  },
  signedContent: '{id}.{timestamp}.{body}',
  secret: { encoding: 'base64', prefix: 'whsec_' },
  timestamp: { header: 'webhook-timestamp', toleranceSeconds: 300 },
  eventId: { header: 'webhook-id' },
  eventType: { pointer: '/type' },
  claimTtlSeconds: 3 * 86_400,
};

describe('GitHub as an HMAC configuration', () => {
  const provider = hmacProvider(GITHUB);

  it('accepts what @octokit/webhooks-methods signs and reads the identity the GitHub module reads', async () => {
    const body = JSON.stringify(githubPushEvent());
    const delivery = request(await githubHeaders(body), body);
    expect(provider.verify(delivery, { secrets: [TEST_SECRETS.github], nowSeconds: now() })).toEqual({
      ok: true,
    });
    const ours = provider.extract(delivery);
    const builtIn = githubProvider.extract(delivery);
    expect(ours.ok && builtIn.ok).toBe(true);
    if (ours.ok && builtIn.ok) {
      expect(ours.event.eventId).toBe(builtIn.event.eventId);
      expect(ours.event.eventType).toBe(builtIn.event.eventType);
      expect(ours.event.account).toBe(builtIn.event.account);
    }
  });

  it('refuses a tampered body, another secret, a missing header and a digest without its prefix', async () => {
    const body = JSON.stringify(githubPushEvent());
    const headers = await githubHeaders(body);
    const options = { secrets: [TEST_SECRETS.github], nowSeconds: now() };
    expect(provider.verify(request(headers, `${body} `), options)).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
    expect(provider.verify(request(headers, body), { ...options, secrets: ['other'] })).toMatchObject({
      reason: 'signature_mismatch',
    });
    const { 'x-hub-signature-256': signature, ...unsigned } = headers;
    expect(provider.verify(request(unsigned, body), options)).toMatchObject({ reason: 'missing_signature' });
    expect(
      provider.verify(
        request({ ...unsigned, 'x-hub-signature-256': signature.slice('sha256='.length) }, body),
        options,
      ),
    ).toMatchObject({ reason: 'malformed_signature' });
    expect(provider.verify(request(headers, body), { ...options, secrets: [] })).toMatchObject({
      reason: 'no_secret_configured',
    });
  });
});

describe('Shopify as an HMAC configuration', () => {
  const provider = hmacProvider(SHOPIFY);

  it("accepts Shopify's base64 HMAC of the raw body and reads shop, topic and order", () => {
    const body = JSON.stringify(shopifyOrder(450789469));
    const delivery = request(shopifyHeaders(body, { webhookId: 'wh-1' }), body);
    expect(provider.verify(delivery, { secrets: [TEST_SECRETS.shopify], nowSeconds: now() })).toEqual({
      ok: true,
    });
    expect(shopifyProvider.verify(delivery, { secrets: [TEST_SECRETS.shopify], nowSeconds: now() })).toEqual({
      ok: true,
    });
    expect(provider.extract(delivery)).toEqual({
      ok: true,
      event: {
        eventId: 'wh-1',
        eventType: 'orders/create',
        account: 'example-shop.myshopify.com',
        objectId: '450789469',
        objectKind: 'order',
      },
    });
    const tampered = request(shopifyHeaders(body), body.replace('450789469', '450789470'));
    expect(provider.verify(tampered, { secrets: [TEST_SECRETS.shopify], nowSeconds: now() })).toMatchObject({
      reason: 'signature_mismatch',
    });
  });
});

describe('Standard Webhooks as an HMAC configuration ({id}.{timestamp}.{body}, base64 secret)', () => {
  const provider = hmacProvider(STANDARD);
  const body = JSON.stringify({ type: 'invoice.paid', data: { id: 'in_1' } });

  it('accepts what the standardwebhooks library signs, among several signatures', () => {
    const headers = standardHeaders(body);
    const rotated = {
      ...headers,
      'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')} ${headers['webhook-signature']}`,
    };
    expect(
      provider.verify(request(rotated, body), { secrets: [TEST_SECRETS.standard], nowSeconds: now() }),
    ).toEqual({
      ok: true,
    });
    expect(provider.extract(request(headers, body))).toMatchObject({
      ok: true,
      event: { eventId: headers['webhook-id'], eventType: 'invoice.paid', account: 'default' },
    });
  });

  it('refuses a signed timestamp outside the tolerance, and another id under the same signature', () => {
    const old = new Date(Date.now() - 600_000);
    const headers = standardHeaders(body, { timestamp: old });
    expect(
      provider.verify(request(headers, body), { secrets: [TEST_SECRETS.standard], nowSeconds: now() }),
    ).toEqual({
      ok: false,
      reason: 'timestamp_outside_tolerance',
    });
    const fresh = standardHeaders(body);
    expect(
      provider.verify(request({ ...fresh, 'webhook-id': 'msg_other' }, body), {
        secrets: [TEST_SECRETS.standard],
        nowSeconds: now(),
      }),
    ).toMatchObject({ reason: 'signature_mismatch' });
  });
});

describe("a signed timestamp's tolerance, in both directions", () => {
  // The partner example (examples/providers/partner.json): `{timestamp}.{body}`, 300 s tolerance.
  // Until this test the future side was checked only by a 27 s e2e test; a verify that compared
  // `now - timestamp` alone would accept a delivery signed for any time ahead.
  const config = JSON.parse(
    readFileSync(join(import.meta.dirname, '../../examples/providers/partner.json'), 'utf8'),
  ) as HmacProviderConfig;
  const provider = hmacProvider(config);
  const NOW = 1_780_000_000;
  const body = JSON.stringify({
    id: 'evt_t',
    type: 'invoice.paid',
    account: 'acct_1',
    data: { id: 'inv_t' },
  });
  const signedAt = (at: number) =>
    request({ 'content-type': 'application/json', ...provider.dev.sign(body, 'partner-secret', at) }, body);
  const verifyAt = (at: number, toleranceSeconds?: number) =>
    provider.verify(signedAt(at), {
      secrets: ['partner-secret'],
      nowSeconds: NOW,
      ...(toleranceSeconds === undefined ? {} : { toleranceSeconds }),
    });
  const refused = { ok: false, reason: 'timestamp_outside_tolerance' };

  it('accepts a timestamp up to the tolerance ahead of or behind now, and refuses one a second more', () => {
    expect(verifyAt(NOW)).toEqual({ ok: true });
    expect(verifyAt(NOW + 300)).toEqual({ ok: true });
    expect(verifyAt(NOW - 300)).toEqual({ ok: true });
    expect(verifyAt(NOW + 301)).toEqual(refused);
    expect(verifyAt(NOW - 301)).toEqual(refused);
  });

  it('refuses a far-future timestamp whose signature is valid', () => {
    expect(verifyAt(NOW + 600)).toEqual(refused);
    expect(verifyAt(NOW + 365 * 86_400)).toEqual(refused);
  });

  it("applies the receiver's tolerance setting in both directions when one is set", () => {
    expect(verifyAt(NOW + 301, 600)).toEqual({ ok: true });
    expect(verifyAt(NOW + 61, 60)).toEqual(refused);
    expect(verifyAt(NOW - 61, 60)).toEqual(refused);
  });
});

describe('its own samples and signing', () => {
  it.each([GITHUB, SHOPIFY, STANDARD])('signs a sample of $id that it verifies and reads', (config) => {
    const provider = hmacProvider(config);
    const secret = config.secret?.encoding === 'base64' ? TEST_SECRETS.standard : 'a-secret';
    const nowSeconds = now();
    const sample = provider.dev.sample('thing.happened', { nowSeconds, eventId: 'evt_1', objectId: 'obj_1' });
    const headers = {
      ...sample.headers,
      ...provider.dev.sign(sample.body, secret, nowSeconds, sample.headers),
    };
    const delivery = request(headers, sample.body);
    expect(provider.verify(delivery, { secrets: [secret], nowSeconds })).toEqual({ ok: true });
    expect(provider.extract(delivery)).toMatchObject({
      ok: true,
      event: { eventId: 'evt_1', eventType: 'thing.happened' },
    });
  });
});

describe("the docs' worked examples (examples/providers/*.json)", () => {
  const example = (name: string) =>
    JSON.parse(
      readFileSync(join(import.meta.dirname, '../../examples/providers', `${name}.json`), 'utf8'),
    ) as HmacProviderConfig;

  it('samples an Onfido check event in its documented envelope, one id for the event and the check', () => {
    const provider = hmacProvider(example('onfido'));
    expect(provider.dev.sampleTypes).toEqual(['check.completed', 'check.started']);
    const sample = provider.dev.sample('check.completed', { nowSeconds: now(), objectId: 'chk_1' });
    expect(JSON.parse(sample.body)).toMatchObject({
      payload: {
        resource_type: 'check',
        action: 'check.completed',
        object: { id: 'chk_1', status: 'complete' },
      },
    });
    const headers = { ...sample.headers, ...provider.dev.sign(sample.body, 'token', now()) };
    expect(provider.extract(request(headers, sample.body))).toEqual({
      ok: true,
      event: {
        eventId: 'chk_1',
        eventType: 'check.completed',
        account: 'default',
        objectId: 'chk_1',
        objectKind: 'check',
      },
    });
  });

  it("samples the partner's invoice with its account, signed over the timestamp and the body", () => {
    const provider = hmacProvider(example('partner'));
    const nowSeconds = now();
    const sample = provider.dev.sample('invoice.paid', { nowSeconds, eventId: 'evt_9', objectId: 'inv_9' });
    const signed = provider.dev.sign(sample.body, 'partner-secret', nowSeconds);
    expect(signed).toEqual({
      'x-signature': `sha256=${createHmac('sha256', 'partner-secret').update(`${nowSeconds}.${sample.body}`).digest('hex')}`,
      'x-timestamp': String(nowSeconds),
    });
    const delivery = request({ ...sample.headers, ...signed }, sample.body);
    expect(provider.verify(delivery, { secrets: ['partner-secret'], nowSeconds })).toEqual({ ok: true });
    expect(provider.extract(delivery)).toMatchObject({
      ok: true,
      event: { eventId: 'evt_9', eventType: 'invoice.paid', account: 'default', objectId: 'inv_9' },
    });
  });
});

describe('configuration checks', () => {
  it.each([
    [
      { ...STANDARD, timestamp: undefined },
      /signedContent \{id\}\.\{timestamp\}\.\{body\} needs timestamp\.header/,
    ],
    [{ ...STANDARD, eventId: { pointer: '/id' } }, /eventId must come from a header/],
    [{ ...GITHUB, id: 'Git Hub' }, /id must be 2-32 lower-case letters and digits/],
    [{ ...GITHUB, signature: { ...GITHUB.signature, algorithm: 'md5' } }, /signature\.algorithm/],
    [{ ...GITHUB, eventType: { pointer: 'type' } }, /eventType/],
    [{ ...GITHUB, claimTtlSeconds: 0 }, /claimTtlSeconds/],
    [{ ...GITHUB, colour: 'teal' }, /config has unknown field\(s\) colour/],
    [{ ...SHOPIFY, account: { header: 'X-Shopify-Shop-Domain' } }, /account must come from the signed body/],
    [
      { id: 'kyc', name: 'KYC' },
      /"kyc": signature is required; signedContent is required; eventId is required/,
    ],
  ])('refuses %#', (config, message) => {
    expect(() => hmacProvider(config as HmacProviderConfig)).toThrow(HmacProviderConfigError);
    expect(() => hmacProvider(config as HmacProviderConfig)).toThrow(message);
  });
});
