/**
 * The example app's stack (`IdempotentWebhooks`, deployed by bin/app.ts and run by `npm start`): the
 * receiver construct with the example's processor, its three business tables and its two effect
 * adapters. It is what a team's own stack looks like: create your tables, pass them with your
 * processor module and your effects, add the outputs.
 */
import { fileURLToPath } from 'node:url';
import { RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { tableOutputName } from '../../lambdas/processor/extension-names.js';
import {
  IdempotentWebhookReceiver,
  type IdempotentWebhookReceiverProps,
  type WebhookEffect,
} from '../../lib/idempotent-webhook-receiver.js';
import { WEBHOOK_STACK_DESCRIPTION, webhookOutputs } from '../../lib/webhook-stack.js';
import { EXAMPLE_EFFECTS, EXAMPLE_TABLES } from './appliers/index.js';

/** The example's processor module: the framework's processor with the example's appliers. */
export const EXAMPLE_PROCESSOR_ENTRY = fileURLToPath(new URL('./processor.ts', import.meta.url));

/**
 * The tables' CloudFormation logical ids from when the construct created them (before 0.2.0): kept,
 * so a stack deployed then keeps its tables and their data instead of getting new, empty ones.
 */
const TABLE_LOGICAL_IDS: Readonly<Record<(typeof EXAMPLE_TABLES)[number], string>> = {
  payments: 'WebhooksTablesPayments5B3F6428',
  orders: 'WebhooksTablesOrders8ABCFFAF',
  resources: 'WebhooksTablesResources9E9F018D',
};

/** The tables' stack outputs: public names that users' scripts read (CHANGELOG before any change). */
export const TABLE_OUTPUT_IDS: Readonly<Record<(typeof EXAMPLE_TABLES)[number], string>> = {
  payments: 'PaymentsTableName',
  orders: 'OrdersTableName',
  resources: 'ResourcesTableName',
};

export interface PaymentsExampleStackProps extends StackProps {
  /** The construct's other props (alarm email, throttling, ...). @default the construct's defaults */
  readonly receiver?: Omit<IdempotentWebhookReceiverProps, 'tables' | 'effects' | 'processorEntry'>;
  /** The ledger's and the mailer's URLs. @default unset: locally the effects sink; deployed, the effects are skipped */
  readonly effectUrls?: Partial<Readonly<Record<keyof typeof EXAMPLE_EFFECTS, string>>>;
}

export class PaymentsExampleStack extends Stack {
  public readonly webhooks: IdempotentWebhookReceiver;

  constructor(scope: Construct, id: string, props: PaymentsExampleStackProps = {}) {
    super(scope, id, { description: WEBHOOK_STACK_DESCRIPTION, ...props });
    const removalPolicy = props.receiver?.removalPolicy ?? RemovalPolicy.RETAIN;
    const tables = Object.fromEntries(
      EXAMPLE_TABLES.map((name) => {
        const table = new dynamodb.Table(this, tableOutputName(name).replace(/Name$/, ''), {
          // Business rows are keyed `pk`: the processor writes whole rows by key (absolute writes).
          partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
          billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
          pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
          removalPolicy,
        });
        (table.node.defaultChild as dynamodb.CfnTable).overrideLogicalId(TABLE_LOGICAL_IDS[name]);
        return [name, table];
      }),
    );
    const effects: Record<string, WebhookEffect> = {};
    for (const [name, effect] of Object.entries(EXAMPLE_EFFECTS)) {
      const url = props.effectUrls?.[name as keyof typeof EXAMPLE_EFFECTS];
      effects[name] = { ...effect, ...(url === undefined ? {} : { url }) };
    }
    this.webhooks = new IdempotentWebhookReceiver(this, 'Webhooks', {
      ...props.receiver,
      processorEntry: EXAMPLE_PROCESSOR_ENTRY,
      tables,
      effects,
    });
    webhookOutputs(this, this.webhooks, { tableOutputIds: TABLE_OUTPUT_IDS });
  }
}
