/** Least privilege: each function's statements, on exactly the resources it uses. */
import type * as iam from 'aws-cdk-lib/aws-iam';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_IDS } from '../../lambdas/providers/types.js';
import {
  arnOf,
  asArray,
  exampleTable,
  type Json,
  type SynthesizedStack,
  statementsOfRole,
  synthesize,
} from './support.js';

describe('webhook IAM', () => {
  let s: SynthesizedStack;
  let receiver: Json[];
  let processor: Json[];
  let ids: Record<'claims' | 'payments' | 'orders' | 'resources' | 'queue' | 'dlq', string>;

  const statementFor = (statements: Json[], actionPrefix: string) =>
    statements.filter((st) =>
      asArray(st.Action as string | string[]).some((a) => a.startsWith(actionPrefix)),
    );

  beforeAll(() => {
    s = synthesize();
    const w = s.stack.webhooks;
    receiver = statementsOfRole(s.template, s.logicalId(w.receiverFunction.role as iam.Role));
    processor = statementsOfRole(s.template, s.logicalId(w.processorFunction.role as iam.Role));
    ids = {
      claims: s.logicalId(w.claimsTable),
      payments: s.logicalId(exampleTable(s, 'payments')),
      orders: s.logicalId(exampleTable(s, 'orders')),
      resources: s.logicalId(exampleTable(s, 'resources')),
      queue: s.logicalId(w.eventQueue),
      dlq: s.logicalId(w.deadLetterQueue),
    };
  });

  it('lets the receiver only PutItem, UpdateItem and GetItem on the claims table', () => {
    expect(statementFor(receiver, 'dynamodb:')).toEqual([
      {
        Effect: 'Allow',
        Action: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem'],
        Resource: arnOf(ids.claims),
      },
    ]);
  });

  it('lets the receiver only SendMessage to the event queue', () => {
    expect(statementFor(receiver, 'sqs:')).toEqual([
      { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: arnOf(ids.queue) },
    ]);
  });

  it('lets the receiver only GetSecretValue on the five provider secrets', () => {
    expect(statementFor(receiver, 'secretsmanager:')).toEqual([
      {
        Effect: 'Allow',
        Action: 'secretsmanager:GetSecretValue',
        Resource: PROVIDER_IDS.map((p) => ({ Ref: s.logicalId(s.stack.webhooks.secrets[p]) })),
      },
    ]);
  });

  it('lets the receiver write logs only to its own log group', () => {
    const fn = s.template.toJSON().Resources[s.logicalId(s.stack.webhooks.receiverFunction)];
    expect(statementFor(receiver, 'logs:')).toEqual([
      {
        Effect: 'Allow',
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: arnOf(fn.Properties.LoggingConfig.LogGroup.Ref),
      },
    ]);
  });

  it('gives the receiver nothing beyond logs, the claims table, the queue, the secrets and claim checks', () => {
    expect(receiver).toHaveLength(5);
  });

  it('lets the processor GetItem, UpdateItem, PutItem and ConditionCheckItem on the claims table', () => {
    expect(
      statementFor(processor, 'dynamodb:').filter((st) => st.Resource && !Array.isArray(st.Resource)),
    ).toEqual([
      {
        Effect: 'Allow',
        Action: [
          'dynamodb:GetItem',
          'dynamodb:UpdateItem',
          'dynamodb:PutItem',
          'dynamodb:ConditionCheckItem',
        ],
        Resource: arnOf(ids.claims),
      },
    ]);
  });

  it('lets the processor GetItem, PutItem, UpdateItem and ConditionCheckItem on the three business tables', () => {
    expect(statementFor(processor, 'dynamodb:').filter((st) => Array.isArray(st.Resource))).toEqual([
      {
        Effect: 'Allow',
        Action: [
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
          'dynamodb:ConditionCheckItem',
        ],
        Resource: [arnOf(ids.payments), arnOf(ids.orders), arnOf(ids.resources)],
      },
    ]);
  });

  it("gives the processor the event source mapping's SQS actions on the event queue, and only sending on the DLQ", () => {
    expect(statementFor(processor, 'sqs:')).toEqual([
      {
        Effect: 'Allow',
        Action: ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
        Resource: arnOf(ids.dlq),
      },
      {
        Effect: 'Allow',
        Action: [
          'sqs:ReceiveMessage',
          'sqs:ChangeMessageVisibility',
          'sqs:GetQueueUrl',
          'sqs:DeleteMessage',
          'sqs:GetQueueAttributes',
        ],
        Resource: arnOf(ids.queue),
      },
    ]);
  });

  it('gives the processor no access to the secrets', () => {
    expect(statementFor(processor, 'secretsmanager:')).toEqual([]);
  });

  it('grants no DynamoDB or SQS action on a wildcard resource anywhere', () => {
    const statements = Object.values(s.template.findResources('AWS::IAM::Policy')).flatMap(
      (policy) => policy.Properties.PolicyDocument.Statement as Json[],
    );
    const dataPlane = statements.filter((st) =>
      asArray(st.Action as string | string[]).some((a) => /^(dynamodb|sqs):/.test(a)),
    );
    expect(dataPlane.length).toBeGreaterThan(0);
    for (const st of dataPlane) {
      expect(JSON.stringify(st.Resource)).not.toContain('*');
      expect(asArray(st.Action as string | string[]).every((a) => !a.includes('*'))).toBe(true);
    }
  });
});
