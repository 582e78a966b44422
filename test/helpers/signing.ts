/**
 * Signs deliveries the way each provider does, with the providers' official libraries where one
 * exists (stripe, standardwebhooks, @octokit/webhooks-methods). Shopify publishes no signer, so its
 * header follows the documented rule (base64 HMAC-SHA256 of the raw body).
 */
import { createHmac, randomUUID } from 'node:crypto';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { DISCORD_DEV_PUBLIC_KEY } from '../../lambdas/providers/discord.js';

const stripe = new Stripe('sk_test_signing_only');

export const TEST_SECRETS = {
  stripe: 'whsec_test_stripe_0123456789abcdef',
  github: 'github-test-secret',
  shopify: 'shopify-test-client-secret',
  asaas: 'asaas-test-access-token',
  // Standard Webhooks secrets are base64 after the whsec_ prefix (24+ bytes recommended).
  standard: `whsec_${Buffer.from('standard-test-secret-32-bytes!!!').toString('base64')}`,
  paddle: 'pdl_ntfset_test_paddle_0123456789',
  slack: 'slack-test-signing-secret',
  square: 'square-test-signature-key',
  twilio: 'twilio-test-auth-token',
  // A public key: the development pair's, whose private half lambdas/providers/discord.ts signs with.
  discord: DISCORD_DEV_PUBLIC_KEY,
} as const;

export function stripeHeaders(body: string, secret: string = TEST_SECRETS.stripe, timestampSeconds?: number) {
  const header = stripe.webhooks.generateTestHeaderString({
    payload: body,
    secret,
    timestamp: timestampSeconds ?? Math.floor(Date.now() / 1000),
  });
  return { 'content-type': 'application/json', 'stripe-signature': header };
}

/** The repository id a push body names, as a repository hook's target id (GitHub sends both). */
function repositoryIdOf(body: string): string | undefined {
  try {
    const json = body.startsWith('payload=') ? (new URLSearchParams(body).get('payload') ?? '') : body;
    const id = (JSON.parse(json) as { repository?: { id?: unknown } }).repository?.id;
    return typeof id === 'number' || typeof id === 'string' ? String(id) : undefined;
  } catch {
    return undefined;
  }
}

export async function githubHeaders(
  body: string,
  options: {
    event?: string;
    delivery?: string;
    hookTarget?: string;
    hookTargetType?: string;
    secret?: string;
  } = {},
) {
  const repositoryId = repositoryIdOf(body);
  const targetType = options.hookTargetType ?? (repositoryId === undefined ? undefined : 'repository');
  return {
    'content-type': 'application/json',
    'x-github-event': options.event ?? 'push',
    'x-github-delivery': options.delivery ?? randomUUID(),
    'x-github-hook-installation-target-id': options.hookTarget ?? repositoryId ?? '123456',
    ...(targetType === undefined ? {} : { 'x-github-hook-installation-target-type': targetType }),
    'x-hub-signature-256': await githubSign(options.secret ?? TEST_SECRETS.github, body),
  };
}

export function shopifyHeaders(
  body: string,
  options: { topic?: string; shop?: string; webhookId?: string; eventId?: string; secret?: string } = {},
) {
  return {
    'content-type': 'application/json',
    'x-shopify-topic': options.topic ?? 'orders/create',
    'x-shopify-shop-domain': options.shop ?? 'example-shop.myshopify.com',
    'x-shopify-webhook-id': options.webhookId ?? randomUUID(),
    ...(options.eventId === undefined ? {} : { 'x-shopify-event-id': options.eventId }),
    'x-shopify-hmac-sha256': createHmac('sha256', options.secret ?? TEST_SECRETS.shopify)
      .update(body)
      .digest('base64'),
  };
}

export function asaasHeaders(token: string = TEST_SECRETS.asaas) {
  return { 'content-type': 'application/json', 'asaas-access-token': token };
}

export function standardHeaders(
  body: string,
  options: { id?: string; timestamp?: Date; secret?: string; prefix?: 'webhook' | 'svix' } = {},
) {
  const id = options.id ?? `msg_${randomUUID().replaceAll('-', '')}`;
  const timestamp = options.timestamp ?? new Date();
  const signature = new Webhook(options.secret ?? TEST_SECRETS.standard).sign(id, timestamp, body);
  const prefix = options.prefix ?? 'webhook';
  return {
    'content-type': 'application/json',
    [`${prefix}-id`]: id,
    [`${prefix}-timestamp`]: String(Math.floor(timestamp.getTime() / 1000)),
    [`${prefix}-signature`]: signature,
  };
}
