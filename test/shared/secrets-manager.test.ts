/**
 * The Secrets Manager secret source over the real wire: a loopback HTTP server that speaks Secrets
 * Manager's JSON protocol (`X-Amz-Target: secretsmanager.GetSecretValue`), the SDK client pointed at it.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { receiveDelivery } from '../../lambdas/receiver/core.js';
import { loadReceiverSettings } from '../../lambdas/receiver/settings.js';
import { EnvSecretSource } from '../../lambdas/shared/secrets.js';
import {
  type SecretReadError,
  SecretsManagerSecretSource,
  type SecretsManagerSecretSourceOptions,
  secretSourceFromEnvironment,
} from '../../lambdas/shared/secrets-manager.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/emulators.js';
import { stubLocalAwsEnvironment } from '../helpers/aws.js';
import { silentServer } from '../helpers/net.js';
import { stripeHeaders } from '../helpers/signing.js';

const STRIPE_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:webhooks/stripe-AbCdEf';
const GITHUB_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:webhooks/github-GhIjKl';

type Reply = { status: number; body: Record<string, unknown> };

/** A fake Secrets Manager: secret values by id, and every request it received. */
class FakeSecretsManager {
  readonly values = new Map<string, string>();
  readonly requests: { target: string | undefined; secretId: unknown }[] = [];
  /** When set, answers every request with this (e.g. a 500) instead of the stored value. */
  failure: Reply | undefined;
  private server: Server | undefined;
  endpoint = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      void this.handle(req).then(({ status, body }) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify(body));
      });
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.endpoint = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.close();
    if (this.server) await once(this.server, 'close');
  }

  count(secretId: string): number {
    return this.requests.filter((r) => r.secretId === secretId).length;
  }

  private async handle(req: IncomingMessage): Promise<Reply> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { SecretId?: unknown };
    const target = req.headers['x-amz-target'] as string | undefined;
    this.requests.push({ target, secretId: input.SecretId });
    if (this.failure) return this.failure;
    if (target !== 'secretsmanager.GetSecretValue') {
      return { status: 400, body: { __type: 'InvalidRequestException', message: `unexpected ${target}` } };
    }
    const value = typeof input.SecretId === 'string' ? this.values.get(input.SecretId) : undefined;
    if (value === undefined) {
      return {
        status: 400,
        body: {
          __type: 'ResourceNotFoundException',
          message: "Secrets Manager can't find the specified secret.",
        },
      };
    }
    return {
      status: 200,
      body: {
        ARN: input.SecretId,
        Name: String(input.SecretId).split(':').at(-1),
        SecretString: value,
        VersionId: 'v1',
        VersionStages: ['AWSCURRENT'],
        CreatedDate: 1_790_000_000,
      },
    };
  }
}

describe('SecretsManagerSecretSource', () => {
  const sm = new FakeSecretsManager();
  let now: number;
  let errors: SecretReadError[];

  beforeAll(() => sm.start());
  afterAll(() => sm.stop());
  beforeEach(() => {
    sm.values.clear();
    sm.requests.length = 0;
    sm.failure = undefined;
    now = 1_800_000_000_000;
    errors = [];
  });

  const client = (endpoint = sm.endpoint) =>
    new SecretsManagerClient({
      endpoint,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
      maxAttempts: 1,
    });

  const source = (options: Partial<SecretsManagerSecretSourceOptions> = {}) =>
    new SecretsManagerSecretSource({
      secretArns: { stripe: STRIPE_ARN, github: GITHUB_ARN },
      client: client(),
      maxAgeSeconds: 300,
      errorRetrySeconds: 10,
      clock: () => now,
      onError: (error) => errors.push(error),
      ...options,
    });

  it('sends GetSecretValue for the provider secret ARN', async () => {
    sm.values.set(STRIPE_ARN, '{"current":"whsec_new"}');
    await source().getSecrets('stripe');
    expect(sm.requests).toEqual([{ target: 'secretsmanager.GetSecretValue', secretId: STRIPE_ARN }]);
  });

  it('accepts current then previous from a JSON value during a rotation', async () => {
    sm.values.set(STRIPE_ARN, '{"current":"whsec_new","previous":"whsec_old"}');
    expect(await source().getSecrets('stripe')).toEqual(['whsec_new', 'whsec_old']);
  });

  it('accepts a JSON value with only current', async () => {
    sm.values.set(STRIPE_ARN, '{"current":"whsec_only"}');
    expect(await source().getSecrets('stripe')).toEqual(['whsec_only']);
  });

  it('takes JSON values as-is, commas included', async () => {
    sm.values.set(GITHUB_ARN, '{"current":"a,b"}');
    expect(await source().getSecrets('github')).toEqual(['a,b']);
  });

  it('reads a plain string value as a comma-separated list', async () => {
    sm.values.set(STRIPE_ARN, ' whsec_new , whsec_old ,');
    expect(await source().getSecrets('stripe')).toEqual(['whsec_new', 'whsec_old']);
  });

  it('does not ask Secrets Manager again within maxAge', async () => {
    sm.values.set(STRIPE_ARN, '{"current":"whsec_new"}');
    const secrets = source();
    await secrets.getSecrets('stripe');
    now += 299_000;
    expect(await secrets.getSecrets('stripe')).toEqual(['whsec_new']);
    expect(sm.count(STRIPE_ARN)).toBe(1);
  });

  it('reads the secret again once maxAge has passed', async () => {
    sm.values.set(STRIPE_ARN, '{"current":"whsec_old"}');
    const secrets = source();
    await secrets.getSecrets('stripe');
    sm.values.set(STRIPE_ARN, '{"current":"whsec_new","previous":"whsec_old"}');
    now += 300_001;
    expect(await secrets.getSecrets('stripe')).toEqual(['whsec_new', 'whsec_old']);
    expect(sm.count(STRIPE_ARN)).toBe(2);
  });

  it('caches each provider separately', async () => {
    sm.values.set(STRIPE_ARN, 'whsec_s');
    sm.values.set(GITHUB_ARN, 'gh');
    const secrets = source();
    expect(await secrets.getSecrets('stripe')).toEqual(['whsec_s']);
    expect(await secrets.getSecrets('github')).toEqual(['gh']);
    expect(sm.requests.map((r) => r.secretId)).toEqual([STRIPE_ARN, GITHUB_ARN]);
  });

  it('shares one request between concurrent reads of a provider', async () => {
    sm.values.set(STRIPE_ARN, 'whsec_s');
    const secrets = source();
    const results = await Promise.all([1, 2, 3, 4].map(() => secrets.getSecrets('stripe')));
    expect(results).toEqual([['whsec_s'], ['whsec_s'], ['whsec_s'], ['whsec_s']]);
    expect(sm.count(STRIPE_ARN)).toBe(1);
  });

  it('returns no secrets, without a request, for a provider with no secret ARN', async () => {
    expect(await source().getSecrets('asaas')).toEqual([]);
    expect(sm.requests).toEqual([]);
  });

  it('never accepts the deploy-time placeholder', async () => {
    sm.values.set(STRIPE_ARN, '{"current":"REPLACE_ME"}');
    expect(await source().getSecrets('stripe')).toEqual([]);
  });

  it('looks again after errorRetrySeconds while the secret is still the placeholder', async () => {
    sm.values.set(STRIPE_ARN, '{"current":"REPLACE_ME"}');
    const secrets = source();
    await secrets.getSecrets('stripe');
    sm.values.set(STRIPE_ARN, '{"current":"whsec_real"}');
    now += 10_001;
    expect(await secrets.getSecrets('stripe')).toEqual(['whsec_real']);
  });

  it('returns no secrets and reports the error when the secret does not exist', async () => {
    expect(await source().getSecrets('stripe')).toEqual([]);
    expect(errors).toEqual([
      expect.objectContaining({
        provider: 'stripe',
        secretArn: STRIPE_ARN,
        errorName: 'ResourceNotFoundException',
        servingLastKnownValue: false,
      }),
    ]);
  });

  it('returns no secrets and reports the error for JSON that is not {current, previous}', async () => {
    sm.values.set(STRIPE_ARN, '{"current":42}');
    expect(await source().getSecrets('stripe')).toEqual([]);
    expect(errors.map((e) => e.errorName)).toEqual(['InvalidSecretValue']);
  });

  it('returns no secrets when Secrets Manager cannot be reached', async () => {
    const unreachable = source({ client: client('http://127.0.0.1:9') });
    expect(await unreachable.getSecrets('stripe')).toEqual([]);
    expect(errors).toHaveLength(1);
  });

  it('keeps serving the last value read when a refresh fails', async () => {
    sm.values.set(STRIPE_ARN, '{"current":"whsec_s"}');
    const secrets = source();
    await secrets.getSecrets('stripe');
    sm.failure = { status: 500, body: { __type: 'InternalServiceError', message: 'boom' } };
    now += 300_001;
    expect(await secrets.getSecrets('stripe')).toEqual(['whsec_s']);
    expect(errors).toEqual([expect.objectContaining({ servingLastKnownValue: true })]);
  });

  it('waits errorRetrySeconds after a failed read before asking again', async () => {
    sm.failure = { status: 500, body: { __type: 'InternalServiceError', message: 'boom' } };
    const secrets = source();
    await secrets.getSecrets('stripe');
    now += 9_000;
    await secrets.getSecrets('stripe');
    expect(sm.count(STRIPE_ARN)).toBe(1);
    now += 1_001;
    await secrets.getSecrets('stripe');
    expect(sm.count(STRIPE_ARN)).toBe(2);
  });

  it('stops accepting the last value read once the secret is deleted', async () => {
    sm.values.set(STRIPE_ARN, '{"current":"whsec_s"}');
    const secrets = source();
    await secrets.getSecrets('stripe');
    sm.values.delete(STRIPE_ARN);
    now += 300_001;
    expect(await secrets.getSecrets('stripe')).toEqual([]);
  });

  it('makes the receiver answer 500 not_configured, without touching the store, when the secret is missing', async () => {
    const untouched = () => {
      throw new Error('the store and queue must not be used');
    };
    const body = JSON.stringify({ id: 'evt_1', type: 'customer.created', data: { object: { id: 'cus_1' } } });
    const result = await receiveDelivery(
      { providerId: 'stripe', method: 'POST', headers: stripeHeaders(body), body, isBase64Encoded: false },
      {
        settings: loadReceiverSettings({ CLAIMS_TABLE_NAME: 'claims', EVENT_QUEUE_URL: 'queue' }),
        store: new Proxy({}, { get: untouched }) as never,
        queue: new Proxy({}, { get: untouched }) as never,
        secrets: source(),
        log: { warn: () => {}, error: () => {} },
      },
    );
    expect(result).toMatchObject({ statusCode: 500, outcome: 'not_configured' });
  });
});

describe('secretSourceFromEnvironment', () => {
  const sm = new FakeSecretsManager();
  beforeAll(() => sm.start());
  afterAll(() => sm.stop());

  it('reads the secrets with the default client (region, credentials, endpoint from the environment)', async () => {
    sm.values.set(STRIPE_ARN, '{"current":"whsec_wired","previous":"whsec_old"}');
    stubLocalAwsEnvironment({ SECRETS_MANAGER: sm.endpoint });
    try {
      const source = secretSourceFromEnvironment({
        WEBHOOK_SECRET_ARNS: JSON.stringify({ stripe: STRIPE_ARN }),
      });
      expect(await source.getSecrets('stripe')).toEqual(['whsec_wired', 'whsec_old']);
      expect(sm.requests).toEqual([{ target: 'secretsmanager.GetSecretValue', secretId: STRIPE_ARN }]);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('gives up on a Secrets Manager that never answers: 2 tries of 2 s, then no secrets (the receiver answers 500)', async () => {
    const silent = await silentServer();
    stubLocalAwsEnvironment({ SECRETS_MANAGER: silent.endpoint });
    const errors: SecretReadError[] = [];
    try {
      const source = new SecretsManagerSecretSource({
        secretArns: { stripe: STRIPE_ARN },
        onError: (error) => errors.push(error),
      });
      const started = Date.now();
      expect(await source.getSecrets('stripe')).toEqual([]);
      expect(Date.now() - started).toBeLessThan(6_000);
      expect(silent.requests()).toBe(2);
      expect(errors).toEqual([
        expect.objectContaining({ message: expect.stringContaining('2000 ms requestTimeout') }),
      ]);
    } finally {
      await silent.close();
      vi.unstubAllEnvs();
    }
  }, 15_000);

  it('reads Secrets Manager when WEBHOOK_SECRET_ARNS is set', () => {
    const source = secretSourceFromEnvironment({
      WEBHOOK_SECRET_ARNS: JSON.stringify({ stripe: STRIPE_ARN }),
      AWS_REGION: 'us-east-1',
    });
    expect(source).toBeInstanceOf(SecretsManagerSecretSource);
  });

  it('reads the WEBHOOK_SECRET_* variables when WEBHOOK_SECRET_ARNS is absent', async () => {
    const source = secretSourceFromEnvironment({ WEBHOOK_SECRET_STRIPE: 'whsec_env' });
    expect(source).toBeInstanceOf(EnvSecretSource);
    expect(await source.getSecrets('stripe')).toEqual(['whsec_env']);
  });

  it('fails naming the variable when WEBHOOK_SECRET_ARNS is not JSON', () => {
    expect(() => secretSourceFromEnvironment({ WEBHOOK_SECRET_ARNS: 'arn:aws:...' })).toThrow(
      /WEBHOOK_SECRET_ARNS is not valid JSON/,
    );
  });

  it('fails naming the provider when WEBHOOK_SECRET_ARNS names an unknown one', () => {
    expect(() => secretSourceFromEnvironment({ WEBHOOK_SECRET_ARNS: '{"paypal":"arn"}' })).toThrow(
      /unknown provider "paypal"/,
    );
  });
});
