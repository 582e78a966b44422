/**
 * What every claims-table client shares (lambdas/store/claims-table.ts), on DynamoDB Local: a plain
 * client is wrapped so attributes left undefined are dropped, reads are strongly consistent, and
 * only a failed condition reads as "the condition failed": any other error is thrown, never taken
 * for an absent claim or a lost lease.
 */
import { ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClaimStatus, type NewClaim } from '../../lambdas/store/claim.js';
import { DynamoClaimStore } from '../../lambdas/store/dynamo-claim-store.js';
import { ProcessingClaims } from '../../lambdas/store/processing-claims.js';
import { createClaimsTable, documentClient, dynamoClient, getItem, withEachCommand } from '../helpers/aws.js';

const dynamo = dynamoClient();
const doc = documentClient(dynamo);
afterAll(() => dynamo.destroy());

const NOW = Date.now();
let table: string;
let store: DynamoClaimStore;
beforeAll(async () => {
  table = await createClaimsTable(dynamo);
  store = new DynamoClaimStore({ client: dynamo, tableName: table });
});

const lease = { token: 'tok', expiresAt: NOW + 30_000, owner: 'receiver' } as const;
const newClaim = (n: string, extra: Partial<NewClaim> = {}): NewClaim => ({
  pk: `stripe:acct:evt_${n}`,
  provider: 'stripe',
  account: 'acct',
  eventId: `evt_${n}`,
  eventType: 'charge.refunded',
  expiresAt: Math.floor(NOW / 1000) + 3600,
  ...extra,
});

describe('ClaimsTable', () => {
  it('writes the claim of an event that names no object without an objectId attribute', async () => {
    // An event that names no object: the claim is written without `objectId`.
    const claim = newClaim('no_object', { objectId: undefined, unmarked: undefined });
    expect(await store.createClaim(claim, lease, NOW)).toMatchObject({ created: true });
    const item = await getItem(doc, table, claim.pk);
    expect(item).toMatchObject({ pk: claim.pk, status: ClaimStatus.Received });
    expect(item).not.toHaveProperty('objectId');
    expect(item).not.toHaveProperty('unmarked');
  });

  it('reads a claim strongly consistent', async () => {
    // DynamoDB Local's reads are always consistent: the request itself is checked.
    const inputs: Readonly<Record<string, unknown>>[] = [];
    await withEachCommand(
      dynamo,
      (_command, input) => inputs.push(input),
      () => store.getClaim('stripe:acct:evt_any', NOW),
    );
    expect(inputs).toEqual([{ TableName: table, Key: { pk: 'stripe:acct:evt_any' }, ConsistentRead: true }]);
  });

  it('throws an error other than a failed condition, never reading it as an absent claim or a lost lease', async () => {
    const missing = new DynamoClaimStore({ client: dynamo, tableName: `${table}-missing` });
    // An update returning the item (a duplicate's count): undefined would mean "no live claim".
    await expect(missing.recordDuplicate('stripe:acct:evt_1', NOW)).rejects.toBeInstanceOf(
      ResourceNotFoundException,
    );
    // An update answering true or false (marking a claim nobody holds FAILED): false would mean
    // "the claim is held, done or gone".
    const missingClaims = new ProcessingClaims(dynamo, `${table}-missing`);
    await expect(missingClaims.failUnheld('stripe:acct:evt_1', 'boom', NOW, 0)).rejects.toBeInstanceOf(
      ResourceNotFoundException,
    );
  });

  it('reads a failed condition as one: undefined from an update returning the item, false from the others', async () => {
    expect(await store.recordDuplicate('stripe:acct:evt_absent', NOW)).toBeUndefined();
    expect(
      await new ProcessingClaims(dynamo, table).failUnheld('stripe:acct:evt_absent', 'boom', NOW, 0),
    ).toBe(false);
  });
});
