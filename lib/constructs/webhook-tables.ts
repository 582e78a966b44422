/**
 * The claims table: one item per idempotency key, expired by TTL. On-demand, point-in-time recovery
 * on, AWS-owned encryption. Business tables are yours: pass them to the construct's `tables` prop.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { CLAIMS_TABLE_SCHEMA } from '../../lambdas/store/schema.js';

export interface WebhookTablesProps {
  /**
   * What happens to the tables (and their data) when they leave the stack.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

export class WebhookTables extends Construct {
  /** Claims: partition key `pk` (the idempotency key), TTL attribute `expiresAt`, index `unfinished-claims`. */
  public readonly claims: dynamodb.Table;

  constructor(scope: Construct, id: string, props: WebhookTablesProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    this.claims = new dynamodb.Table(this, 'Claims', {
      partitionKey: { name: CLAIMS_TABLE_SCHEMA.partitionKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: CLAIMS_TABLE_SCHEMA.ttlAttribute,
      removalPolicy,
    });
    // The sparse index of unfinished claims, read by the sweeper (lambdas/store/unfinished-index.ts).
    const unfinished = CLAIMS_TABLE_SCHEMA.unfinishedIndex;
    this.claims.addGlobalSecondaryIndex({
      indexName: unfinished.name,
      partitionKey: { name: unfinished.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: unfinished.sortKey, type: dynamodb.AttributeType.NUMBER },
      projectionType: dynamodb.ProjectionType.KEYS_ONLY,
    });
  }
}
