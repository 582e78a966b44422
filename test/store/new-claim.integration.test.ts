/**
 * writeNewClaim on DynamoDB Local, directly: the paths the receiver and processor tests reach
 * without checking what they return or write (docs/mutation.md, new-claim.ts). A claim of the same
 * event over its expired item keeps its progress and drops the old window; another event's expired
 * claim under a re-used key is replaced whole; a create whose response was lost is recognised by its
 * lease token, in both writes; any other error is thrown as it is.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { type ClaimRecord, ClaimStatus } from '../../lambdas/store/claim.js';
import { writeNewClaim } from '../../lambdas/store/new-claim.js';
import {
  createClaimsTable,
  documentClient,
  dynamoClient,
  getItem,
  putItem,
  withEachCommand,
} from '../helpers/aws.js';

const NOW = Date.parse('2026-12-07T12:00:00Z');
const NOW_S = Math.floor(NOW / 1000);
const dynamo = dynamoClient();
const doc = documentClient(dynamo);
let table: string;
beforeEach(async () => {
  table = await createClaimsTable(dynamo);
});

const PK = 'stripe:platform:pi_1:payment_intent.succeeded';
/** The claim a delivery of `eventId` writes now, held by `token`. */
const fresh = (eventId: string, token: string): ClaimRecord => ({
  pk: PK,
  provider: 'stripe',
  account: 'platform',
  eventId,
  eventType: 'payment_intent.succeeded',
  status: ClaimStatus.Received,
  deliveries: 1,
  firstSeenAt: new Date(NOW).toISOString(),
  lastSeenAt: new Date(NOW).toISOString(),
  expiresAt: NOW_S + 3600,
  leaseToken: token,
  leaseExpiresAt: NOW + 30_000,
  leaseOwner: 'receiver',
});
/** A claim of `eventId` left by an earlier window: expired, with its progress and its window's attributes. */
const expired = (eventId: string): Record<string, unknown> => ({
  ...fresh(eventId, 'old-worker'),
  status: ClaimStatus.Processing,
  expiresAt: NOW_S - 1,
  lastCompletedStep: 'state',
  plannedEffects: ['ledger', 'receipt'],
  effectAttempt: 'receipt',
  lastError: 'ledger answered 503',
  processingAttempts: 2,
  messageId: 'm-old',
});
const stored = () => getItem(doc, table, PK);

describe('writeNewClaim', () => {
  it('creates the claim where none exists', async () => {
    const record = fresh('evt_1', 'worker-A');
    expect(await writeNewClaim(doc, table, record, NOW)).toEqual({ created: true, claim: record });
    expect(await stored()).toEqual(record);
  });

  it('answers a live claim as existing, and leaves it as it is', async () => {
    const live = fresh('evt_1', 'worker-A');
    await putItem(doc, table, { ...live });
    expect(await writeNewClaim(doc, table, fresh('evt_1', 'worker-B'), NOW)).toEqual({
      created: false,
      existing: live,
    });
    expect(await stored()).toEqual(live);
  });

  it('answers created to its own write sent again after a lost response (the same lease token)', async () => {
    const record = fresh('evt_1', 'worker-A');
    await putItem(doc, table, { ...record });
    expect(await writeNewClaim(doc, table, record, NOW)).toEqual({ created: true, claim: record });
  });

  it("keeps an expired claim's progress for the same event and drops its window's attributes", async () => {
    await putItem(doc, table, expired('evt_1'));
    const record = fresh('evt_1', 'worker-B');
    const result = await writeNewClaim(doc, table, record, NOW);
    const kept = {
      ...record,
      lastCompletedStep: 'state',
      plannedEffects: ['ledger', 'receipt'],
      effectAttempt: 'receipt',
    };
    expect(result).toEqual({ created: true, claim: kept });
    expect(await stored()).toEqual(kept);
  });

  it("replaces another event's expired claim under the same key whole", async () => {
    await putItem(doc, table, expired('evt_0'));
    const record = fresh('evt_1', 'worker-B');
    expect(await writeNewClaim(doc, table, record, NOW)).toEqual({ created: true, claim: record });
    expect(await stored()).toEqual(record);
  });

  it('answers existing when a live claim of a third event is written between its two writes', async () => {
    await putItem(doc, table, expired('evt_0'));
    const third = fresh('evt_2', 'worker-C');
    expect(await writeNewClaimWithInterleaving(third)).toEqual({ created: false, existing: third });
    expect(await stored()).toEqual(third);
  });

  it('answers created when its own replacement was written and its response lost', async () => {
    await putItem(doc, table, expired('evt_0'));
    const record = fresh('evt_1', 'worker-B');
    expect(await writeNewClaimWithInterleaving(record, record)).toEqual({ created: true, claim: record });
    expect(await stored()).toEqual(record);
  });

  it('skips attributes present but undefined (as `{ objectId: message.objectId }` builds them)', async () => {
    const record = fresh('evt_1', 'worker-A');
    const result = await writeNewClaim(doc, table, { ...record, objectId: undefined }, NOW);
    expect(result).toEqual({ created: true, claim: record });
    expect(await stored()).toEqual(record);
  });

  it('writes a record that sets every attribute of a window, with nothing to remove', async () => {
    await putItem(doc, table, expired('evt_1'));
    const record: ClaimRecord = {
      ...fresh('evt_1', 'worker-B'),
      enqueuedAt: new Date(NOW).toISOString(),
      messageId: 'm-new',
      lastError: 'e',
      lastErrorAt: new Date(NOW).toISOString(),
      outcome: 'applied',
      completedAt: new Date(NOW).toISOString(),
      failedAt: new Date(NOW).toISOString(),
      processingStartedAt: new Date(NOW).toISOString(),
      processingAttempts: 1,
      lastStepAt: new Date(NOW).toISOString(),
      replan: true,
      objectId: 'pi_1',
      stuckAt: new Date(NOW).toISOString(),
      stuckReason: 'r',
      sweeps: 1,
      lastSweptAt: new Date(NOW).toISOString(),
      sweepResend: true,
    } as ClaimRecord;
    const kept = {
      ...record,
      lastCompletedStep: 'state',
      plannedEffects: ['ledger', 'receipt'],
      effectAttempt: 'receipt',
    };
    expect(await writeNewClaim(doc, table, record, NOW)).toEqual({ created: true, claim: kept });
    expect(await stored()).toEqual(kept);
  });

  // DynamoDB returns the item on every failed condition here (the item exists, or the condition
  // could not fail); a failure without it is answered as "another live claim", never a TypeError.
  it.each(['UpdateItemCommand', 'PutItemCommand'])(
    'answers existing, unknown, to a failed condition that carries no item (%s)',
    async (failing) => {
      await putItem(doc, table, expired('evt_0'));
      const result = await withEachCommand(
        dynamo,
        (command) => {
          if (command === failing)
            throw new ConditionalCheckFailedException({
              message: 'The conditional request failed',
              $metadata: {},
            });
        },
        () => writeNewClaim(doc, table, fresh('evt_1', 'worker-B'), NOW),
      );
      expect(result).toEqual({ created: false, existing: undefined });
    },
  );

  it.each(['UpdateItemCommand', 'PutItemCommand'])(
    'throws an error other than a failed condition as it is (%s)',
    async (failing) => {
      await putItem(doc, table, expired('evt_0'));
      const outage = Object.assign(new Error('service unavailable'), { name: 'InternalServerError' });
      const result = await withEachCommand(
        dynamo,
        (command) => {
          if (command === failing) throw outage;
        },
        () => writeNewClaim(doc, table, fresh('evt_1', 'worker-B'), NOW).catch((e: unknown) => e),
      );
      expect(result).toBe(outage);
    },
  );
});

/**
 * writeNewClaim over another event's expired claim, with `interloper` written (as another writer
 * would, or as our own replacement whose response was lost) just before the replacement's PutItem.
 */
async function writeNewClaimWithInterleaving(
  interloper: ClaimRecord,
  record: ClaimRecord = fresh('evt_1', 'worker-B'),
): Promise<unknown> {
  const other = documentClient(dynamoClient());
  let written = false;
  return withEachCommand(
    dynamo,
    async (command) => {
      if (command !== 'PutItemCommand' || written) return;
      written = true;
      await putItem(other, table, { ...interloper });
    },
    () => writeNewClaim(doc, table, record, NOW),
  );
}
