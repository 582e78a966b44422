/** Alarms: each one's metric (and math expression), threshold and action, and the alarm topic. */
import { readFileSync } from 'node:fs';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_LIST } from '../../lambdas/providers/index.js';
import { PROVIDER_IDS, type ProviderId } from '../../lambdas/providers/types.js';
import { METRIC_NAMESPACE } from '../../lambdas/shared/metric-names.js';
import { RECEIVER_SERVICE } from '../../lib/constructs/metrics.js';
import { alarmSlug, OVERSIZED_FILTER_PATTERN } from '../../lib/constructs/webhook-alarms.js';
import { environmentOf, type Json, type SynthesizedStack, synthesize } from './support.js';

type AlarmProps = Json & {
  AlarmName: string;
  Metrics?: Json[];
  MetricName?: string;
  Dimensions?: Json[];
  Threshold: number;
  ComparisonOperator: string;
  EvaluationPeriods: number;
  DatapointsToAlarm?: number;
  TreatMissingData: string;
  AlarmActions: Json[];
  OKActions: Json[];
};

describe('webhook alarms', () => {
  let s: SynthesizedStack;
  let alarms: Record<string, AlarmProps>;
  const alarm = (id: string): AlarmProps => {
    const construct = s.stack.webhooks.alarms[id];
    if (!construct) throw new Error(`no alarm ${id}`);
    return alarms[s.logicalId(construct)] as AlarmProps;
  };
  const expression = (a: AlarmProps) => a.Metrics?.find((m) => m.Expression)?.Expression;
  const metricStat = (a: AlarmProps, id: string) =>
    (a.Metrics?.find((m) => m.Id === id)?.MetricStat as Json | undefined) ?? {};

  beforeAll(() => {
    s = synthesize();
    alarms = Object.fromEntries(
      Object.entries(s.template.findResources('AWS::CloudWatch::Alarm')).map(([id, r]) => [id, r.Properties]),
    );
  });

  describe.each(PROVIDER_IDS)('for %s', (provider: ProviderId) => {
    it('alarms when more than half the deliveries are duplicates for 3 consecutive 5-minute periods', () => {
      const a = alarm(`DuplicateRatioHigh-${provider}`);
      expect(expression(a)).toBe(
        `IF(FILL(received_${provider}, 0) >= 10, FILL(duplicate_${provider}, 0) / FILL(received_${provider}, 1), 0)`,
      );
      expect(a).toMatchObject({
        Threshold: 0.5,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 3,
      });
      expect(metricStat(a, `duplicate_${provider}`)).toMatchObject({ Period: 300, Stat: 'Sum' });
    });

    it('reads the duplicate ratio from the receiver EMF metrics (service and provider dimensions)', () => {
      const a = alarm(`DuplicateRatioHigh-${provider}`);
      for (const [id, name] of [
        [`duplicate_${provider}`, 'Duplicate'],
        [`received_${provider}`, 'Received'],
      ]) {
        expect(metricStat(a, id as string).Metric).toEqual({
          Namespace: METRIC_NAMESPACE,
          MetricName: name,
          Dimensions: [
            { Name: 'provider', Value: provider },
            { Name: 'service', Value: RECEIVER_SERVICE },
          ],
        });
      }
    });

    it('alarms when more than 20% of deliveries fail the signature check for 10 minutes', () => {
      const a = alarm(`InvalidSignatureRatio-${provider}`);
      expect(expression(a)).toBe(
        `IF(FILL(received_${provider}, 0) >= 5, FILL(invalid_${provider}, 0) / FILL(received_${provider}, 1), 0)`,
      );
      expect(a).toMatchObject({
        Threshold: 0.2,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 2,
      });
    });
  });

  it.each(PROVIDER_LIST.filter((p) => p.alarms.duplicateRatioLow).map((p) => p.id))(
    'alarms when %s duplicates collapse to zero in an hour with traffic',
    (provider) => {
      const a = alarm(`DuplicateRatioLow-${provider}`);
      expect(expression(a)).toBe(
        `IF(FILL(received_${provider}, 0) >= 1000, FILL(duplicate_${provider}, 0) / FILL(received_${provider}, 1), 1)`,
      );
      expect(a).toMatchObject({
        Threshold: 0.0001,
        ComparisonOperator: 'LessThanThreshold',
        EvaluationPeriods: 1,
      });
      expect(metricStat(a, `received_${provider}`)).toMatchObject({ Period: 3600 });
    },
  );

  it('has no low duplicate-ratio alarm for GitHub by default (it never retries automatically)', () => {
    expect(s.stack.webhooks.alarms['DuplicateRatioLow-github']).toBeUndefined();
    expect(Object.values(alarms).map((a) => a.AlarmName)).not.toContain(
      'TestWebhooks-warning-duplicate-ratio-low-github',
    );
  });

  it('alarms on the API Gateway 5xx rate above 5% in 2 of 3 five-minute periods', () => {
    const a = alarm('ApiServerErrorRate');
    expect(expression(a)).toBe('IF(FILL(requests, 0) >= 10, FILL(errors, 0) / FILL(requests, 1), 0)');
    const apiId = { Name: 'ApiId', Value: { Ref: s.logicalId(s.stack.webhooks.httpApi) } };
    expect(metricStat(a, 'errors')).toMatchObject({
      Metric: { Namespace: 'AWS/ApiGateway', MetricName: '5xx', Dimensions: [apiId] },
      Stat: 'Sum',
    });
    expect(metricStat(a, 'requests')).toMatchObject({
      Metric: { Namespace: 'AWS/ApiGateway', MetricName: 'Count', Dimensions: [apiId] },
      Stat: 'Sum',
    });
    expect(a).toMatchObject({ Threshold: 0.05, EvaluationPeriods: 3, DatapointsToAlarm: 2 });
  });

  it('alarms as soon as the dead-letter queue holds a message', () => {
    expect(alarm('DeadLetterQueueNotEmpty')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        {
          Name: 'QueueName',
          Value: { 'Fn::GetAtt': [s.logicalId(s.stack.webhooks.deadLetterQueue), 'QueueName'] },
        },
      ],
      Statistic: 'Maximum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
    });
  });

  it('alarms when a dead-lettered message is older than one hour', () => {
    expect(alarm('DeadLetterQueueMessageAge')).toMatchObject({
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [
        {
          Name: 'QueueName',
          Value: { 'Fn::GetAtt': [s.logicalId(s.stack.webhooks.deadLetterQueue), 'QueueName'] },
        },
      ],
      Statistic: 'Maximum',
      Threshold: 3600,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('alarms when the oldest event waiting in the event queue is older than 5 minutes', () => {
    expect(alarm('ProcessingLag')).toMatchObject({
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [
        {
          Name: 'QueueName',
          Value: { 'Fn::GetAtt': [s.logicalId(s.stack.webhooks.eventQueue), 'QueueName'] },
        },
      ],
      Statistic: 'Maximum',
      Threshold: 300,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('alarms on any processor invocation error', () => {
    expect(alarm('ProcessorErrors')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: s.logicalId(s.stack.webhooks.processorFunction) } }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('alarms on the first claim the sweeper reports stuck, from its gauge (service dimension only)', () => {
    expect(alarm('StuckClaims')).toMatchObject({
      Namespace: 'IdempotentWebhooks',
      MetricName: 'StuckClaims',
      Dimensions: [{ Name: 'service', Value: 'webhook-sweeper' }],
      Statistic: 'Maximum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it('alarms on the first effect in doubt, summed over providers (service dimension only)', () => {
    expect(alarm('EffectsInDoubt')).toMatchObject({
      Namespace: 'IdempotentWebhooks',
      MetricName: 'EffectsInDoubt',
      Dimensions: [{ Name: 'service', Value: 'webhook-processor' }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it('alarms on a failed sweeper run', () => {
    expect(alarm('SweeperErrors')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: s.logicalId(s.stack.webhooks.sweeperFunction) } }],
      Threshold: 1,
    });
  });

  it('creates 3 alarms per provider (GitHub, Twilio and Discord 2: no duplicate-ratio-low) and 12 for the pipeline (the example has a processor of its own: UnhandledEvents)', () => {
    const withoutRatioLow = PROVIDER_LIST.filter((p) => !p.alarms.duplicateRatioLow).map((p) => p.id);
    expect(withoutRatioLow).toEqual(['github', 'twilio', 'discord']);
    expect(Object.keys(alarms)).toHaveLength(3 * PROVIDER_LIST.length - withoutRatioLow.length + 12);
  });

  it('counts throttled (429) deliveries from the access log and alarms on the first; 4xx by rate', () => {
    const filters = Object.values(s.template.findResources('AWS::Logs::MetricFilter')) as Array<{
      Properties: Record<string, Json>;
    }>;
    const throttled = filters.find((f) => String(f.Properties.FilterPattern) === '{ $.status = "429" }');
    expect(throttled?.Properties.MetricTransformations).toEqual([
      { MetricName: 'ThrottledDeliveries', MetricNamespace: 'IdempotentWebhooks', MetricValue: '1' },
    ]);
    const alarm = Object.values(alarms).find((a) => String(a.AlarmName).endsWith('throttled-deliveries'));
    expect(alarm).toMatchObject({ MetricName: 'ThrottledDeliveries', Threshold: 1 });
    const clientErrors = Object.values(alarms).find((a) =>
      String(a.AlarmName).endsWith('api-client-error-rate'),
    );
    expect(clientErrors).toMatchObject({ Threshold: 0.2, EvaluationPeriods: 3, DatapointsToAlarm: 2 });
    expect(JSON.stringify(clientErrors?.Metrics)).toContain('4xx');
  });

  it('counts oversized deliveries from the access log and alarms on the first one', () => {
    const filters = Object.values(s.template.findResources('AWS::Logs::MetricFilter')) as Array<{
      Properties: Record<string, Json>;
    }>;
    const filter = filters.find((f) => String(f.Properties.FilterPattern) === OVERSIZED_FILTER_PATTERN);
    const logGroup = filter?.Properties.LogGroupName as { Ref: string };
    expect(logGroup.Ref).toMatch(/AccessLogs/);
    expect(s.template.toJSON().Resources[logGroup.Ref].Type).toBe('AWS::Logs::LogGroup');
    expect(filter?.Properties.FilterPattern).toBe(OVERSIZED_FILTER_PATTERN);
    expect(filter?.Properties.MetricTransformations).toEqual([
      { MetricName: 'OversizedDeliveries', MetricNamespace: 'IdempotentWebhooks', MetricValue: '1' },
    ]);
    const alarm = Object.values(alarms).find((a) => String(a.AlarmName).endsWith('oversized-deliveries'));
    expect(alarm).toMatchObject({
      MetricName: 'OversizedDeliveries',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('notifies the alarm topic when any alarm fires and when it recovers', () => {
    const topic = { Ref: s.logicalId(s.stack.webhooks.alarmTopic) };
    for (const a of Object.values(alarms)) {
      expect(a.AlarmActions).toEqual([topic]);
      expect(a.OKActions).toEqual([topic]);
    }
  });

  it('treats missing data as not breaching (every metric is event-driven)', () => {
    for (const a of Object.values(alarms)) expect(a.TreatMissingData).toBe('notBreaching');
  });

  it('names every alarm <stack>-<severity>-<alarm>', () => {
    for (const [id, construct] of Object.entries(s.stack.webhooks.alarms)) {
      expect(alarms[s.logicalId(construct)]?.AlarmName).toMatch(
        new RegExp(`^TestWebhooks-(critical|warning)-${alarmSlug(id)}$`),
      );
    }
  });

  it('says what to do in every alarm description', () => {
    for (const a of Object.values(alarms)) expect(a.AlarmDescription).toMatch(/What to do: \S/);
  });

  it('documents every alarm in docs/deploy.md', () => {
    const doc = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');
    const generic = new Set(
      Object.keys(s.stack.webhooks.alarms).map((id) =>
        alarmSlug(id).replace(new RegExp(`-(${PROVIDER_IDS.join('|')})$`), ''),
      ),
    );
    for (const slug of generic) expect(doc).toContain(slug);
  });

  it('uses the service name the receiver sets in the metrics it alarms on', () => {
    const env = environmentOf(s.template, s.logicalId(s.stack.webhooks.receiverFunction));
    expect(env.POWERTOOLS_SERVICE_NAME).toBe(RECEIVER_SERVICE);
  });

  it('encrypts the alarm topic with a rotated customer managed key that CloudWatch may use', () => {
    s.template.hasResourceProperties('AWS::SNS::Topic', {
      KmsMasterKeyId: {
        'Fn::GetAtt': [
          s.logicalId(s.stack.webhooks.node.findChild('Alarms').node.findChild('TopicKey')),
          'Arn',
        ],
      },
    });
    s.template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          {
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
            Resource: '*',
          },
        ]),
      },
    });
  });

  it('refuses non-TLS publishing to the alarm topic', () => {
    s.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: [
          {
            Effect: 'Deny',
            Action: 'sns:Publish',
            Principal: '*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          },
          { Effect: 'Allow', Principal: { Service: 'cloudwatch.amazonaws.com' }, Action: 'sns:Publish' },
        ].map((statement) => Match.objectLike(statement)),
      },
    });
  });

  it('subscribes no email address by default', () => {
    s.template.resourceCountIs('AWS::SNS::Subscription', 0);
  });
});
