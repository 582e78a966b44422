/**
 * ProcessingClaims on DynamoDB Local, case by case where the processor's tests reach a branch only
 * on its common side: taking claims whose TTL is already later than the attempt's, a worker's own
 * update retried after a lost response, errors that are not a failed condition, a receiver racing
 * the creation of a claim, what a step marker leaves out, and what a failure removes. The mutation
 * run (docs/mutation.md) found each of these untested.
 */
import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { CLAIM_RETENTION_DEFAULT_SECONDS } from '../../lambdas/shared/claim-retention.js';
import {
  type ClaimRecord,
  ClaimStatus,
  type Lease,
  type NewClaim,
  newClaimRecord,
} from '../../lambdas/store/claim.js';
import { ProcessingClaims } from '../../lambdas/store/processing-claims.js';
import {
  createClaimsTable,
  documentClient,
  dynamoClient,
  getItem,
  putItem,
  withEachCommand,
} from '../helpers/aws.js';

const NOW = Date.parse('2026-12-04T12:00:00Z');
const NOW_S = Math.floor(NOW / 1000);
/** The TTL an attempt now asks for (the default retention). */
const RETAIN = NOW_S + CLAIM_RETENTION_DEFAULT_SECONDS;

const dynamo = dynamoClient();
const doc = documentClient(dynamo);
let table: string;
let claims: ProcessingClaims;
beforeEach(async () => {
  table = await createClaimsTable(dynamo);
  claims = new ProcessingClaims(dynamo, table);
});

let sequence = 0;
function newClaim(): NewClaim {
  sequence += 1;
  return {
    pk: `stripe:platform:evt_claims_${sequence}`,
    provider: 'stripe',
    account: 'platform',
    eventId: `evt_claims_${sequence}`,
    eventType: 'payment_intent.succeeded',
    expiresAt: RETAIN,
  };
}
const workerLease = (token = 'worker-1'): Lease => ({ token, expiresAt: NOW + 30_000, owner: 'processor' });
const stored = async (pk: string) => (await getItem(doc, table, pk)) as ClaimRecord | undefined;

/** A claim as it stands in `status`, under a lease from `leaseExpiresAt`, with TTL `expiresAt`. */
async function seed(
  claim: NewClaim,
  status: ClaimStatus,
  fields: { leaseExpiresAt: number; expiresAt: number; owner?: 'receiver' | 'processor' },
) {
  const lease: Lease = {
    token: 'earlier-holder',
    expiresAt: fields.leaseExpiresAt,
    owner: fields.owner ?? 'receiver',
  };
  const record = {
    ...newClaimRecord({ ...claim, expiresAt: fields.expiresAt }, lease, status, NOW - 60_000),
  };
  await putItem(doc, table, record);
  return record;
}

/** The DynamoDB commands `fn` sends through the claims' client, by name. */
async function commandsOf(fn: () => Promise<unknown>): Promise<string[]> {
  const names: string[] = [];
  await withEachCommand(dynamo, (command) => names.push(command), fn);
  return names;
}

describe('ProcessingClaims.beginProcessing', () => {
  // The update's condition refuses a claim whose TTL is later than the attempt's (`expiresAt <=
  // :retainUntil`: never lower it); a takeable one is then taken with its own TTL kept. Guards the
  // retry (`attempt === 0 && isTakeable(...) && existing.expiresAt > retainUntil`) and isTakeable.
  it.each([
    ['RECEIVED, its receiver lease ended', ClaimStatus.Received, NOW - 1],
    // The message exists, so the event is queued whatever the receiver's lease says.
    ['RECEIVED, its receiver lease still running', ClaimStatus.Received, NOW + 10_000],
    ['ENQUEUED', ClaimStatus.Enqueued, NOW - 1],
    ['FAILED', ClaimStatus.Failed, NOW - 1],
    ['PROCESSING, its lease ending this very millisecond', ClaimStatus.Processing, NOW],
  ])(
    'takes a %s claim whose TTL is later than the attempt asks, keeping that TTL',
    async (_what, status, leaseEnd) => {
      const claim = newClaim();
      const later = RETAIN + 86_400;
      await seed(claim, status, { leaseExpiresAt: leaseEnd, expiresAt: later });

      const result = await claims.beginProcessing(claim, workerLease(), NOW, RETAIN);
      expect(result).toMatchObject({
        kind: 'claimed',
        claim: {
          status: ClaimStatus.Processing,
          leaseToken: 'worker-1',
          expiresAt: later,
          processingAttempts: 1,
        },
      });
      expect(await stored(claim.pk)).toMatchObject({ leaseToken: 'worker-1', expiresAt: later });
    },
  );

  // The retry is for a takeable claim only: one held under a live processing lease is busy at the
  // cost of one conditional write, whatever its TTL (guards isTakeable's lease and status checks,
  // which would otherwise send a second write that fails the same way). A RECEIVED claim is takeable
  // under a live receiver lease: the message exists, so the event is queued.
  it('answers busy with one write for a claim under a live processing lease, even when its TTL is later', async () => {
    const claim = newClaim();
    const held = await seed(claim, ClaimStatus.Processing, {
      leaseExpiresAt: NOW + 1,
      expiresAt: RETAIN + 86_400,
      owner: 'processor',
    });
    let result: Awaited<ReturnType<ProcessingClaims['beginProcessing']>> | undefined;
    const sent = await commandsOf(async () => {
      result = await claims.beginProcessing(claim, workerLease(), NOW, RETAIN);
    });
    expect(result).toEqual({ kind: 'busy', claim: held });
    expect(sent).toEqual(['UpdateItemCommand']);
    expect(await stored(claim.pk)).toEqual(held);
  });

  // Guards `attempt === 0`: one retry with the stored TTL, not a loop. When the TTL moves again
  // between the two writes (another writer raised it), the message is retried later instead.
  it('retries a takeable claim with a later TTL once: busy when the TTL moved again before the retry', async () => {
    const claim = newClaim();
    await seed(claim, ClaimStatus.Enqueued, { leaseExpiresAt: NOW - 1, expiresAt: RETAIN + 100 });
    const other = documentClient(dynamoClient());
    let updates = 0;
    let result: Awaited<ReturnType<ProcessingClaims['beginProcessing']>> | undefined;
    await withEachCommand(
      dynamo,
      async (command) => {
        if (command !== 'UpdateItemCommand') return;
        updates += 1;
        // Before each retry, the TTL is raised again by another writer.
        if (updates > 1)
          await putItem(other, table, { ...(await stored(claim.pk)), expiresAt: RETAIN + 100 * updates });
      },
      async () => {
        result = await claims.beginProcessing(claim, workerLease(), NOW, RETAIN);
      },
    );
    expect(updates).toBe(2);
    expect(result).toMatchObject({
      kind: 'busy',
      claim: { status: ClaimStatus.Enqueued, expiresAt: RETAIN + 200 },
    });
  });

  it('answers claimed to its own update sent again after a lost response, counting one attempt', async () => {
    const claim = newClaim();
    await seed(claim, ClaimStatus.Enqueued, { leaseExpiresAt: NOW - 1, expiresAt: RETAIN });
    const first = await claims.beginProcessing(claim, workerLease(), NOW, RETAIN);
    // The SDK's retry of the same request (same token) finds the claim already ours.
    const again = await claims.beginProcessing(claim, workerLease(), NOW + 5, RETAIN);
    expect(again).toEqual({ kind: 'claimed', claim: first.claim });
    expect(await stored(claim.pk)).toMatchObject({ leaseToken: 'worker-1', processingAttempts: 1 });
    // Another worker's token does not pass for ours.
    expect(await claims.beginProcessing(claim, workerLease('worker-2'), NOW + 5, RETAIN)).toMatchObject({
      kind: 'busy',
    });
  });

  it('creates the claim from the message when none exists, as the processor holds it', async () => {
    const claim = newClaim();
    const result = await claims.beginProcessing(claim, workerLease(), NOW, RETAIN, 'events/stripe/a.json');
    expect(result).toMatchObject({
      kind: 'claimed',
      claim: {
        pk: claim.pk,
        status: ClaimStatus.Processing,
        leaseToken: 'worker-1',
        leaseOwner: 'processor',
        expiresAt: RETAIN,
        archiveKey: 'events/stripe/a.json',
        processingAttempts: 1,
      },
    });
    expect(await stored(claim.pk)).toEqual(result.claim);
  });

  it('answers busy with the receiver’s claim when a receiver creates a live one between its update and its create', async () => {
    const claim = newClaim();
    const receivers = documentClient(dynamoClient());
    let receiverClaim: ClaimRecord | undefined;
    const name = 'receiver-wins-the-race';
    let updates = 0;
    dynamo.middlewareStack.add(
      (next, context) => async (args) => {
        // The second UpdateItem is the create: a receiver's claim lands just before it.
        if (context.commandName === 'UpdateItemCommand' && ++updates === 2) {
          receiverClaim = newClaimRecord(
            claim,
            { token: 'receiver-lease', expiresAt: NOW + 10_000, owner: 'receiver' },
            ClaimStatus.Received,
            NOW,
          );
          await putItem(receivers, table, { ...receiverClaim });
        }
        return next(args);
      },
      { step: 'initialize', name },
    );
    try {
      const result = await claims.beginProcessing(claim, workerLease(), NOW, RETAIN);
      expect(result).toEqual({ kind: 'busy', claim: receiverClaim });
    } finally {
      dynamo.middlewareStack.remove(name);
    }
    expect(await stored(claim.pk)).toEqual(receiverClaim);
  });

  it('throws an error that is not a failed condition, and creates nothing', async () => {
    const claim = newClaim();
    const throttled = new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} });
    const name = 'throttle-the-update';
    let updates = 0;
    dynamo.middlewareStack.add(
      (next, context) => async (args) => {
        // The first attempt is throttled; DynamoDB would take the next request.
        if (context.commandName === 'UpdateItemCommand' && ++updates === 1) throw throttled;
        return next(args);
      },
      { step: 'initialize', name },
    );
    try {
      await expect(claims.beginProcessing(claim, workerLease(), NOW, RETAIN)).rejects.toBe(throttled);
    } finally {
      dynamo.middlewareStack.remove(name);
    }
    expect(await stored(claim.pk)).toBeUndefined();
  });
});

describe('ProcessingClaims step markers and failures', () => {
  async function held() {
    const claim = newClaim();
    await claims.beginProcessing(claim, workerLease(), NOW, RETAIN);
    return claim.pk;
  }

  // Guards `length > 0` on writtenRows and unresumedEffects: an empty list is not written.
  it('records no empty writtenRows or unresumedEffects', async () => {
    const pk = await held();
    await claims.markStep(pk, 'worker-1', { step: 'state', writtenRows: [], unresumedEffects: [] }, NOW + 1);
    const claim = await stored(pk);
    expect(claim).toMatchObject({ lastCompletedStep: 'state' });
    expect(claim).not.toHaveProperty('writtenRows');
    expect(claim).not.toHaveProperty('unresumedEffects');
  });

  // Guards which marks remove a forced replay's `replan` (the state step, and DONE).
  it.each([
    ['the state step', { step: 'state' }],
    ['a DONE marker after an effect', { step: 'ledger', done: 'applied' }],
  ] as const)("removes a forced replay's replan with %s", async (_what, mark) => {
    const pk = await held();
    await putItem(doc, table, { ...(await stored(pk)), replan: true });
    await claims.markStep(pk, 'worker-1', mark, NOW + 1);
    expect(await stored(pk)).not.toHaveProperty('replan');
  });

  // Guards the archive key on a step: the attempt that archived the payload after taking the claim
  // records where with its next write.
  it('records where the payload is with a step', async () => {
    const pk = await held();
    await claims.markStep(pk, 'worker-1', { step: 'state', archiveKey: 'events/z.json' }, NOW + 1);
    expect(await stored(pk)).toMatchObject({ lastCompletedStep: 'state', archiveKey: 'events/z.json' });
  });

  // Guards how a failure's REMOVE list is joined: a refused call's record goes with the lease and the
  // index entry, each attribute by its own name.
  it('fails a claim whose recorded effect call was refused: the call record, the lease and the index entry go', async () => {
    const pk = await held();
    await claims.beginEffect(pk, 'worker-1', 'receipt', NOW + 1, NOW + 30_000);
    expect(await stored(pk)).toMatchObject({ effectAttempt: 'receipt' });
    await claims.failProcessing(pk, 'worker-1', 'HttpEffectError: 422', NOW + 2, RETAIN, undefined, {
      effectNotPerformed: true,
    });
    const failed = await stored(pk);
    expect(failed).toMatchObject({ status: ClaimStatus.Failed, lastError: 'HttpEffectError: 422' });
    for (const gone of [
      'effectAttempt',
      'effectAttemptAt',
      'leaseToken',
      'leaseExpiresAt',
      'leaseOwner',
      'sweepShard',
      'sweepAt',
    ])
      expect(failed).not.toHaveProperty(gone);
  });

  it('fails a claim holding no lease, out of the unfinished index, with why and where its payload is', async () => {
    const pk = await held();
    const keep = RETAIN + 3_600;
    await claims.failProcessing(pk, 'worker-1', 'Error: the ledger is down', NOW + 1, keep, 'events/x.json');
    const failed = await stored(pk);
    expect(failed).toMatchObject({
      status: ClaimStatus.Failed,
      lastError: 'Error: the ledger is down',
      lastErrorAt: new Date(NOW + 1).toISOString(),
      failedAt: new Date(NOW + 1).toISOString(),
      archiveKey: 'events/x.json',
      expiresAt: keep,
    });
    for (const gone of ['leaseToken', 'leaseExpiresAt', 'leaseOwner', 'sweepShard', 'sweepAt'])
      expect(failed).not.toHaveProperty(gone);
  });

  it('releases a claim by ending its lease now, keeping PROCESSING, the index entry and where its payload is', async () => {
    const pk = await held();
    const before = await stored(pk);
    await claims.releaseProcessing(pk, 'worker-1', 'Error: the ledger is down', NOW + 1, 'events/y.json');
    expect(await stored(pk)).toEqual({
      ...before,
      leaseExpiresAt: NOW + 1,
      lastError: 'Error: the ledger is down',
      lastErrorAt: new Date(NOW + 1).toISOString(),
      archiveKey: 'events/y.json',
    });
  });
});
