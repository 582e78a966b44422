/**
 * The stack for a registry with one more provider (Acme, test/fixtures/providers/acme.ts, added by
 * the one registry line below): its route, secret, outputs, alarms and the receiver's secret ARN
 * map all appear, with nothing but the provider's module to say so.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { ProviderId } from '../../lambdas/providers/types.js';
import { environmentOf, type SynthesizedStack, synthesize } from './support.js';

// The one registry line: the repository's providers plus Acme.
vi.mock('../../lambdas/providers/built-in.js', async (original) => {
  const { BUILT_IN_PROVIDERS } = await original<typeof import('../../lambdas/providers/built-in.js')>();
  const { acmeProvider } = await import('../fixtures/providers/acme.js');
  return { BUILT_IN_PROVIDERS: [...BUILT_IN_PROVIDERS, acmeProvider] };
});

const ACME = 'acme' as ProviderId;

describe('a stack whose registry has an extra provider', () => {
  let s: SynthesizedStack;
  beforeAll(() => {
    s = synthesize();
  });

  it('routes POST /webhooks/acme to the receiver, next to the built-in routes', async () => {
    const keys = Object.values(s.template.findResources('AWS::ApiGatewayV2::Route')).map(
      (route) => route.Properties.RouteKey,
    );
    expect(keys).toContain('POST /webhooks/acme');
    expect(keys).toContain('POST /webhooks/stripe');
    const { BUILT_IN_PROVIDERS } = await import('../../lambdas/providers/built-in.js');
    expect(keys).toHaveLength(BUILT_IN_PROVIDERS.length);
  });

  it("creates Acme's secret, described with the module's hint", () => {
    s.template.hasResourceProperties('AWS::SecretsManager::Secret', {
      Description: Match.stringLikeRegexp('^Acme webhook signing secret .*the Acme endpoint secret\\.'),
    });
    expect(s.stack.webhooks.secrets[ACME]).toBeDefined();
  });

  it('outputs AcmeWebhookUrl and AcmeSecretArn', () => {
    const outputs = s.template.toJSON().Outputs as Record<string, unknown>;
    expect(Object.keys(outputs)).toEqual(expect.arrayContaining(['AcmeWebhookUrl', 'AcmeSecretArn']));
  });

  it("gives the receiver Acme's secret ARN", () => {
    const receiver = s.logicalId(s.stack.webhooks.receiverFunction);
    const env = environmentOf(s.template, receiver);
    expect(JSON.stringify(env.WEBHOOK_SECRET_ARNS)).toContain('\\"acme\\":\\"');
  });

  it('alarms on Acme like any provider that retries (its module leaves the low duplicate-ratio alarm on)', () => {
    expect(s.stack.webhooks.alarms['DuplicateRatioHigh-acme']).toBeDefined();
    expect(s.stack.webhooks.alarms['DuplicateRatioLow-acme']).toBeDefined();
    expect(s.stack.webhooks.alarms['InvalidSignatureRatio-acme']).toBeDefined();
  });
});
