/** The construct's props: validation at synth time, and non-default values reaching the template. */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildReceiver, environmentOf, type SynthesizedStack, synthesize } from './support.js';

const build = buildReceiver;

describe('IdempotentWebhookReceiver props validation', () => {
  it('refuses a receiver lease that does not outlast the receiver timeout', () => {
    expect(() =>
      build({ receiverTimeout: Duration.seconds(15), receiverLease: Duration.seconds(15) }),
    ).toThrow(/receiverLease \(15 s\) must be longer than receiverTimeout \(15 s\)/);
  });

  it('refuses a receiver timeout beyond API Gateway’s 30 s', () => {
    expect(() =>
      build({ receiverTimeout: Duration.seconds(31), receiverLease: Duration.seconds(60) }),
    ).toThrow(/receiverTimeout must be at most 30 seconds/);
  });

  it('refuses a processing lease that does not outlast the processor timeout', () => {
    expect(() => build({ processorTimeout: Duration.seconds(120) })).toThrow(
      /processingLease \(120 s\) must be longer than processorTimeout \(120 s\)/,
    );
  });

  it('refuses a processing lease longer than the queue visibility timeout', () => {
    expect(() => build({ processingLease: Duration.seconds(200) })).toThrow(
      /must not exceed the event queue's visibility timeout \(181 s/,
    );
  });

  it('refuses provider settings the receiver would reject, naming the setting', () => {
    expect(() => build({ providers: { stripe: { claimTtl: Duration.seconds(0) } } })).toThrow(
      /invalid providers prop: PROVIDER_SETTINGS\.stripe\.claimTtlSeconds must be a positive integer/,
    );
  });

  it('refuses a maxReceiveCount outside 1-1000', () => {
    expect(() => build({ maxReceiveCount: 0 })).toThrow(/maxReceiveCount must be an integer from 1 to 1000/);
  });

  it('refuses a claim-check threshold outside 1 KiB to SQS’s 1 MiB', () => {
    expect(() => build({ claimCheckThresholdBytes: 1_000 })).toThrow(
      /claimCheckThresholdBytes must be an integer from 1024 to 1048576/,
    );
    expect(() => build({ claimCheckThresholdBytes: 1_048_577 })).toThrow(/claimCheckThresholdBytes/);
  });

  it('refuses a compliance export retention that is not a whole number of days', () => {
    expect(() => build({ complianceExportRetention: Duration.hours(12) })).toThrow(
      /complianceExportRetention must be a whole number of days, at least 1 .*got 43200 s/,
    );
    expect(() => build({ complianceExportRetention: Duration.hours(36) })).toThrow(
      /complianceExportRetention/,
    );
    expect(() => build({ complianceExportRetention: Duration.days(2) })).not.toThrow();
  });

  it('refuses an archive retention shorter than the claim retention (a redriven claim check needs its body)', () => {
    expect(() => build({ archiveRetention: Duration.days(7) })).toThrow(
      /archiveRetention \(7 days\) must be at least the claim retention \(15 days\)/,
    );
  });

  it('uses processorEntry as the processor module', () => {
    expect(() => build({ processorEntry: '/nonexistent/handlers.ts' })).toThrow(/nonexistent\/handlers\.ts/);
  });
});

describe('IdempotentWebhookReceiver with non-default props', () => {
  let s: SynthesizedStack;
  beforeAll(() => {
    s = synthesize({
      props: {
        providers: {
          stripe: {
            claimTtl: Duration.days(10),
            keyRules: { byEventType: { 'charge.*': 'composite' } },
            duplicateRatioHigh: { enabled: false },
          },
          github: { duplicateRatioLow: { enabled: true, minDeliveries: 50 } },
          standard: { signatureTolerance: Duration.minutes(10) },
        },
        throttlingRateLimit: 20,
        throttlingBurstLimit: 40,
        processorTimeout: Duration.seconds(60),
        processingLease: Duration.seconds(300),
        maxReceiveCount: 3,
        batchSize: 5,
        maxBatchingWindow: Duration.seconds(2),
        processorEnvironment: { MY_HANDLER_SETTING: 'on' },
        logRetention: logs.RetentionDays.ONE_WEEK,
        removalPolicy: RemovalPolicy.DESTROY,
        alarmEmail: 'ops@example.com',
        alarmThresholds: { processingLag: Duration.minutes(15) },
        alarmNamePrefix: 'shop',
        claimCheckThresholdBytes: 262_144,
        countDuplicates: false,
        markEnqueued: false,
      },
      effectUrls: { ledger: 'https://ledger.example.com', mailer: 'https://mailer.example.com' },
    });
  });

  const processorEnv = () => environmentOf(s.template, s.logicalId(s.stack.webhooks.processorFunction));
  const receiverEnv = () => environmentOf(s.template, s.logicalId(s.stack.webhooks.receiverFunction));

  it('writes per-provider claim TTLs, tolerances and key rules to PROVIDER_SETTINGS', () => {
    expect(JSON.parse(receiverEnv().PROVIDER_SETTINGS as string)).toEqual({
      stripe: { claimTtlSeconds: 864_000, keyRules: { byEventType: { 'charge.*': 'composite' } } },
      standard: { toleranceSeconds: 600 },
    });
  });

  it('passes the claim-check threshold to the receiver', () => {
    expect(receiverEnv().CLAIM_CHECK_THRESHOLD_BYTES).toBe('262144');
  });

  it('turns the duplicate counter off with countDuplicates: false (COUNT_DUPLICATES), on by default', () => {
    expect(receiverEnv().COUNT_DUPLICATES).toBe('false');
    const defaults = synthesize();
    expect(
      environmentOf(defaults.template, defaults.logicalId(defaults.stack.webhooks.receiverFunction)),
    ).not.toHaveProperty('COUNT_DUPLICATES');
  });

  it('drops the ENQUEUED mark with markEnqueued: false (MARK_ENQUEUED), marking by default', () => {
    expect(receiverEnv().MARK_ENQUEUED).toBe('false');
    const defaults = synthesize();
    expect(
      environmentOf(defaults.template, defaults.logicalId(defaults.stack.webhooks.receiverFunction)),
    ).not.toHaveProperty('MARK_ENQUEUED');
  });

  it('applies the stage throttling props', () => {
    s.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 },
    });
  });

  it('derives the visibility timeout from the processor timeout (6 x 60 s + the 2 s window)', () => {
    s.template.hasResourceProperties('AWS::SQS::Queue', { VisibilityTimeout: 362 });
  });

  it('uses maxReceiveCount in both the redrive policy and MAX_RECEIVE_COUNT', () => {
    s.template.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: { maxReceiveCount: 3 } });
    expect(processorEnv().MAX_RECEIVE_COUNT).toBe('3');
  });

  it('applies the batch size and batching window', () => {
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 5,
      MaximumBatchingWindowInSeconds: 2,
    });
  });

  it('writes the effect URLs to EFFECTS, and the extra processor environment, when given', () => {
    expect(JSON.parse(processorEnv().EFFECTS as string)).toEqual({
      ledger: { url: 'https://ledger.example.com', honoursIdempotencyKey: true },
      mailer: { url: 'https://mailer.example.com', honoursIdempotencyKey: false },
    });
    expect(processorEnv()).toMatchObject({
      MY_HANDLER_SETTING: 'on',
      PROCESSING_LEASE_SECONDS: '300',
    });
  });

  it('applies the log retention to every log group', () => {
    s.template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 7 });
  });

  it('applies the removal policy to the tables', () => {
    s.template.allResources('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
  });

  it('subscribes alarmEmail to the alarm topic', () => {
    s.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: { Ref: s.logicalId(s.stack.webhooks.alarmTopic) },
    });
  });

  it('drops a provider alarm switched off', () => {
    expect(s.stack.webhooks.alarms['DuplicateRatioHigh-stripe']).toBeUndefined();
  });

  it('creates the GitHub low duplicate-ratio alarm when switched on, with its traffic floor', () => {
    const alarm = s.stack.webhooks.alarms['DuplicateRatioLow-github'];
    expect(alarm).toBeDefined();
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'shop-warning-duplicate-ratio-low-github',
      Metrics: [
        {
          Expression:
            'IF(FILL(received_github, 0) >= 50, FILL(duplicate_github, 0) / FILL(received_github, 1), 1)',
        },
        {},
        {},
      ],
    });
  });

  it('applies alarm thresholds', () => {
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'shop-critical-processing-lag',
      Threshold: 900,
    });
  });
});
