/** The receiver and processor Lambdas: runtime, sizing, logs and the environment contract. */
import { beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_IDS } from '../../lambdas/providers/types.js';
import { METRIC_NAMESPACE } from '../../lambdas/shared/metric-names.js';
import { SECRET_PLACEHOLDER } from '../../lambdas/shared/secrets-manager.js';
import { PROCESSOR_SERVICE, RECEIVER_SERVICE } from '../../lib/constructs/metrics.js';
import {
  environmentOf,
  exampleTable,
  type Json,
  renderJoin,
  type SynthesizedStack,
  synthesize,
} from './support.js';

describe('webhook Lambdas', () => {
  let s: SynthesizedStack;
  let receiver: string;
  let processor: string;
  let receiverEnv: Json;
  let processorEnv: Json;
  const fn = (id: string) => s.template.toJSON().Resources[id].Properties as Json;

  beforeAll(() => {
    s = synthesize();
    receiver = s.logicalId(s.stack.webhooks.receiverFunction);
    processor = s.logicalId(s.stack.webhooks.processorFunction);
    receiverEnv = environmentOf(s.template, receiver);
    processorEnv = environmentOf(s.template, processor);
  });

  it('runs both functions on Node.js 24', () => {
    expect([fn(receiver).Runtime, fn(processor).Runtime]).toEqual(['nodejs24.x', 'nodejs24.x']);
  });

  it('runs both functions on arm64', () => {
    expect([fn(receiver).Architectures, fn(processor).Architectures]).toEqual([['arm64'], ['arm64']]);
  });

  it('gives the receiver 10 s and 512 MB', () => {
    expect([fn(receiver).Timeout, fn(receiver).MemorySize]).toEqual([10, 512]);
  });

  it('gives the processor 30 s and 512 MB', () => {
    expect([fn(processor).Timeout, fn(processor).MemorySize]).toEqual([30, 512]);
  });

  it.each([
    ['receiver', () => receiver],
    ['processor', () => processor],
  ])('sends the %s logs to its own log group kept for one month', (_name, id) => {
    const logGroup = (fn(id()).LoggingConfig as Json).LogGroup as Json;
    const logGroupId = (logGroup as { Ref: string }).Ref;
    expect(s.template.toJSON().Resources[logGroupId].Properties.RetentionInDays).toBe(30);
  });

  it('uses no deprecated logRetention custom resource', () => {
    s.template.resourceCountIs('Custom::LogRetention', 0);
  });

  it('attaches no managed policy to the function roles', () => {
    for (const role of Object.values(s.template.findResources('AWS::IAM::Role'))) {
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  it('gives the receiver the claims table name and the event queue URL', () => {
    expect(receiverEnv).toMatchObject({
      CLAIMS_TABLE_NAME: { Ref: s.logicalId(s.stack.webhooks.claimsTable) },
      EVENT_QUEUE_URL: { Ref: s.logicalId(s.stack.webhooks.eventQueue) },
    });
  });

  it('sets the receiver lease to 15 s, above its 10 s timeout', () => {
    expect(receiverEnv.RECEIVER_LEASE_SECONDS).toBe('15');
  });

  it('passes PROVIDER_SETTINGS as JSON (empty: the provider modules default)', () => {
    expect(JSON.parse(receiverEnv.PROVIDER_SETTINGS as string)).toEqual({});
  });

  it('names the receiver service and metric namespace for Powertools', () => {
    expect(receiverEnv).toMatchObject({
      POWERTOOLS_SERVICE_NAME: RECEIVER_SERVICE,
      POWERTOOLS_METRICS_NAMESPACE: METRIC_NAMESPACE,
    });
  });

  it('gives the receiver each provider secret by ARN in WEBHOOK_SECRET_ARNS', () => {
    const join = (receiverEnv.WEBHOOK_SECRET_ARNS as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
    // The JSON's quotes are in the literal parts; each ARN is a Ref to the secret.
    const rendered = join[1]
      .map((part) => (typeof part === 'string' ? part : (part as { Ref: string }).Ref))
      .join('');
    expect(JSON.parse(rendered)).toEqual(
      Object.fromEntries(PROVIDER_IDS.map((p) => [p, s.logicalId(s.stack.webhooks.secrets[p])])),
    );
  });

  it('puts no secret value in any environment variable (no WEBHOOK_SECRET_* or WEBHOOK_TOKEN_*)', () => {
    for (const env of [receiverEnv, processorEnv]) {
      const names = Object.keys(env).filter((name) => /^WEBHOOK_(SECRET|TOKEN)_/.test(name));
      expect(names.filter((name) => name !== 'WEBHOOK_SECRET_ARNS')).toEqual([]);
      expect(JSON.stringify(env)).not.toMatch(new RegExp(`whsec_|${SECRET_PLACEHOLDER}`));
    }
  });

  it('gives the processor the claims and business table names', () => {
    expect(processorEnv).toMatchObject({
      CLAIMS_TABLE_NAME: { Ref: s.logicalId(s.stack.webhooks.claimsTable) },
    });
    const ref = (name: string) => `<Ref:${s.logicalId(exampleTable(s, name))}>`;
    expect(JSON.parse(renderJoin(processorEnv.BUSINESS_TABLES))).toEqual({
      payments: ref('payments'),
      orders: ref('orders'),
      resources: ref('resources'),
    });
  });

  it('sets the processing lease to 120 s, above the processor timeout', () => {
    expect(Number(processorEnv.PROCESSING_LEASE_SECONDS)).toBe(120);
    expect(Number(processorEnv.PROCESSING_LEASE_SECONDS)).toBeGreaterThan(fn(processor).Timeout as number);
  });

  it("sets MAX_RECEIVE_COUNT to the event queue's redrive maxReceiveCount", () => {
    const queue = s.template.toJSON().Resources[s.logicalId(s.stack.webhooks.eventQueue)];
    expect(processorEnv.MAX_RECEIVE_COUNT).toBe(String(queue.Properties.RedrivePolicy.maxReceiveCount));
  });

  it("declares the example's effects without URLs by default (the effects are skipped until given one)", () => {
    expect(JSON.parse(processorEnv.EFFECTS as string)).toEqual({
      ledger: { honoursIdempotencyKey: true },
      mailer: { honoursIdempotencyKey: false },
    });
  });

  it('names the processor service and metric namespace for Powertools', () => {
    expect(processorEnv).toMatchObject({
      POWERTOOLS_SERVICE_NAME: PROCESSOR_SERVICE,
      POWERTOOLS_METRICS_NAMESPACE: METRIC_NAMESPACE,
    });
  });

  it('does not set AWS_NODEJS_CONNECTION_REUSE_ENABLED (SDK v3 reuses connections)', () => {
    expect(Object.keys({ ...receiverEnv, ...processorEnv })).not.toContain(
      'AWS_NODEJS_CONNECTION_REUSE_ENABLED',
    );
  });
});
