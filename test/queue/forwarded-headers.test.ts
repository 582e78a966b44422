/**
 * Which request headers travel with an event into the queue message and the payload archive: the
 * provider's ids, topics and timestamps, never a signature, token, cookie or authorization. Replays
 * and archived objects depend on this set, so it is pinned per provider with the headers each
 * provider really sends (signed by the same helpers the provider cross-checks use).
 */
import { describe, expect, it } from 'vitest';
import { forwardedHeaders } from '../../lambdas/queue/event-message.js';
import {
  asaasHeaders,
  githubHeaders,
  shopifyHeaders,
  standardHeaders,
  stripeHeaders,
} from '../helpers/signing.js';

const body = '{"id":"evt_1"}';
const transport = {
  host: 'abc.execute-api.us-east-1.amazonaws.com',
  'user-agent': 'Provider/1.0',
  'x-forwarded-for': '203.0.113.7',
  'x-amzn-trace-id': 'Root=1-abc',
  'content-length': '14',
  cookie: 'session=1',
  authorization: 'Bearer leaked',
  'proxy-authorization': 'Basic leaked',
};

const github = await githubHeaders(body, { delivery: 'd-1', hookTarget: '42', hookTargetType: 'repository' });

describe('forwardedHeaders', () => {
  it.each([
    ['stripe', stripeHeaders(body), ['content-type', 'user-agent']],
    [
      'github',
      github,
      [
        'content-type',
        'user-agent',
        'x-github-delivery',
        'x-github-event',
        'x-github-hook-installation-target-id',
        'x-github-hook-installation-target-type',
      ],
    ],
    [
      'shopify',
      shopifyHeaders(body, { eventId: 'e-1' }),
      [
        'content-type',
        'user-agent',
        'x-shopify-event-id',
        'x-shopify-shop-domain',
        'x-shopify-topic',
        'x-shopify-webhook-id',
      ],
    ],
    ['asaas', asaasHeaders(), ['content-type', 'user-agent']],
    ['standard', standardHeaders(body), ['content-type', 'user-agent', 'webhook-id', 'webhook-timestamp']],
    [
      'standard (svix-)',
      standardHeaders(body, { prefix: 'svix' }),
      ['content-type', 'svix-id', 'svix-timestamp', 'user-agent'],
    ],
  ])(
    'keeps the %s ids and topics and drops its signature and the transport headers',
    (_name, signed, kept) => {
      const forwarded = forwardedHeaders({ ...transport, ...signed });
      expect(Object.keys(forwarded).sort()).toEqual([...kept].sort());
    },
  );

  it('never forwards a header that proves authenticity, whatever the provider', () => {
    const secrets = [
      'stripe-signature',
      'x-hub-signature',
      'x-hub-signature-256',
      'x-shopify-hmac-sha256',
      'asaas-access-token',
      'webhook-signature',
      'svix-signature',
      'authorization',
      'cookie',
      'proxy-authorization',
    ];
    const forwarded = forwardedHeaders(Object.fromEntries(secrets.map((name) => [name, 'secret'])));
    expect(forwarded).toEqual({});
  });

  it('keeps other provider-prefixed headers (a new delivery header of a known provider is kept)', () => {
    expect(
      forwardedHeaders({ 'x-github-hook-id': '1', 'stripe-should-retry': 'true', 'x-random': 'dropped' }),
    ).toEqual({ 'x-github-hook-id': '1', 'stripe-should-retry': 'true' });
  });
});
