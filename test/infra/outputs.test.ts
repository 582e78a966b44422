/** Stack outputs (exact logical ids) and the dashboard. */
import { beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_IDS } from '../../lambdas/providers/types.js';
import { ProcessorMetric, ReceiverMetric } from '../../lambdas/shared/metric-names.js';
import { providerPascal } from '../../lib/constructs/naming.js';
import { exampleTable, renderJoin, type SynthesizedStack, synthesize } from './support.js';

describe('webhook stack outputs and dashboard', () => {
  let s: SynthesizedStack;
  let outputs: Record<string, { Value: unknown }>;
  let dashboardBody: string;
  beforeAll(() => {
    s = synthesize();
    outputs = s.template.toJSON().Outputs;
    const dashboard = Object.values(s.template.findResources('AWS::CloudWatch::Dashboard'))[0];
    dashboardBody = renderJoin(dashboard?.Properties.DashboardBody);
  });

  it.each([
    ...PROVIDER_IDS.map((p) => `${providerPascal(p)}WebhookUrl`),
    'ClaimsTableName',
    'PaymentsTableName',
    'OrdersTableName',
    'ResourcesTableName',
    'EventQueueUrl',
    'DeadLetterQueueUrl',
    'ArchiveBucketName',
    'DashboardUrl',
    ...PROVIDER_IDS.map((p) => `${providerPascal(p)}SecretArn`),
  ])('outputs %s under exactly that logical id', (id) => {
    expect(outputs[id]).toBeDefined();
  });

  it('has no other outputs', () => {
    expect(Object.keys(outputs)).toHaveLength(PROVIDER_IDS.length * 2 + 8);
  });

  it.each(PROVIDER_IDS)('outputs the ARN of the %s secret', (provider) => {
    expect(outputs[`${providerPascal(provider)}SecretArn`]?.Value).toEqual({
      Ref: s.logicalId(s.stack.webhooks.secrets[provider]),
    });
  });

  it.each([
    ['ClaimsTableName', () => s.stack.webhooks.claimsTable],
    ['PaymentsTableName', () => exampleTable(s, 'payments')],
    ['OrdersTableName', () => exampleTable(s, 'orders')],
    ['ResourcesTableName', () => exampleTable(s, 'resources')],
    ['EventQueueUrl', () => s.stack.webhooks.eventQueue],
    ['DeadLetterQueueUrl', () => s.stack.webhooks.deadLetterQueue],
    ['ArchiveBucketName', () => s.stack.webhooks.archiveBucket],
  ])('outputs %s from its resource', (id, construct) => {
    expect(outputs[id]?.Value).toEqual({ Ref: s.logicalId(construct()) });
  });

  it('outputs the console URL of the dashboard', () => {
    const dashboard = s.logicalId(s.stack.webhooks.dashboard);
    expect(renderJoin(outputs.DashboardUrl?.Value)).toBe(
      `https://<Ref:AWS::Region>.console.aws.amazon.com/cloudwatch/home?region=<Ref:AWS::Region>#dashboards/dashboard/<Ref:${dashboard}>`,
    );
  });

  it('graphs deliveries and duplicates per provider', () => {
    for (const provider of PROVIDER_IDS) {
      expect(dashboardBody).toContain(`"${ReceiverMetric.Received}","provider","${provider}"`);
      expect(dashboardBody).toContain(`"${ReceiverMetric.Duplicate}","provider","${provider}"`);
    }
  });

  it('graphs the duplicate ratio per provider', () => {
    for (const provider of PROVIDER_IDS) {
      expect(dashboardBody).toContain(`FILL(duplicate_${provider}, 0) / FILL(received_${provider}, 1)`);
    }
  });

  it('graphs receiver outcomes by status', () => {
    for (const name of [
      'Accepted',
      'InvalidSignature',
      'Malformed',
      'PayloadTooLarge',
      'InFlight',
      'Failed',
    ]) {
      expect(dashboardBody).toContain(`MetricName=\\"${name}\\"`);
    }
  });

  it('graphs receiver and processor latency', () => {
    expect(dashboardBody).toContain(`"${ReceiverMetric.Latency}"`);
    expect(dashboardBody).toContain(`"${ProcessorMetric.ProcessingLatency}"`);
  });

  it('graphs the event queue and dead-letter queue depth', () => {
    const depth = dashboardBody.match(/"ApproximateNumberOfMessagesVisible"/g) ?? [];
    expect(depth).toHaveLength(2);
  });
});
