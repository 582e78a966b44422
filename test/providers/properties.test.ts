/**
 * Properties over random bodies: what the official signer (or, for Shopify, the documented rule)
 * produces verifies, and flipping any single byte of the body makes verification fail.
 *
 * The official JavaScript signers take strings (stripe-node, @octokit/webhooks-methods) or decode
 * a Buffer as UTF-8 before signing (standardwebhooks), so arbitrary bytes that are not valid UTF-8
 * cannot go through them unchanged. Each provider therefore gets two properties: the official
 * signer over random Unicode text, and the documented rule computed with node:crypto over random
 * bytes (which is what a provider signs: the bytes it sends).
 */
import { createHmac } from 'node:crypto';
import { sign as octokitSign } from '@octokit/webhooks-methods';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { PROVIDER_LIST, PROVIDERS } from '../../lambdas/providers/index.js';
import type { Provider, WebhookRequest } from '../../lambdas/providers/types.js';
import { flipByte, request } from './support.js';

const RUNS = { numRuns: 100 };
const NOW = 1_718_210_703;
const STRIPE_SECRET = 'whsec_prop_7e1d2c3b4a5f6e7d8c9b';
const GITHUB_SECRET = 'prop-github-secret';
const SHOPIFY_SECRET = 'shpss_prop_0f9e8d7c6b5a';
const STANDARD_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const STANDARD_KEY = Buffer.from(STANDARD_SECRET.slice('whsec_'.length), 'base64');
const MSG_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';

/** A non-empty random body, an index into it and a non-zero XOR mask. */
const bytesAndFlip = fc.record({
  body: fc.uint8Array({ minLength: 1, maxLength: 2048 }).map((bytes) => Buffer.from(bytes)),
  index: fc.nat(),
  mask: fc.integer({ min: 1, max: 255 }),
});
const textAndFlip = fc.record({
  body: fc
    .string({ unit: 'grapheme', minLength: 1, maxLength: 512 })
    .map((text) => Buffer.from(text, 'utf8')),
  index: fc.nat(),
  mask: fc.integer({ min: 1, max: 255 }),
});

interface Signed {
  readonly headers: Record<string, string>;
}

function check(provider: Provider, secret: string, signed: (body: Buffer) => Signed | Promise<Signed>) {
  return async ({ body, index, mask }: { body: Buffer; index: number; mask: number }) => {
    const { headers } = await signed(body);
    const options = { secrets: [secret], nowSeconds: NOW };
    const original: WebhookRequest = request(headers, body);
    expect(provider.verify(original, options)).toEqual({ ok: true });
    expect(provider.verify(request(headers, flipByte(body, index, mask)), options)).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  };
}

const stripeRule = (body: Buffer): Signed => ({
  headers: {
    'stripe-signature': `t=${NOW},v1=${createHmac('sha256', STRIPE_SECRET).update(`${NOW}.`).update(body).digest('hex')}`,
  },
});
const stripeOfficial = (body: Buffer): Signed => ({
  headers: {
    'stripe-signature': Stripe.webhooks.generateTestHeaderString({
      payload: body.toString('utf8'),
      secret: STRIPE_SECRET,
      timestamp: NOW,
    }),
  },
});
const githubRule = (body: Buffer): Signed => ({
  headers: {
    'x-hub-signature-256': `sha256=${createHmac('sha256', GITHUB_SECRET).update(body).digest('hex')}`,
  },
});
const githubOfficial = async (body: Buffer): Promise<Signed> => ({
  headers: { 'x-hub-signature-256': await octokitSign(GITHUB_SECRET, body.toString('utf8')) },
});
const shopifyRule = (body: Buffer): Signed => ({
  headers: { 'x-shopify-hmac-sha256': createHmac('sha256', SHOPIFY_SECRET).update(body).digest('base64') },
});
const standardRule = (body: Buffer): Signed => ({
  headers: {
    'webhook-id': MSG_ID,
    'webhook-timestamp': String(NOW),
    'webhook-signature': `v1,${createHmac('sha256', STANDARD_KEY).update(`${MSG_ID}.${NOW}.`).update(body).digest('base64')}`,
  },
});
const standardOfficial = (body: Buffer): Signed => ({
  headers: {
    'webhook-id': MSG_ID,
    'webhook-timestamp': String(NOW),
    'webhook-signature': new Webhook(STANDARD_SECRET).sign(
      MSG_ID,
      new Date(NOW * 1000),
      body.toString('utf8'),
    ),
  },
});

describe('signature properties over random bodies', () => {
  it('Stripe: the documented rule over random bytes verifies, and any flipped body byte fails', async () => {
    await fc.assert(fc.asyncProperty(bytesAndFlip, check(PROVIDERS.stripe, STRIPE_SECRET, stripeRule)), RUNS);
  });

  it('Stripe: generateTestHeaderString over random text verifies, and any flipped body byte fails', async () => {
    await fc.assert(
      fc.asyncProperty(textAndFlip, check(PROVIDERS.stripe, STRIPE_SECRET, stripeOfficial)),
      RUNS,
    );
  });

  it('GitHub: the documented rule over random bytes verifies, and any flipped body byte fails', async () => {
    await fc.assert(fc.asyncProperty(bytesAndFlip, check(PROVIDERS.github, GITHUB_SECRET, githubRule)), RUNS);
  });

  it('GitHub: @octokit/webhooks-methods sign over random text verifies, and any flipped body byte fails', async () => {
    await fc.assert(
      fc.asyncProperty(textAndFlip, check(PROVIDERS.github, GITHUB_SECRET, githubOfficial)),
      RUNS,
    );
  });

  it('Shopify: the documented rule over random bytes verifies, and any flipped body byte fails', async () => {
    await fc.assert(
      fc.asyncProperty(bytesAndFlip, check(PROVIDERS.shopify, SHOPIFY_SECRET, shopifyRule)),
      RUNS,
    );
  });

  it('Standard: the documented rule over random bytes verifies, and any flipped body byte fails', async () => {
    await fc.assert(
      fc.asyncProperty(bytesAndFlip, check(PROVIDERS.standard, STANDARD_SECRET, standardRule)),
      RUNS,
    );
  });

  it('Standard: Webhook.sign over random text verifies, and any flipped body byte fails', async () => {
    await fc.assert(
      fc.asyncProperty(textAndFlip, check(PROVIDERS.standard, STANDARD_SECRET, standardOfficial)),
      RUNS,
    );
  });
});

describe('robustness properties', () => {
  const headerNames = [
    'stripe-signature',
    'x-hub-signature-256',
    'x-github-delivery',
    'x-github-event',
    'x-github-hook-installation-target-id',
    'x-shopify-hmac-sha256',
    'x-shopify-event-id',
    'x-shopify-webhook-id',
    'x-shopify-topic',
    'x-shopify-shop-domain',
    'asaas-access-token',
    'webhook-id',
    'webhook-timestamp',
    'webhook-signature',
    'svix-id',
    'svix-timestamp',
    'svix-signature',
    'content-type',
  ];
  const headerValue = fc.oneof(
    fc.string(),
    fc.constantFrom(
      't=1718210703,v1=00',
      'sha256=00',
      'v1,AAAA',
      'application/x-www-form-urlencoded',
      '1718210703',
    ),
  );
  const arbitraryRequest = fc.record({
    headers: fc.dictionary(fc.constantFrom(...headerNames), headerValue),
    rawBody: fc.oneof(
      fc.uint8Array({ maxLength: 512 }).map((bytes) => Buffer.from(bytes)),
      fc.json().map((json) => Buffer.from(json)),
      fc
        .jsonValue()
        .map((value) => Buffer.from(JSON.stringify({ id: value, type: value, event: value, data: value }))),
    ),
  });
  const arbitraryOptions = fc.record({
    secrets: fc.array(fc.string(), { maxLength: 3 }),
    nowSeconds: fc.oneof(fc.double(), fc.integer()),
    toleranceSeconds: fc.option(fc.double(), { nil: undefined }),
  });

  it('no provider throws, and an unsigned random request never verifies', () => {
    fc.assert(
      fc.property(arbitraryRequest, arbitraryOptions, (req, options) => {
        for (const provider of PROVIDER_LIST) {
          const verified = provider.verify(req, options);
          // Only Asaas (a bare token) could match by chance, and only if a random secret equals the header.
          if (provider.id !== 'asaas') expect(verified.ok).toBe(false);
          expect(typeof provider.extract(req).ok).toBe('boolean');
        }
      }),
      { numRuns: 300 },
    );
  });
});
