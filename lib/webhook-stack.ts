/**
 * The example stack: the IdempotentWebhookReceiver construct with its defaults, and the outputs an
 * operator needs after `cdk deploy` (URLs to paste into each provider, secret ARNs to fill in).
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { PROVIDER_IDS } from '../lambdas/providers/types.js';
import { providerPascal, secretArnOutputId, webhookUrlOutputId } from './constructs/naming.js';
import {
  IdempotentWebhookReceiver,
  type IdempotentWebhookReceiverProps,
} from './idempotent-webhook-receiver.js';

export interface IdempotentWebhooksStackProps extends StackProps {
  /** @default the construct's defaults */
  readonly receiver?: IdempotentWebhookReceiverProps;
}

export class IdempotentWebhooksStack extends Stack {
  public readonly webhooks: IdempotentWebhookReceiver;

  constructor(scope: Construct, id: string, props: IdempotentWebhooksStackProps = {}) {
    super(scope, id, {
      description: 'Idempotent webhook receiver: verify, claim once in DynamoDB, queue to SQS, apply once',
      ...props,
    });
    const webhooks = new IdempotentWebhookReceiver(this, 'Webhooks', props.receiver);
    this.webhooks = webhooks;

    for (const provider of PROVIDER_IDS) {
      const name = providerPascal(provider);
      new CfnOutput(this, webhookUrlOutputId(provider), {
        value: webhooks.webhookUrls[provider],
        description: `Paste into the ${name} webhook settings`,
      });
      new CfnOutput(this, secretArnOutputId(provider), {
        value: webhooks.secrets[provider].secretArn,
        description: `aws secretsmanager put-secret-value --secret-id <this> --secret-string '{"current":"..."}'`,
      });
    }
    const outputs: Record<string, string> = {
      ClaimsTableName: webhooks.claimsTable.tableName,
      PaymentsTableName: webhooks.paymentsTable.tableName,
      OrdersTableName: webhooks.ordersTable.tableName,
      ResourcesTableName: webhooks.resourcesTable.tableName,
      EventQueueUrl: webhooks.eventQueue.queueUrl,
      DeadLetterQueueUrl: webhooks.deadLetterQueue.queueUrl,
      ArchiveBucketName: webhooks.archiveBucket.bucketName,
      DashboardUrl: webhooks.dashboardUrl,
    };
    for (const [outputId, value] of Object.entries(outputs)) new CfnOutput(this, outputId, { value });
  }
}
