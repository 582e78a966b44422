/**
 * Each provider module states what its API lets a reconcile job do about events it could not
 * deliver (docs/rules.md, "Reconcile: what each provider's API allows"), one home per fact.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hmacProvider } from '../../lambdas/providers/hmac.js';
import { BUILT_IN_PROVIDERS } from '../../lambdas/providers/index.js';

const kinds = Object.fromEntries(
  BUILT_IN_PROVIDERS.map((provider) => [provider.id, provider.reconcile.kind]),
);

describe('reconcile capabilities', () => {
  it('say which providers can list and redeliver, list only, show a paused queue, or nothing', () => {
    expect(kinds).toEqual({
      github: 'list-and-redeliver',
      paddle: 'list-and-redeliver',
      stripe: 'list-only',
      square: 'list-only',
      asaas: 'queue-state',
      shopify: 'none',
      standard: 'none',
      slack: 'none',
      twilio: 'none',
      discord: 'none',
    });
  });

  it.each(BUILT_IN_PROVIDERS.filter((provider) => provider.reconcile.kind !== 'none'))(
    "names the $id API's retention and the pages each fact comes from",
    ({ reconcile }) => {
      if (reconcile.kind === 'none') throw new Error('filtered out');
      expect(reconcile.retentionSeconds).toBeGreaterThanOrEqual(86_400);
      for (const url of reconcile.source.split('; ')) expect(url).toMatch(/^https:\/\/[a-z.]+\.(com|io)\//);
    },
  );

  it('keeps what each provider documents: 3 days of GitHub deliveries, 90 of Paddle notifications, 30 of Stripe events, 28 of Square events, 14 of an interrupted Asaas queue', () => {
    const days = (id: string) => {
      const capability = BUILT_IN_PROVIDERS.find((provider) => provider.id === id)?.reconcile;
      return capability && capability.kind !== 'none' ? capability.retentionSeconds / 86_400 : undefined;
    };
    expect(['github', 'paddle', 'stripe', 'square', 'asaas'].map(days)).toEqual([3, 90, 30, 28, 14]);
  });

  it('knows no API for a provider by configuration', () => {
    const partner = hmacProvider(
      JSON.parse(readFileSync(new URL('../../examples/providers/partner.json', import.meta.url), 'utf8')),
    );
    expect(partner.reconcile).toEqual({
      kind: 'none',
      why: 'a provider by configuration: no API is known for it',
    });
  });
});
