/** `defineProvider` and `registry`: the defaults a module may leave out, and what a registry refuses. */
import { describe, expect, it } from 'vitest';
import { defineProvider, type ProviderDefinition } from '../../lambdas/providers/define.js';
import {
  BUILT_IN_PROVIDERS,
  PROVIDER_LIST,
  PROVIDERS,
  withProviders,
} from '../../lambdas/providers/index.js';
import { ProviderRegistryError, registry } from '../../lambdas/providers/registry.js';
import { SECRET_ENV_VARS } from '../../lambdas/shared/secrets.js';
import { acmeProvider } from '../fixtures/providers/acme.js';

function definition<const Id extends string>(id: Id, overrides: Partial<ProviderDefinition<Id>> = {}) {
  const { verify, extract, readPayload, dev, docs, reconcile, defaults } = acmeProvider;
  return {
    id,
    name: id,
    defaults,
    defaultAccount: 'default',
    secret: { hint: 'h', devSecret: 'd' },
    verify,
    extract,
    readPayload,
    dev,
    docs,
    reconcile,
    ...overrides,
  };
}

describe('defineProvider', () => {
  it('fills in WEBHOOK_SECRET_<ID>, no headers, the duplicate-ratio alarms on and no sized samples', () => {
    const provider = defineProvider(definition('zeta'));
    expect(provider.secret).toEqual({ hint: 'h', devSecret: 'd', envVar: 'WEBHOOK_SECRET_ZETA' });
    expect(provider.headers).toEqual({ secret: [], forward: [] });
    expect(provider.alarms).toEqual({ duplicateRatioLow: true });
    expect(provider.dev.sizedTypes).toEqual([]);
    expect(Object.isFrozen(provider)).toBe(true);
  });

  it('keeps what the module says', () => {
    const provider = defineProvider(
      definition('zeta', {
        secret: { envVar: 'WEBHOOK_TOKEN_ZETA', hint: 'h', devSecret: 'd' },
        alarms: { duplicateRatioLow: false },
      }),
    );
    expect(provider.secret.envVar).toBe('WEBHOOK_TOKEN_ZETA');
    expect(provider.alarms.duplicateRatioLow).toBe(false);
  });
});

describe('registry', () => {
  it.each(['', 'Acme', 'ac-me', '9acme', 'ac me', '__proto__'])('refuses the provider id %j', (id) => {
    expect(() => registry([defineProvider(definition(id))])).toThrow(ProviderRegistryError);
  });

  it('refuses two providers with one id', () => {
    expect(() => withProviders([defineProvider(definition('stripe'))])).toThrow(
      /stripe is a built-in provider's/,
    );
  });

  it('refuses two providers with one secret variable', () => {
    const clash = defineProvider(
      definition('zeta', { secret: { envVar: 'WEBHOOK_TOKEN_ASAAS', hint: 'h', devSecret: 'd' } }),
    );
    expect(() => withProviders([clash])).toThrow(/asaas and zeta share the variable WEBHOOK_TOKEN_ASAAS/);
  });

  it('lists the providers in registry order, and derives per-provider tables from them', () => {
    const extended = withProviders([acmeProvider]);
    expect(extended.PROVIDER_IDS).toEqual([
      'stripe',
      'github',
      'shopify',
      'asaas',
      'standard',
      'paddle',
      'slack',
      'square',
      'twilio',
      'discord',
      'acme',
    ]);
    expect(extended.perProvider((p) => p.defaultAccount)).toEqual({
      stripe: 'platform',
      github: 'default',
      shopify: 'default',
      asaas: 'default',
      standard: 'default',
      paddle: 'default',
      slack: 'default',
      square: 'default',
      twilio: 'default',
      discord: 'default',
      acme: 'main',
    });
    expect(extended.getProvider('acme')).toBe(acmeProvider);
    expect(extended.getProvider('__proto__')).toBeUndefined();
    expect(Object.isFrozen(extended.PROVIDERS)).toBe(true);
  });

  it("keeps the repository's registry to its own providers", () => {
    expect(PROVIDER_LIST).toEqual([...BUILT_IN_PROVIDERS]);
    expect(PROVIDERS).not.toHaveProperty('acme');
  });

  it('keeps the local secret variables the stack has always read (Asaas sends a token)', () => {
    expect(SECRET_ENV_VARS).toEqual({
      stripe: 'WEBHOOK_SECRET_STRIPE',
      github: 'WEBHOOK_SECRET_GITHUB',
      shopify: 'WEBHOOK_SECRET_SHOPIFY',
      asaas: 'WEBHOOK_TOKEN_ASAAS',
      standard: 'WEBHOOK_SECRET_STANDARD',
      paddle: 'WEBHOOK_SECRET_PADDLE',
      slack: 'WEBHOOK_SECRET_SLACK',
      square: 'WEBHOOK_SECRET_SQUARE',
      twilio: 'WEBHOOK_SECRET_TWILIO',
      discord: 'WEBHOOK_SECRET_DISCORD',
    });
  });

  it('serves a chosen subset of the built-in providers, in registry order, and refuses an unknown one', () => {
    expect(withProviders([acmeProvider], ['square', 'stripe']).PROVIDER_IDS).toEqual([
      'stripe',
      'square',
      'acme',
    ]);
    expect(() => withProviders([], ['stripe', 'paypal'])).toThrow(/"paypal" is not a built-in provider/);
  });
});
