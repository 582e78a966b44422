/**
 * A stack holding the IdempotentWebhookReceiver construct and the outputs an operator needs after
 * `cdk deploy` (URLs to paste into each provider, secret ARNs to fill in, table and queue names).
 * `webhookOutputs` adds the same outputs to a stack of your own.
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { tableOutputName } from '../lambdas/processor/extension-names.js';
import { providerPascal, secretArnOutputId, webhookUrlOutputId } from './constructs/naming.js';
import {
  IdempotentWebhookReceiver,
  type IdempotentWebhookReceiverProps,
} from './idempotent-webhook-receiver.js';

export interface IdempotentWebhooksStackProps extends StackProps {
  /** @default the construct's defaults */
  readonly receiver?: IdempotentWebhookReceiverProps;
}

export const WEBHOOK_STACK_DESCRIPTION =
  'Idempotent webhook receiver: verify, claim once in DynamoDB, queue to SQS, apply once';

export class IdempotentWebhooksStack extends Stack {
  public readonly webhooks: IdempotentWebhookReceiver;

  constructor(scope: Construct, id: string, props: IdempotentWebhooksStackProps = {}) {
    super(scope, id, { description: WEBHOOK_STACK_DESCRIPTION, ...props });
    this.webhooks = new IdempotentWebhookReceiver(this, 'Webhooks', props.receiver);
    webhookOutputs(this, this.webhooks);
  }
}

export interface WebhookOutputsOptions {
  /**
   * The output id of each business table, stated where a stack promises it to its users (it must be
   * the convention, `<Name>TableName`, which the CLI reads). @default the convention
   */
  readonly tableOutputIds?: Readonly<Record<string, string>>;
}

/**
 * The stack outputs of one receiver, in `stack`'s scope: `<Provider>WebhookUrl` and
 * `<Provider>SecretArn` per provider, `ClaimsTableName`, `<Table>TableName` per business table,
 * `EventQueueUrl`, `DeadLetterQueueUrl`, `ArchiveBucketName`, `DashboardUrl`. The `webhooks` CLI
 * and the local stack read them by these names.
 */
export function webhookOutputs(
  stack: Stack,
  webhooks: IdempotentWebhookReceiver,
  options: WebhookOutputsOptions = {},
): void {
  for (const [name, outputId] of Object.entries(options.tableOutputIds ?? {})) {
    // The CLI finds a table's rows through this name: another one would hide them from it.
    if (outputId !== tableOutputName(name)) {
      throw new Error(`table ${name}'s output must be ${tableOutputName(name)}, not ${outputId}`);
    }
    if (!Object.hasOwn(webhooks.businessTables, name)) {
      throw new Error(`table ${name} has an output id but the receiver was given no such table`);
    }
  }
  for (const provider of webhooks.providerIds) {
    const name = providerPascal(provider);
    const url = webhooks.webhookUrls[provider];
    const secret = webhooks.secrets[provider];
    if (url === undefined || secret === undefined)
      throw new Error(`the receiver has no route or no secret for provider ${provider}`);
    new CfnOutput(stack, webhookUrlOutputId(provider), {
      value: url,
      description: `Paste into the ${name} webhook settings`,
    });
    new CfnOutput(stack, secretArnOutputId(provider), {
      value: secret.secretArn,
      description: `aws secretsmanager put-secret-value --secret-id <this> --secret-string '{"current":"..."}'`,
    });
  }
  const outputs: Record<string, string> = { ClaimsTableName: webhooks.claimsTable.tableName };
  for (const [name, table] of Object.entries(webhooks.businessTables)) {
    outputs[tableOutputName(name)] = table.tableName;
  }
  Object.assign(outputs, {
    EventQueueUrl: webhooks.eventQueue.queueUrl,
    DeadLetterQueueUrl: webhooks.deadLetterQueue.queueUrl,
    ArchiveBucketName: webhooks.archiveBucket.bucketName,
    DashboardUrl: webhooks.dashboardUrl,
  });
  for (const [outputId, value] of Object.entries(outputs)) new CfnOutput(stack, outputId, { value });
}
