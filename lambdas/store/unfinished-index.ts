/**
 * Membership of the claims table's sparse index of unfinished claims (schema.ts): which shard a
 * claim is in and when the sweeper should look at it. The claim writers (receiver, processor, CLI)
 * add or remove these two attributes; the sweeper reads the index (./sweep-store.ts).
 *
 * Index write cost, per the DynamoDB developer guide ("Provisioned throughput considerations for
 * global secondary indexes", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Writes):
 * one write when an item enters the index, one when it leaves, two when an index key changes, none
 * when a write changes no projected attribute. A claim enters when created and leaves when DONE:
 * two index writes per event; every step in between changes no key and costs nothing.
 */
import { createHash } from 'node:crypto';
import { CLAIMS_TABLE_SCHEMA } from './schema.js';

export const UNFINISHED_INDEX = CLAIMS_TABLE_SCHEMA.unfinishedIndex.name;
export const SWEEP_SHARD = CLAIMS_TABLE_SCHEMA.unfinishedIndex.partitionKey;
export const SWEEP_AT = CLAIMS_TABLE_SCHEMA.unfinishedIndex.sortKey;

/**
 * Index partitions for unfinished claims. An index partition takes about 1,000 writes/s
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html),
 * and each event costs two index writes, so 32 shards carry 10,000 new events/s with headroom; a
 * sweep queries each shard once (32 queries, half a read unit each when nothing is due).
 */
export const PENDING_SHARD_COUNT = 32;
/** Claims the sweeper could not recover: for an operator (`webhooks stuck`). Sort key: the claim's TTL, in ms. */
export const STUCK_SHARD = 'stuck';

/** The pending shard of a key: stable, so a re-created claim lands where its old item was. */
export function pendingShard(pk: string): string {
  const n = createHash('sha256').update(pk).digest().readUInt32BE(0) % PENDING_SHARD_COUNT;
  return `pending-${String(n).padStart(2, '0')}`;
}

export function pendingShards(): string[] {
  return Array.from({ length: PENDING_SHARD_COUNT }, (_, n) => `pending-${String(n).padStart(2, '0')}`);
}

/** What an unfinished claim carries to be in the index. */
export function unfinishedMembership(pk: string, sweepAtMs: number): { sweepShard: string; sweepAt: number } {
  return { sweepShard: pendingShard(pk), sweepAt: sweepAtMs };
}

/** Attributes a finished (DONE or FAILED) claim drops: it leaves the index and any stuck report. */
export const UNFINISHED_ATTRIBUTES = [
  SWEEP_SHARD,
  SWEEP_AT,
  'stuckAt',
  'stuckReason',
  'sweepResend',
] as const;
