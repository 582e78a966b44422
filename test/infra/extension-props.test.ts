/**
 * The construct with no extension props deploys no business table and no effect, and grants the
 * processor nothing beyond the claims table; `tables` and `effects` are granted and written exactly
 * as given; bad names are refused at synth time.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import {
  IdempotentWebhookReceiver,
  IdempotentWebhookReceiverPropsError,
} from '../../lib/idempotent-webhook-receiver.js';
import { IdempotentWebhooksStack, webhookOutputs } from '../../lib/webhook-stack.js';
import {
  arnOf,
  asArray,
  buildReceiver,
  environmentOf,
  type Json,
  renderJoin,
  statementsOfRole,
  synthesize,
} from './support.js';

const dynamoStatements = (statements: Json[]) =>
  statements.filter((st) => asArray(st.Action as string | string[]).some((a) => a.startsWith('dynamodb:')));

describe('the construct with no extension props', () => {
  const s = synthesize({ bare: true });
  const w = s.stack.webhooks;
  const processorEnv = environmentOf(s.template, s.logicalId(w.processorFunction));

  it('creates the claims table and no other', () => {
    expect(Object.keys(s.template.findResources('AWS::DynamoDB::Table'))).toEqual([
      s.logicalId(w.claimsTable),
    ]);
    expect(w.businessTables).toEqual({});
  });

  it('gives the processor no business table and no effect adapter', () => {
    expect(processorEnv.BUSINESS_TABLES).toBe('{}');
    expect(processorEnv.EFFECTS).toBe('{}');
  });

  it('grants the processor DynamoDB actions on the claims table only', () => {
    const role = s.logicalId(w.processorFunction.role as iam.Role);
    const resources = dynamoStatements(statementsOfRole(s.template, role)).flatMap((st) =>
      asArray(st.Resource as unknown),
    );
    expect(resources).toEqual([arnOf(s.logicalId(w.claimsTable))]);
  });

  it('outputs the claims table and no business table', () => {
    const names = Object.keys(s.template.toJSON().Outputs as Json).filter((id) => id.endsWith('TableName'));
    expect(names).toEqual(['ClaimsTableName']);
  });
});

describe('tables and effects of your own', () => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const tablesStack = new Stack(app, 'Data');
  const invoices = new dynamodb.Table(tablesStack, 'Invoices', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
  });
  const contacts = dynamodb.Table.fromTableName(tablesStack, 'Contacts', 'crm-contacts');
  const stack = new IdempotentWebhooksStack(app, 'Hooks', {
    receiver: {
      tables: { invoices, 'crm-contacts': contacts },
      effects: { erp: { url: 'https://erp.example.com/hooks', honoursIdempotencyKey: true }, notify: {} },
    },
  });
  const template = Template.fromStack(stack);
  const w = stack.webhooks;
  const processorId = stack.resolve((w.processorFunction.node.defaultChild as dynamodb.CfnTable).logicalId);
  const processorEnv = environmentOf(template, processorId);

  it('maps the names the appliers use to the tables given', () => {
    // The new table's name is imported from its stack; the imported table's is the name itself.
    expect(renderJoin(processorEnv.BUSINESS_TABLES)).toMatch(
      /^\{"invoices":"\{"Fn::ImportValue":"Data:ExportsOutputRefInvoices[^"]*"\}","crm-contacts":"crm-contacts"\}$/,
    );
  });

  it('writes each effect with its URL and whether it honours Idempotency-Key (default false)', () => {
    expect(JSON.parse(processorEnv.EFFECTS as string)).toEqual({
      erp: { url: 'https://erp.example.com/hooks', honoursIdempotencyKey: true },
      notify: { honoursIdempotencyKey: false },
    });
  });

  it('grants the item actions on exactly the tables given', () => {
    const role = stack.resolve(
      ((w.processorFunction.role as iam.Role).node.defaultChild as iam.CfnRole).logicalId,
    );
    const business = dynamoStatements(statementsOfRole(template, role)).filter((st) =>
      Array.isArray(st.Resource),
    );
    expect(business).toHaveLength(1);
    expect(business[0]?.Action).toEqual([
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:ConditionCheckItem',
    ]);
    const rendered = ((business[0] ?? {}).Resource as unknown[]).map(renderJoin);
    expect(rendered).toHaveLength(2);
    expect(rendered[0]).toMatch(/ExportsOutputFnGetAtt.*Invoices.*Arn/);
    expect(rendered[1]).toBe(
      'arn:<Ref:AWS::Partition>:dynamodb:<Ref:AWS::Region>:<Ref:AWS::AccountId>:table/crm-contacts',
    );
  });

  it('outputs each business table as <Name>TableName', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(outputs.InvoicesTableName).toBeDefined();
    expect(outputs.CrmContactsTableName?.Value).toBe('crm-contacts');
  });
});

describe('extension prop checks', () => {
  const table = () => dynamodb.Table.fromTableName(new Stack(), 'T', 't');
  it.each([
    [
      'the claims table name',
      { tables: { claims: table() } },
      /tables: business table name "claims" is the claims table's own/,
    ],
    [
      'a colon in a table name',
      { tables: { 'rows:x': table() } },
      /tables: business table name "rows:x" must start with a lower-case letter/,
    ],
    ['an upper-case table name', { tables: { Invoices: table() } }, /tables: business table name "Invoices"/],
    [
      'a dash in an effect name',
      { effects: { 'erp-api': {} } },
      /effects: effect adapter name "erp-api" must start/,
    ],
    [
      'an effect URL that is not one',
      { effects: { erp: { url: 'not a url' } } },
      /effects: erp.url must be a URL, got "not a url"/,
    ],
  ])('refuses %s', (_name, props, message) => {
    expect(() => buildReceiver(props)).toThrow(IdempotentWebhookReceiverPropsError);
    expect(() => buildReceiver(props)).toThrow(message);
  });
});

describe('webhookOutputs with stated table output ids', () => {
  it('refuses an id other than <Name>TableName, which the CLI reads', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Own');
    const invoices = new dynamodb.Table(stack, 'Invoices', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    });
    const webhooks = new IdempotentWebhookReceiver(stack, 'Webhooks', { tables: { invoices } });
    expect(() => webhookOutputs(stack, webhooks, { tableOutputIds: { invoices: 'Bills' } })).toThrow(
      "table invoices's output must be InvoicesTableName, not Bills",
    );
    webhookOutputs(stack, webhooks, { tableOutputIds: { invoices: 'InvoicesTableName' } });
    expect(Template.fromStack(stack).toJSON().Outputs.InvoicesTableName).toBeDefined();
  });
});
