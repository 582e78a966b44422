import { describe, expect, it } from 'vitest';
import { EnvSecretSource, parseAccountSecrets, secretsFor } from '../../lambdas/shared/secrets.js';
import { parseSecretSet, parseSecretValue } from '../../lambdas/shared/secrets-manager.js';
import { ConfigError } from '../../lambdas/shared/settings.js';

describe('per-account secrets', () => {
  it('gives an account with its own secrets only those, and any other account the provider-wide ones', () => {
    const set = { secrets: ['wide'], accounts: { 'shop-a.myshopify.com': ['a1', 'a0'] } };
    expect(secretsFor(set, 'shop-a.myshopify.com')).toEqual(['a1', 'a0']);
    expect(secretsFor(set, 'shop-b.myshopify.com')).toEqual(['wide']);
    expect(secretsFor(set, undefined)).toEqual(['wide']);
    // An inherited property name is not an account.
    expect(secretsFor(set, 'constructor')).toEqual(['wide']);
  });

  it('reads the three value forms and refuses anything else with the variable name', () => {
    expect(
      parseAccountSecrets(
        { a: 'x, y', b: ['z'], c: { current: 'n', previous: 'o' } },
        'WEBHOOK_ACCOUNT_SECRETS_SHOPIFY',
      ),
    ).toEqual({ a: ['x', 'y'], b: ['z'], c: ['n', 'o'] });
    expect(() => parseAccountSecrets({ a: 42 }, 'WEBHOOK_ACCOUNT_SECRETS_SHOPIFY')).toThrow(
      /WEBHOOK_ACCOUNT_SECRETS_SHOPIFY\.a/,
    );
    expect(() => parseAccountSecrets({ a: ' , ' }, 'V')).toThrow(ConfigError);
    expect(() => parseAccountSecrets(['a'], 'V')).toThrow(/JSON object/);
  });

  it('reads WEBHOOK_ACCOUNT_SECRETS_<PROVIDER> next to WEBHOOK_SECRET_<PROVIDER>', async () => {
    const source = new EnvSecretSource({
      WEBHOOK_SECRET_GITHUB: 'wide',
      WEBHOOK_ACCOUNT_SECRETS_GITHUB: '{"17273051": "hook-new,hook-old"}',
    });
    expect(await source.getSecrets('github', '17273051')).toEqual(['hook-new', 'hook-old']);
    expect(await source.getSecrets('github', '1')).toEqual(['wide']);
    expect(await source.hasAccountSecrets('github')).toBe(true);
    expect(await source.hasAccountSecrets('stripe')).toBe(false);
    await expect(
      new EnvSecretSource({ WEBHOOK_ACCOUNT_SECRETS_GITHUB: '{' }).getSecrets('github', 'x'),
    ).rejects.toThrow(/WEBHOOK_ACCOUNT_SECRETS_GITHUB is not valid JSON/);
  });

  it('reads an accounts map in a Secrets Manager value, current optional then, placeholders dropped', () => {
    expect(
      parseSecretSet(
        JSON.stringify({
          accounts: {
            'shop-a.myshopify.com': { current: 'a1', previous: 'a0' },
            'shop-b.myshopify.com': { current: 'REPLACE_ME' },
          },
        }),
      ),
    ).toEqual({ secrets: [], accounts: { 'shop-a.myshopify.com': ['a1', 'a0'] } });
    expect(parseSecretSet('{"current":"w","accounts":{"x":"y"}}')).toEqual({
      secrets: ['w'],
      accounts: { x: ['y'] },
    });
    // The older forms read as before.
    expect(parseSecretValue('{"current":"c","previous":"p"}')).toEqual(['c', 'p']);
    expect(parseSecretValue('a,b')).toEqual(['a', 'b']);
    expect(() => parseSecretSet('{"previous":"p"}')).toThrow(/current/);
  });
});
