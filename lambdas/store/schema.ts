/**
 * The claims table's physical schema: the single source for the store, the CDK table and the test
 * helpers that create tables in DynamoDB Local.
 */
export const CLAIMS_TABLE_SCHEMA = {
  partitionKey: 'pk',
  /** The table's TTL attribute (epoch seconds). DynamoDB deletes expired items lazily, often hours late. */
  ttlAttribute: 'expiresAt',
} as const;
