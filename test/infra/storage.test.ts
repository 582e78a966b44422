/** Tables, queues, the event source mapping and the secrets. */
import { beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_IDS } from '../../lambdas/providers/types.js';
import { SECRET_PLACEHOLDER } from '../../lambdas/shared/secrets-manager.js';
import { CLAIMS_TABLE_SCHEMA, claimsTableDefinition } from '../../lambdas/store/schema.js';
import { exampleTable, type Json, type SynthesizedStack, synthesize } from './support.js';

describe('webhook storage and queues', () => {
  let s: SynthesizedStack;
  let tables: Record<string, string>;
  const resource = (id: string) => s.template.toJSON().Resources[id] as Json & { Properties: Json };

  beforeAll(() => {
    s = synthesize();
    const w = s.stack.webhooks;
    tables = {
      claims: s.logicalId(w.claimsTable),
      payments: s.logicalId(exampleTable(s, 'payments')),
      orders: s.logicalId(exampleTable(s, 'orders')),
      resources: s.logicalId(exampleTable(s, 'resources')),
    };
  });

  it('states SQS’s 1 MiB message size on the event queue and its DLQ', () => {
    for (const queue of [s.stack.webhooks.eventQueue, s.stack.webhooks.deadLetterQueue]) {
      expect(resource(s.logicalId(queue)).Properties.MaximumMessageSize).toBe(1_048_576);
    }
  });

  it('sets the claims table TTL attribute to expiresAt', () => {
    expect(resource(tables.claims as string).Properties.TimeToLiveSpecification).toEqual({
      AttributeName: CLAIMS_TABLE_SCHEMA.ttlAttribute,
      Enabled: true,
    });
    expect(CLAIMS_TABLE_SCHEMA.ttlAttribute).toBe('expiresAt');
  });

  it.each(['claims', 'payments', 'orders', 'resources'])('keys the %s table by pk (string)', (name) => {
    const properties = resource(tables[name] as string).Properties;
    expect(properties.KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }]);
    expect(properties.AttributeDefinitions).toContainEqual({ AttributeName: 'pk', AttributeType: 'S' });
  });

  it('gives the claims table the keys-only index of unfinished claims that the sweeper reads', () => {
    const properties = resource(tables.claims as string).Properties;
    expect(properties.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: 'unfinished-claims',
        KeySchema: [
          { AttributeName: 'sweepShard', KeyType: 'HASH' },
          { AttributeName: 'sweepAt', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ]);
    // The tables the tests and the benchmark create are this one.
    const definition = claimsTableDefinition();
    expect(properties.GlobalSecondaryIndexes).toEqual(definition.GlobalSecondaryIndexes);
    expect(new Set(properties.AttributeDefinitions as unknown[])).toEqual(
      new Set(definition.AttributeDefinitions),
    );
  });

  it.each(['claims', 'payments', 'orders', 'resources'])(
    'turns on point-in-time recovery for the %s table',
    (name) => {
      expect(resource(tables[name] as string).Properties.PointInTimeRecoverySpecification).toEqual({
        PointInTimeRecoveryEnabled: true,
      });
    },
  );

  it.each(['claims', 'payments', 'orders', 'resources'])('bills the %s table on demand', (name) => {
    expect(resource(tables[name] as string).Properties.BillingMode).toBe('PAY_PER_REQUEST');
  });

  it.each(['claims', 'payments', 'orders', 'resources'])(
    'retains the %s table when it leaves the stack',
    (name) => {
      expect(resource(tables[name] as string)).toMatchObject({
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
      });
    },
  );

  it('sends messages received 5 times to the dead-letter queue', () => {
    s.template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [s.logicalId(s.stack.webhooks.deadLetterQueue), 'Arn'] },
        maxReceiveCount: 5,
      },
    });
  });

  it('keeps dead-lettered messages for 14 days', () => {
    expect(resource(s.logicalId(s.stack.webhooks.deadLetterQueue)).Properties.MessageRetentionPeriod).toBe(
      14 * 24 * 3600,
    );
  });

  it('sets the event queue visibility timeout to at least 6 times the processor timeout', () => {
    const visibility = resource(s.logicalId(s.stack.webhooks.eventQueue)).Properties
      .VisibilityTimeout as number;
    const timeout = resource(s.logicalId(s.stack.webhooks.processorFunction)).Properties.Timeout as number;
    expect(visibility).toBeGreaterThanOrEqual(6 * timeout);
  });

  it.each([
    ['event queue', () => s.stack.webhooks.eventQueue],
    ['dead-letter queue', () => s.stack.webhooks.deadLetterQueue],
  ])('encrypts the %s with SQS-managed keys', (_name, queue) => {
    expect(resource(s.logicalId(queue())).Properties.SqsManagedSseEnabled).toBe(true);
  });

  it.each([
    ['event queue', () => s.stack.webhooks.eventQueue],
    ['dead-letter queue', () => s.stack.webhooks.deadLetterQueue],
  ])('refuses non-TLS requests to the %s', (_name, queue) => {
    s.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: s.logicalId(queue()) }],
      PolicyDocument: {
        Statement: [
          {
            Effect: 'Deny',
            Action: 'sqs:*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            Principal: { AWS: '*' },
          },
        ],
      },
    });
  });

  it('reports batch item failures from the processor', () => {
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [s.logicalId(s.stack.webhooks.eventQueue), 'Arn'] },
      FunctionName: { Ref: s.logicalId(s.stack.webhooks.processorFunction) },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('polls batches of 10 messages gathered for up to 1 s', () => {
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 10,
      MaximumBatchingWindowInSeconds: 1,
    });
  });

  it('creates one secret per provider', () => {
    s.template.resourceCountIs('AWS::SecretsManager::Secret', PROVIDER_IDS.length);
  });

  it.each(PROVIDER_IDS)(
    'creates the %s secret holding the placeholder {"current":"REPLACE_ME"}',
    (provider) => {
      const secret = resource(s.logicalId(s.stack.webhooks.secrets[provider])).Properties;
      expect(JSON.parse(secret.SecretString as string)).toEqual({ current: SECRET_PLACEHOLDER });
    },
  );

  it.each(PROVIDER_IDS)('tells the operator in its description what to put in the %s secret', (provider) => {
    const secret = resource(s.logicalId(s.stack.webhooks.secrets[provider])).Properties;
    expect(secret.Description).toMatch(/"current"/);
    expect(secret.Description).toMatch(/"previous"/);
  });
});
