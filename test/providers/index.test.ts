import { describe, expect, it } from 'vitest';
import { asaasProvider } from '../../lambdas/providers/asaas.js';
import { githubProvider } from '../../lambdas/providers/github.js';
import { getProvider, PROVIDERS, requireProvider } from '../../lambdas/providers/index.js';
import { shopifyProvider } from '../../lambdas/providers/shopify.js';
import { standardProvider } from '../../lambdas/providers/standard.js';
import { stripeProvider } from '../../lambdas/providers/stripe.js';
import { PROVIDER_IDS } from '../../lambdas/providers/types.js';

describe('getProvider', () => {
  it.each([
    ['stripe', stripeProvider],
    ['github', githubProvider],
    ['shopify', shopifyProvider],
    ['asaas', asaasProvider],
    ['standard', standardProvider],
  ])('returns the %s provider for its route id', (id, provider) => {
    expect(getProvider(id)).toBe(provider);
  });

  it.each([
    'unknown',
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    'valueOf',
    '',
    'Stripe',
    ' stripe',
  ])('returns undefined for %j', (id) => {
    expect(getProvider(id)).toBeUndefined();
  });
});

describe('PROVIDERS', () => {
  it('has exactly one provider per route id, each knowing its own id', () => {
    expect(Object.keys(PROVIDERS).sort()).toEqual([...PROVIDER_IDS].sort());
    for (const id of PROVIDER_IDS) {
      expect(requireProvider(id).id).toBe(id);
      expect(requireProvider(id).name).not.toBe('');
      expect(requireProvider(id).defaults.claimTtlSeconds).toBeGreaterThan(0);
    }
  });

  it('cannot be changed at run time', () => {
    expect(Object.isFrozen(PROVIDERS)).toBe(true);
  });
});
