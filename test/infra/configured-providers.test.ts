/**
 * The construct's `hmacProviders` prop: each configured provider gets what a built-in one gets
 * (route, secret, outputs, alarms, dashboard lines, the receiver's secret ARN and policy), the
 * configs reach the receiver and the processor as `WEBHOOK_HMAC_PROVIDERS`, and what would only
 * fail at run time fails the synth instead.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILT_IN_PROVIDERS } from '../../lambdas/providers/built-in.js';
import {
  HMAC_PROVIDERS_MAX_BYTES,
  readHmacProviderConfigs,
  writeHmacProviderConfigs,
} from '../../lambdas/providers/configured.js';
import type { HmacProviderConfig } from '../../lambdas/providers/hmac.js';
import { IdempotentWebhookReceiverPropsError } from '../../lib/idempotent-webhook-receiver.js';
import { REPO_ROOT } from '../helpers/local-stack-process.js';
import {
  buildReceiver,
  environmentOf,
  type SynthesizedStack,
  statementsOfRole,
  synthesize,
} from './support.js';

const example = (name: string): HmacProviderConfig =>
  JSON.parse(
    readFileSync(join(REPO_ROOT, 'examples/providers', `${name}.json`), 'utf8'),
  ) as HmacProviderConfig;
const ONFIDO = example('onfido');
const PARTNER = example('partner');

describe('a stack with two providers by configuration', () => {
  let s: SynthesizedStack;
  beforeAll(() => {
    s = synthesize({
      bare: true,
      props: { hmacProviders: [ONFIDO, PARTNER], providers: { onfido: { claimTtl: Duration.days(10) } } },
    });
  });

  it('routes POST /webhooks/<id> for each, after the built-in routes', () => {
    const keys = Object.values(s.template.findResources('AWS::ApiGatewayV2::Route')).map(
      (route) => route.Properties.RouteKey,
    );
    expect(keys).toEqual(expect.arrayContaining(['POST /webhooks/onfido', 'POST /webhooks/partner']));
    expect(keys).toHaveLength(BUILT_IN_PROVIDERS.length + 2);
    expect(s.stack.webhooks.providerIds.slice(-2)).toEqual(['onfido', 'partner']);
  });

  it('outputs <Id>WebhookUrl and <Id>SecretArn, and describes each secret with its hint', () => {
    const outputs = s.template.toJSON().Outputs as Record<string, unknown>;
    expect(Object.keys(outputs)).toEqual(
      expect.arrayContaining([
        'OnfidoWebhookUrl',
        'OnfidoSecretArn',
        'PartnerWebhookUrl',
        'PartnerSecretArn',
      ]),
    );
    const secret = s.template.toJSON().Resources[s.logicalId(s.stack.webhooks.secrets.onfido)];
    expect(secret.Properties.Description).toContain(
      "the webhook's token, shown when the webhook is registered",
    );
  });

  it('gives the receiver their secrets (ARN map and GetSecretValue) and both functions the configs', () => {
    const receiver = s.logicalId(s.stack.webhooks.receiverFunction);
    const env = environmentOf(s.template, receiver);
    expect(JSON.stringify(env.WEBHOOK_SECRET_ARNS)).toContain('\\"partner\\":\\"');
    const written = readHmacProviderConfigs(env.WEBHOOK_HMAC_PROVIDERS as string);
    expect(written.map((config) => config.id)).toEqual(['onfido', 'partner']);
    // What only the stack, the docs and `npm run send` read stays out of the 4 KB environment.
    expect(env.WEBHOOK_HMAC_PROVIDERS).not.toMatch(/retryWindow|hint|sample|devSecret/);
    const processor = environmentOf(s.template, s.logicalId(s.stack.webhooks.processorFunction));
    expect(processor.WEBHOOK_HMAC_PROVIDERS).toBe(env.WEBHOOK_HMAC_PROVIDERS);
    const role = s.template.toJSON().Resources[receiver].Properties.Role['Fn::GetAtt'][0] as string;
    const reads = statementsOfRole(s.template, role).find(
      (st) => st.Action === 'secretsmanager:GetSecretValue',
    );
    expect(reads?.Resource).toContainEqual({ Ref: s.logicalId(s.stack.webhooks.secrets.partner) });
  });

  it('applies per-provider options to a configured provider by its id', () => {
    const env = environmentOf(s.template, s.logicalId(s.stack.webhooks.receiverFunction));
    expect(JSON.parse(env.PROVIDER_SETTINGS as string)).toEqual({ onfido: { claimTtlSeconds: 864_000 } });
  });

  it('alarms on each and draws it on the dashboard', () => {
    expect(s.stack.webhooks.alarms['DuplicateRatioHigh-onfido']).toBeDefined();
    expect(s.stack.webhooks.alarms['InvalidSignatureRatio-partner']).toBeDefined();
    const body = JSON.stringify(
      Object.values(s.template.findResources('AWS::CloudWatch::Dashboard'))[0]?.Properties.DashboardBody,
    );
    expect(body).toContain('\\"label\\":\\"onfido\\"');
  });
});

describe('configured providers that would fail at run time fail the synth', () => {
  it.each([
    [
      { hmacProviders: [{ ...ONFIDO, signature: { ...ONFIDO.signature, algorithm: 'md5' } }] },
      /hmacProviders: HMAC provider "onfido": signature\.algorithm/,
    ],
    [
      { hmacProviders: [{ ...PARTNER, id: 'stripe' }] },
      /hmacProviders: provider id stripe is a built-in provider's/,
    ],
    [{ hmacProviders: [ONFIDO, ONFIDO] }, /hmacProviders: provider id onfido is registered twice/],
    [
      { hmacProviders: [{ ...PARTNER, account: { header: 'X-Account' } }] },
      /account must come from the signed body/,
    ],
    [
      {
        hmacProviders: Array.from({ length: 3 }, (_, i) => ({
          ...PARTNER,
          id: `partner${i}`,
          name: 'P'.repeat(400),
        })),
      },
      /the configs take \d+ bytes as JSON, over the 2048 bytes/,
    ],
    [
      { providers: { onfido: { claimTtl: Duration.days(1) } } },
      /providers: unknown provider "onfido": the providers are stripe, github/,
    ],
    [{ hmacProviders: [PARTNER], providers: { partnr: {} } }, /providers: unknown provider "partnr"/],
  ])('refuses %#', (props, message) => {
    expect(() => buildReceiver(props as never)).toThrow(IdempotentWebhookReceiverPropsError);
    expect(() => buildReceiver(props as never)).toThrow(message);
  });
});

describe("a function's whole environment", () => {
  it('fails the synth past Lambda 4 KB, naming the largest variables', () => {
    expect(() => buildReceiver({ processorEnvironment: { MY_SETTINGS: 'x'.repeat(4_000) } })).toThrow(
      /Processing\/Processor: its environment takes about \d+ bytes .* over Lambda's 4096; the largest: MY_SETTINGS 4017/,
    );
  });

  it('leaves room in the receiver for hmacProviders at their 2 KB limit beside five built-in providers', () => {
    // Four configs, their names grown until the written JSON is as large as allowed.
    const configs = (nameLength: number) =>
      Array.from({ length: 4 }, (_, i) => ({ ...PARTNER, id: `partner${i}`, name: 'P'.repeat(nameLength) }));
    const fits = (nameLength: number) => {
      try {
        return writeHmacProviderConfigs(configs(nameLength)) !== undefined;
      } catch {
        return false;
      }
    };
    let nameLength = 1;
    while (fits(nameLength + 1)) nameLength++;
    expect((writeHmacProviderConfigs(configs(nameLength)) ?? '').length).toBeGreaterThan(
      HMAC_PROVIDERS_MAX_BYTES - 4,
    );
    const five = ['stripe', 'github', 'shopify', 'asaas', 'standard'] as const;
    expect(() => buildReceiver({ hmacProviders: configs(nameLength), builtInProviders: five })).not.toThrow();
    // Beside every built-in provider they do not fit, and the synth says what takes the room.
    expect(() => buildReceiver({ hmacProviders: configs(nameLength) })).toThrow(
      /Ingest\/Receiver: its environment takes about \d+ bytes .* over Lambda's 4096; the largest: WEBHOOK_HMAC_PROVIDERS \d+, WEBHOOK_SECRET_ARNS/,
    );
  });
});
