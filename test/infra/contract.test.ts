/**
 * The deployed shape that must not move by accident: a change to any of these is a change users
 * see, so each fails here first and is made on purpose (with a CHANGELOG line).
 * - Logical ids of stateful resources: CloudFormation replaces a resource whose id changes, so a
 *   renamed table is a new, empty table and the old one is orphaned (RETAIN).
 * - Stack output names: users' scripts and `cdk-outputs.local.json` read them.
 * - Each function's environment variable names: a refactor must not stop writing one a function reads.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type SynthesizedStack, synthesize } from './support.js';

const STATEFUL = [
  'AWS::DynamoDB::Table',
  'AWS::SQS::Queue',
  'AWS::S3::Bucket',
  'AWS::SecretsManager::Secret',
  'AWS::KMS::Key',
  'AWS::SNS::Topic',
  'AWS::Logs::LogGroup',
];

describe('the deployed contract of the example stack', () => {
  let s: SynthesizedStack;
  let resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
  beforeAll(() => {
    s = synthesize();
    resources = s.template.toJSON().Resources;
  });

  it('keeps the logical ids of every stateful resource', () => {
    const stateful = Object.entries(resources)
      .filter(([, r]) => STATEFUL.includes(r.Type))
      .map(([id, r]) => `${r.Type} ${id}`)
      .sort();
    expect(stateful).toEqual(
      [
        'AWS::DynamoDB::Table WebhooksTablesClaims2DFEF7C2',
        'AWS::DynamoDB::Table WebhooksTablesPayments5B3F6428',
        'AWS::DynamoDB::Table WebhooksTablesOrders8ABCFFAF',
        'AWS::DynamoDB::Table WebhooksTablesResources9E9F018D',
        'AWS::SecretsManager::Secret WebhooksSecretsStripe7F2615CD',
        'AWS::SecretsManager::Secret WebhooksSecretsGithub84484124',
        'AWS::SecretsManager::Secret WebhooksSecretsShopifyE926BFBF',
        'AWS::SecretsManager::Secret WebhooksSecretsAsaas4A2FF496',
        'AWS::SecretsManager::Secret WebhooksSecretsStandard1B3EDA6C',
        'AWS::SecretsManager::Secret WebhooksSecretsPaddle5AA717F5',
        'AWS::SecretsManager::Secret WebhooksSecretsSlackD6F0F648',
        'AWS::SecretsManager::Secret WebhooksSecretsSquareCEA214D8',
        'AWS::SecretsManager::Secret WebhooksSecretsTwilioD2DF2524',
        'AWS::SecretsManager::Secret WebhooksSecretsDiscord21D4D039',
        'AWS::S3::Bucket WebhooksArchiveBucketF7F58BF6',
        'AWS::SQS::Queue WebhooksProcessingDeadLetterQueueC3360313',
        'AWS::SQS::Queue WebhooksProcessingEventQueue992CB33C',
        'AWS::Logs::LogGroup WebhooksProcessingProcessorLogGroup8D04ED34',
        'AWS::Logs::LogGroup WebhooksIngestReceiverLogGroupAA8D9E29',
        'AWS::Logs::LogGroup WebhooksIngestAccessLogsA028F08D',
        'AWS::Logs::LogGroup WebhooksSweepingSweeperLogGroupD3B99E47',
        'AWS::KMS::Key WebhooksAlarmsTopicKey5D963775',
        'AWS::SNS::Topic WebhooksAlarmsTopic1E7873AD',
      ].sort(),
    );
  });

  it('keeps the output names', () => {
    expect(Object.keys(s.template.toJSON().Outputs).sort()).toEqual(
      [
        ...[
          'Stripe',
          'Github',
          'Shopify',
          'Asaas',
          'Standard',
          'Paddle',
          'Slack',
          'Square',
          'Twilio',
          'Discord',
        ].flatMap((p) => [`${p}WebhookUrl`, `${p}SecretArn`]),
        'ClaimsTableName',
        'PaymentsTableName',
        'OrdersTableName',
        'ResourcesTableName',
        'EventQueueUrl',
        'DeadLetterQueueUrl',
        'ArchiveBucketName',
        'DashboardUrl',
      ].sort(),
    );
  });

  it.each([
    [
      'receiver',
      'receiverFunction',
      'ARCHIVE_BUCKET_NAME,CLAIMS_TABLE_NAME,CLAIM_CHECK_THRESHOLD_BYTES,CLAIM_RETENTION_SECONDS,EVENT_QUEUE_URL,POWERTOOLS_METRICS_NAMESPACE,POWERTOOLS_SERVICE_NAME,PROVIDER_SETTINGS,PUBLIC_BASE_URL,RECEIVER_LEASE_SECONDS,WEBHOOK_SECRET_ARNS',
    ],
    [
      'processor',
      'processorFunction',
      'ARCHIVE_BUCKET_NAME,BUSINESS_TABLES,CLAIMS_TABLE_NAME,CLAIM_RETENTION_SECONDS,DEAD_LETTER_QUEUE_URL,EFFECTS,MAX_RECEIVE_COUNT,POWERTOOLS_METRICS_NAMESPACE,POWERTOOLS_SERVICE_NAME,PROCESSING_LEASE_SECONDS',
    ],
    [
      'sweeper',
      'sweeperFunction',
      'ARCHIVE_BUCKET_NAME,CLAIMS_TABLE_NAME,EVENT_QUEUE_URL,POWERTOOLS_SERVICE_NAME,SWEEP_ENQUEUED_STALE_SECONDS,SWEEP_MAX_CLAIMS_PER_RUN,SWEEP_MAX_REQUEUES,SWEEP_PROCESSING_GRACE_SECONDS,SWEEP_RECEIVED_GRACE_SECONDS',
    ],
  ] as const)('writes the %s the environment variables it reads', (_name, field, names) => {
    const fn = resources[s.logicalId(s.stack.webhooks[field])];
    const variables =
      (fn?.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    expect(Object.keys(variables).sort().join(',')).toBe(names);
  });
});
