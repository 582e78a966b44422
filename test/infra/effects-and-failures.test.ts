/**
 * Effect adapters' headers (static ones written as they are, secrets by ARN only and granted to the
 * processor) and permanent statuses; the processor's own way to the DLQ; the synth-time checks of
 * headers, statuses and business tables' keys; the UnhandledEvents alarm of a processor of your own.
 */
import { App, type CfnElement, SecretValue, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_PROCESSOR_ENTRY } from '../../examples/payments/stack.js';
import { METRIC_NAMESPACE, PROCESSOR_SERVICE } from '../../lambdas/shared/metric-names.js';
import {
  IdempotentWebhookReceiver,
  type IdempotentWebhookReceiverProps,
  IdempotentWebhookReceiverPropsError,
} from '../../lib/idempotent-webhook-receiver.js';
import { EffectHeader } from '../../lib/index.js';
import {
  arnOf,
  asArray,
  buildReceiver,
  environmentOf,
  type Json,
  renderJoin,
  statementsOfRole,
} from './support.js';

interface Receiver {
  readonly stack: Stack;
  readonly webhooks: IdempotentWebhookReceiver;
  readonly template: Template;
  logicalId(construct: IConstruct): string;
}

/** The construct in a stack of its own, with `props` (given the stack, for its secrets and tables). */
function receiver(props: (stack: Stack) => IdempotentWebhookReceiverProps = () => ({})): Receiver {
  const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Hooks');
  const webhooks = new IdempotentWebhookReceiver(stack, 'Webhooks', props(stack));
  return {
    stack,
    webhooks,
    template: Template.fromStack(stack),
    logicalId: (construct) =>
      stack.resolve(((construct.node.defaultChild ?? construct) as CfnElement).logicalId) as string,
  };
}

const statementsWith = (statements: Json[], action: string) =>
  statements.filter((st) => asArray(st.Action as string | string[]).includes(action));

describe('effect headers and permanent statuses', () => {
  let secret!: secretsmanager.Secret;
  const r = receiver((stack) => {
    // A secret whose value the template holds (as its own SecretString): the processor's must not.
    secret = new secretsmanager.Secret(stack, 'CrmToken', {
      secretStringValue: SecretValue.unsafePlainText('{"token":"do-not-leak-123"}'),
    });
    return {
      effects: {
        crm: {
          url: 'https://crm.example.com/hooks',
          headers: {
            authorization: EffectHeader.fromSecret(secret, { prefix: 'Bearer ', jsonField: 'token' }),
            'X-Api-Version': '2024-06-01',
            'X-Tenant': EffectHeader.plain('acme'),
          },
          permanentStatuses: [400, 422],
        },
      },
    };
  });
  const processorEnv = environmentOf(r.template, r.logicalId(r.webhooks.processorFunction));
  // The secret's ARN is a deploy-time token: rendered as <Ref:id> inside the JSON.
  const crm = () => (JSON.parse(renderJoin(processorEnv.EFFECTS)) as Record<string, Json>).crm ?? {};

  it('writes a secret header as its ARN, JSON field and prefix, and nothing of its value', () => {
    expect((crm().headers as Json).authorization).toEqual({
      secretArn: `<Ref:${r.logicalId(secret)}>`,
      jsonField: 'token',
      prefix: 'Bearer ',
    });
  });

  it('writes static headers (a string or EffectHeader.plain) as values, their names in lower case', () => {
    const headers = crm().headers as Json;
    expect(headers['x-api-version']).toEqual({ value: '2024-06-01' });
    expect(headers['x-tenant']).toEqual({ value: 'acme' });
    expect(Object.keys(headers).sort()).toEqual(['authorization', 'x-api-version', 'x-tenant']);
  });

  it('writes the permanent statuses as given', () => {
    expect(crm().permanentStatuses).toEqual([400, 422]);
  });

  it("keeps the secret's value, and any reference resolving it at deploy time, out of the processor's settings", () => {
    // The test's secret does put its value in the template: as the secret resource's own property.
    expect(JSON.stringify(r.template.toJSON())).toContain('do-not-leak-123');
    const fn = JSON.stringify(r.template.toJSON().Resources[r.logicalId(r.webhooks.processorFunction)]);
    expect(fn).not.toContain('do-not-leak-123');
    expect(fn).not.toContain('{{resolve:secretsmanager');
  });

  it('lets the processor read that secret (GetSecretValue and DescribeSecret on it only)', () => {
    const role = r.logicalId(r.webhooks.processorFunction.role as iam.Role);
    expect(statementsWith(statementsOfRole(r.template, role), 'secretsmanager:GetSecretValue')).toEqual([
      {
        Effect: 'Allow',
        Action: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
        Resource: { Ref: r.logicalId(secret) },
      },
    ]);
  });
});

describe('a secret imported by name for an effect header', () => {
  const r = receiver((stack) => ({
    effects: {
      crm: {
        headers: {
          'X-Api-Key': EffectHeader.fromSecret(
            secretsmanager.Secret.fromSecretNameV2(stack, 'CrmKey', 'crm/api-key'),
          ),
        },
      },
    },
  }));

  it('is written as its (partial) ARN with no JSON field or prefix, and granted by that ARN', () => {
    const env = environmentOf(r.template, r.logicalId(r.webhooks.processorFunction));
    const arn =
      'arn:<Ref:AWS::Partition>:secretsmanager:<Ref:AWS::Region>:<Ref:AWS::AccountId>:secret:crm/api-key';
    expect(JSON.parse(renderJoin(env.EFFECTS))).toMatchObject({
      crm: { headers: { 'x-api-key': { secretArn: arn } } },
    });
    const role = r.logicalId(r.webhooks.processorFunction.role as iam.Role);
    const [grant] = statementsWith(statementsOfRole(r.template, role), 'secretsmanager:GetSecretValue');
    expect(renderJoin(grant?.Resource)).toBe(`${arn}-??????`);
  });
});

describe("the processor's way to the dead-letter queue", () => {
  const r = receiver();
  const dlq = r.logicalId(r.webhooks.deadLetterQueue);

  it('gives the processor the DLQ URL as DEAD_LETTER_QUEUE_URL', () => {
    expect(
      environmentOf(r.template, r.logicalId(r.webhooks.processorFunction)).DEAD_LETTER_QUEUE_URL,
    ).toEqual({
      Ref: dlq,
    });
  });

  it('lets the processor send messages to the DLQ', () => {
    const role = r.logicalId(r.webhooks.processorFunction.role as iam.Role);
    expect(statementsWith(statementsOfRole(r.template, role), 'sqs:SendMessage')).toEqual([
      {
        Effect: 'Allow',
        Action: ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
        Resource: arnOf(dlq),
      },
    ]);
  });

  it('gives the processor no access to secrets when no effect header reads one', () => {
    const role = r.logicalId(r.webhooks.processorFunction.role as iam.Role);
    expect(statementsWith(statementsOfRole(r.template, role), 'secretsmanager:GetSecretValue')).toEqual([]);
  });
});

describe('effect and table prop checks', () => {
  const scratch = () => new Stack(new App(), 'Scratch');
  const table = (partitionKey: dynamodb.Attribute) => new dynamodb.Table(scratch(), 'T', { partitionKey });
  const scratchSecret = () => secretsmanager.Secret.fromSecretNameV2(scratch(), 'S', 'crm-token');
  it.each([
    [
      'a header the adapter sets itself (Idempotency-Key)',
      { effects: { crm: { headers: { 'Idempotency-Key': 'x' } } } },
      /effects: crm\.headers: header "Idempotency-Key" is set by the adapter itself/,
    ],
    [
      'a header the adapter sets itself (content-type)',
      { effects: { crm: { headers: { 'content-type': 'text/plain' } } } },
      /effects: crm\.headers: header "content-type" is set by the adapter itself/,
    ],
    [
      'a header name with a space',
      { effects: { crm: { headers: { 'X Api': 'x' } } } },
      /effects: crm\.headers: header name "X Api" is not a valid HTTP header name/,
    ],
    [
      'a static header value with a newline',
      { effects: { crm: { headers: { 'X-Api-Version': '1\r\nX-Evil: 1' } } } },
      /effects: crm\.headers: header "X-Api-Version": a header value may not hold CR, LF or NUL/,
    ],
    [
      'a plain EffectHeader value with a newline',
      { effects: { crm: { headers: { 'X-Tenant': EffectHeader.plain('a\nb') } } } },
      /effects: crm\.headers: header "X-Tenant": a header value may not hold CR, LF or NUL/,
    ],
    [
      'a secret header with an empty JSON field',
      {
        effects: {
          crm: { headers: { authorization: EffectHeader.fromSecret(scratchSecret(), { jsonField: '' }) } },
        },
      },
      /effects: crm\.headers: header "authorization": jsonField must be a non-empty string/,
    ],
    [
      'a secret header whose prefix holds a newline',
      {
        effects: {
          crm: {
            headers: { authorization: EffectHeader.fromSecret(scratchSecret(), { prefix: 'Bearer\n' }) },
          },
        },
      },
      /effects: crm\.headers: header "authorization": prefix: a header value may not hold CR, LF or NUL/,
    ],
    [
      'one header given twice in different cases',
      { effects: { crm: { headers: { Authorization: 'a', authorization: 'b' } } } },
      /effects: crm\.headers: header "authorization" is given twice \(header names are case-insensitive\)/,
    ],
    [
      'a TableV2 keyed by another name than pk',
      {
        tables: {
          invoices: new dynamodb.TableV2(scratch(), 'T2', {
            partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING },
          }),
        },
      },
      /tables: table "invoices" has partition key id \(S\)/,
    ],
    [
      'a business table with a sort key',
      {
        tables: {
          invoices: new dynamodb.Table(scratch(), 'T3', {
            partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
            sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
          }),
        },
      },
      /tables: table "invoices" has a sort key: appliers address rows by the partition key pk alone/,
    ],
    [
      'a permanent status that is a success (200)',
      { effects: { crm: { permanentStatuses: [200] } } },
      /effects: crm\.permanentStatuses must be a list of HTTP statuses from 300 to 599, got \[200\]/,
    ],
    [
      'a permanent status that is not an HTTP status (99)',
      { effects: { crm: { permanentStatuses: [400, 99] } } },
      /effects: crm\.permanentStatuses .* got \[400,99\]/,
    ],
    [
      'a business table keyed by another name than pk',
      { tables: { invoices: table({ name: 'id', type: dynamodb.AttributeType.STRING }) } },
      /tables: table "invoices" has partition key id \(S\): .*pk/,
    ],
    [
      'a business table keyed by a number pk',
      { tables: { invoices: table({ name: 'pk', type: dynamodb.AttributeType.NUMBER }) } },
      /tables: table "invoices" has partition key pk \(N\)/,
    ],
  ] as [string, IdempotentWebhookReceiverProps, RegExp][])('refuses %s', (_name, props, message) => {
    expect(() => buildReceiver(props)).toThrow(IdempotentWebhookReceiverPropsError);
    expect(() => buildReceiver(props)).toThrow(message);
  });

  it('synthesizes with a table keyed by string pk, an imported table (its key unknown) and 3xx to 5xx statuses', () => {
    const r = receiver((stack) => ({
      tables: {
        invoices: new dynamodb.Table(stack, 'Invoices', {
          partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
        }),
        contacts: dynamodb.Table.fromTableName(stack, 'Contacts', 'crm-contacts'),
      },
      effects: { crm: { permanentStatuses: [300, 404, 599], headers: { 'X-Api-Version': '1' } } },
    }));
    const env = environmentOf(r.template, r.logicalId(r.webhooks.processorFunction));
    expect(Object.keys(JSON.parse(renderJoin(env.BUSINESS_TABLES)))).toEqual(['invoices', 'contacts']);
    expect(JSON.parse(env.EFFECTS as string).crm.permanentStatuses).toEqual([300, 404, 599]);
  });
});

describe('the UnhandledEvents alarm', () => {
  const withEntry = receiver(() => ({ processorEntry: EXAMPLE_PROCESSOR_ENTRY }));
  const alarmOf = (r: Receiver) => {
    const alarm = r.webhooks.alarms.UnhandledEvents;
    if (!alarm) throw new Error('no UnhandledEvents alarm');
    return r.template.toJSON().Resources[r.logicalId(alarm)].Properties as Json;
  };

  it('alarms on the first unhandled event of a processor of your own, summed over providers', () => {
    expect(alarmOf(withEntry)).toMatchObject({
      Namespace: METRIC_NAMESPACE,
      MetricName: 'Unhandled',
      Dimensions: [{ Name: 'service', Value: PROCESSOR_SERVICE }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it('reads the same namespace and service as the other processor alarms', () => {
    const inDoubt = withEntry.webhooks.alarms.EffectsInDoubt;
    if (!inDoubt) throw new Error('no EffectsInDoubt alarm');
    const other = withEntry.template.toJSON().Resources[withEntry.logicalId(inDoubt)].Properties as Json;
    expect(alarmOf(withEntry).Namespace).toEqual(other.Namespace);
    expect(alarmOf(withEntry).Dimensions).toEqual(other.Dimensions);
  });

  it('takes its threshold from alarmThresholds.unhandledEvents', () => {
    const r = receiver(() => ({
      processorEntry: EXAMPLE_PROCESSOR_ENTRY,
      alarmThresholds: { unhandledEvents: 25 },
    }));
    expect(alarmOf(r).Threshold).toBe(25);
  });

  it('is absent with the default processor (which completes every event as unhandled)', () => {
    const r = receiver();
    expect(r.webhooks.alarms.UnhandledEvents).toBeUndefined();
    r.template.resourcePropertiesCountIs('AWS::CloudWatch::Alarm', { MetricName: 'Unhandled' }, 0);
  });
});

describe("the construct typed by the app's types", () => {
  type BillingApp = { tables: 'subscriptions'; adapters: 'crm' | 'mailer' };
  const stackAndTable = () => {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Typed');
    const table = new dynamodb.Table(stack, 'Subscriptions', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    });
    return { stack, table };
  };

  it("takes exactly the app's tables and only its adapters, as the processor's appliers name them", () => {
    const { stack, table } = stackAndTable();
    const webhooks = new IdempotentWebhookReceiver<BillingApp>(stack, 'Webhooks', {
      tables: { subscriptions: table },
      effects: { crm: { url: 'https://crm.example.com' } },
    });
    expect(Object.keys(webhooks.businessTables)).toEqual(['subscriptions']);
  });

  it('refuses a misspelt table or adapter name at compile time (tsc fails on an unused @ts-expect-error)', () => {
    const { stack, table } = stackAndTable();
    const typo = () =>
      new IdempotentWebhookReceiver<BillingApp>(stack, 'Typo', {
        // @ts-expect-error: 'subscription' is not one of the app's tables
        tables: { subscription: table },
      });
    const adapterTypo = () =>
      new IdempotentWebhookReceiver<BillingApp>(stack, 'AdapterTypo', {
        tables: { subscriptions: table },
        // @ts-expect-error: 'crn' is not one of the app's adapters
        effects: { crn: { url: 'https://crm.example.com' } },
      });
    // At run time they are strings: both synthesize, which is why the compiler is the check.
    expect(typo().businessTables).toHaveProperty('subscription');
    expect(adapterTypo().businessTables).toHaveProperty('subscriptions');
  });
});
