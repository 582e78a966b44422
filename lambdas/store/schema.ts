/**
 * The claims table's physical schema: the single source for the store, the CDK table and the test
 * helpers that create tables in DynamoDB Local.
 */
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

export const CLAIMS_TABLE_SCHEMA = {
  partitionKey: 'pk',
  /** The table's TTL attribute (epoch seconds). DynamoDB deletes expired items lazily, often hours late. */
  ttlAttribute: 'expiresAt',
  /**
   * The sparse index of unfinished claims the sweeper reads (./unfinished-index.ts). Only items that
   * carry `sweepShard` are in it: a claim gets it when created and loses it when DONE or FAILED, so
   * the index holds unfinished claims only and a sweep never reads the finished ones.
   */
  unfinishedIndex: {
    name: 'unfinished-claims',
    /** String: `pending-00` .. `pending-31`, or `stuck`. */
    partitionKey: 'sweepShard',
    /** Number, epoch milliseconds: when the sweeper should look at the claim next. */
    sortKey: 'sweepAt',
  },
} as const;

/** The claims table as CreateTable takes it (test helpers and the benchmark create it this way). */
export function claimsTableDefinition(): Pick<
  CreateTableCommandInput,
  'AttributeDefinitions' | 'KeySchema' | 'GlobalSecondaryIndexes'
> {
  return {
    AttributeDefinitions: [
      { AttributeName: CLAIMS_TABLE_SCHEMA.partitionKey, AttributeType: 'S' },
      { AttributeName: CLAIMS_TABLE_SCHEMA.unfinishedIndex.partitionKey, AttributeType: 'S' },
      { AttributeName: CLAIMS_TABLE_SCHEMA.unfinishedIndex.sortKey, AttributeType: 'N' },
    ],
    KeySchema: [{ AttributeName: CLAIMS_TABLE_SCHEMA.partitionKey, KeyType: 'HASH' }],
    GlobalSecondaryIndexes: [
      {
        IndexName: CLAIMS_TABLE_SCHEMA.unfinishedIndex.name,
        KeySchema: [
          { AttributeName: CLAIMS_TABLE_SCHEMA.unfinishedIndex.partitionKey, KeyType: 'HASH' },
          { AttributeName: CLAIMS_TABLE_SCHEMA.unfinishedIndex.sortKey, KeyType: 'RANGE' },
        ],
        // Keys only: a claim's other attributes change at every step, and a projected attribute that
        // changes costs an index write; keys change only when the claim enters or leaves the index.
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ],
  };
}
