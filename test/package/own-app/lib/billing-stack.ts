// lib/billing-stack.ts
import * as path from 'node:path';
import { Stack, type StackProps } from 'aws-cdk-lib';
import { AttributeType, BillingMode, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { EffectHeader, IdempotentWebhookReceiver, webhookOutputs } from 'idempotent-webhook-receiver';
import type { App } from '../src/app-types';

export class BillingStack extends Stack {
  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const subscriptions = new Table(this, 'Subscriptions', {
      partitionKey: { name: 'pk', type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
    });
    // {"token": "..."}: created by hand, never in the template.
    const crmToken = Secret.fromSecretNameV2(this, 'CrmToken', 'billing/crm-token');
    const webhooks = new IdempotentWebhookReceiver<App>(this, 'Webhooks', {
      processorEntry: path.join(__dirname, '../src/processor.ts'),
      tables: { subscriptions },
      effects: {
        crm: {
          url: 'https://crm.example.com/api/invoices',
          honoursIdempotencyKey: true,
          headers: {
            authorization: EffectHeader.fromSecret(crmToken, { jsonField: 'token', prefix: 'Bearer ' }),
          },
          permanentStatuses: [400, 422],
        },
      },
    });
    webhookOutputs(this, webhooks);
  }
}
