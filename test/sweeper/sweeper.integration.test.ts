/**
 * The sweeper, on DynamoDB Local, the SQS emulator and s3rver: claims stuck in each state are
 * recovered (their event sent again from the stored body) or reported, with no provider retry and
 * no SQS redelivery. Events enter through the real receiver core and leave through the real
 * processor; the sweeper's clock is moved forward instead of waiting out leases and graces. Only
 * what the servers cannot do on demand is simulated: a process dying, a message lost from the queue.
 */
import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { parseEventMessage, processMessage } from '../../lambdas/processor/core.js';
import { isClaimCheck, type QueueMessage } from '../../lambdas/queue/event-message.js';
import { faultInjector } from '../../lambdas/shared/faults.js';
import { ClaimStatus } from '../../lambdas/store/claim.js';
import { SweepStore } from '../../lambdas/store/sweep-store.js';
import { pendingShard, STUCK_SHARD, UNFINISHED_INDEX } from '../../lambdas/store/unfinished-index.js';
import { type SweeperDeps, sweep } from '../../lambdas/sweeper/core.js';
import { sampleDelivery } from '../../local/samples.js';
import { createPipelineHarness, type PipelineHarness } from '../helpers/pipeline-harness.js';
import { githubHeaders, TEST_SECRETS } from '../helpers/signing.js';

let h: PipelineHarness;
afterEach(async () => {
  await h?.stop();
});

const SETTINGS = {
  receivedGraceMs: 60_000,
  processingGraceMs: 300_000,
  enqueuedStaleMs: 3_600_000,
  maxRequeues: 3,
  maxClaimsPerRun: 100,
};
const MINUTE = 60_000;
const HOUR = 3_600_000;

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** The sweeper as the handler builds it, with its clock `aheadMs` in the future. */
function sweeper(aheadMs: number, settings: Partial<typeof SETTINGS> = {}): SweeperDeps {
  return {
    claims: new SweepStore(h.receiver.dynamo, h.receiver.tableName),
    queue: h.receiver.queue,
    archive: h.receiver.archive,
    settings: { ...SETTINGS, ...settings },
    log: silent,
    clock: () => Date.now() + aheadMs,
  };
}

async function deliverPush(delivery: string, options: { bytes?: number; fault?: string } = {}) {
  const body = sampleDelivery('github', {
    secret: TEST_SECRETS.github,
    eventId: delivery,
    ...(options.bytes ? { bytes: options.bytes } : {}),
  }).body;
  const headers = await githubHeaders(body, { delivery });
  const faultPoint = options.fault ? faultInjector(options.fault) : undefined;
  const result = await h.receiver.deliver(
    'github',
    body,
    headers,
    faultPoint ? { deps: { faultPoint } } : {},
  );
  return { body, headers, result, key: result.key ?? '' };
}

/** Takes every message off the queue for good, as a purge, an expiry or a DLQ move would. */
async function loseQueuedMessages(): Promise<QueueMessage[]> {
  const lost: QueueMessage[] = [];
  for (;;) {
    const page = await h.receiver.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: h.receiver.queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
      }),
    );
    if (!page.Messages?.length) return lost;
    for (const message of page.Messages) {
      lost.push(parseEventMessage(message.Body ?? ''));
      await h.receiver.sqs.send(
        new DeleteMessageCommand({ QueueUrl: h.receiver.queueUrl, ReceiptHandle: message.ReceiptHandle }),
      );
    }
  }
}

describe('claims enter and leave the index of unfinished claims', () => {
  it('indexes a new claim until it is DONE, so a sweep never reads finished claims', async () => {
    h = await createPipelineHarness();
    const { key } = await deliverPush('sw-index');
    const queued = await h.receiver.claim(key);
    expect(queued).toMatchObject({ status: ClaimStatus.Enqueued, sweepShard: pendingShard(key) });
    expect(queued?.sweepAt).toBeGreaterThan(Date.now());

    await h.drainQueue();
    const done = await h.receiver.claim(key);
    expect(done?.status).toBe(ClaimStatus.Done);
    expect(done).not.toHaveProperty('sweepShard');
    expect(done).not.toHaveProperty('sweepAt');
    const indexed = await h.receiver.doc.send(
      new QueryCommand({
        TableName: h.receiver.tableName,
        IndexName: UNFINISHED_INDEX,
        KeyConditionExpression: 'sweepShard = :shard',
        ExpressionAttributeValues: { ':shard': pendingShard(key) },
      }),
    );
    expect(indexed.Items ?? []).toEqual([]);

    const report = await sweep(sweeper(30 * 24 * HOUR));
    expect(report).toMatchObject({ due: 0, requeued: [], reported: [] });
    expect(await h.receiver.depth()).toBe(0);
  });
});

describe('claims that failed leave the index', () => {
  it('takes a FAILED claim out of the index (its message is in the DLQ, which alarms) and a redrive puts it back', async () => {
    h = await createPipelineHarness({ maxReceiveCount: 1, faultPoints: 'processor.afterClaim@sw-failed:1' });
    const { key } = await deliverPush('sw-failed');
    await h.drainQueue();
    const failed = await h.receiver.claim(key);
    expect(failed?.status).toBe(ClaimStatus.Failed);
    expect(failed).not.toHaveProperty('sweepShard');
    expect(await h.dlqMessages()).toBe(1);

    // A redrive (the processor taking the FAILED claim again) brings it back into the index.
    const lease = { token: 'redrive', expiresAt: Date.now() + MINUTE, owner: 'processor' as const };
    const begun = await h.processorDeps.claims.beginProcessing(
      {
        pk: key,
        provider: 'github',
        account: failed?.account ?? '',
        eventId: 'sw-failed',
        eventType: 'push',
        expiresAt: failed?.expiresAt ?? 0,
      },
      lease,
      Date.now(),
      failed?.expiresAt ?? 0,
    );
    expect(begun.kind).toBe('claimed');
    expect(await h.receiver.claim(key)).toMatchObject({
      sweepShard: pendingShard(key),
      sweepAt: lease.expiresAt,
    });
  });
});

describe('sweeper: RECEIVED claims whose receiver never queued the event', () => {
  it('re-sends a claim-checked push whose receiver stopped after storing the body (GitHub never retries)', async () => {
    h = await createPipelineHarness();
    const { key, result } = await deliverPush('sw-received-stored', {
      bytes: 500_000,
      fault: 'receiver.afterPayloadStored',
    });
    expect(result.statusCode).toBe(500);
    expect(await h.receiver.claim(key)).toMatchObject({ status: ClaimStatus.Received });
    expect(await h.receiver.depth()).toBe(0);

    // Within the grace: left alone.
    expect((await sweep(sweeper(0))).requeued).toEqual([]);
    const report = await sweep(sweeper(SETTINGS.receivedGraceMs + MINUTE));
    expect(report.requeued).toEqual([key]);
    const claim = await h.receiver.claim(key);
    expect(claim).toMatchObject({ status: ClaimStatus.Enqueued, sweeps: 1 });
    expect(claim?.archiveKey).toMatch(/^events\/github\//);

    await h.drainQueue();
    expect(await h.receiver.claim(key)).toMatchObject({ status: ClaimStatus.Done, outcome: 'applied' });
  });

  it('reports a small push whose receiver failed before queueing it, and a provider retry clears the report', async () => {
    h = await createPipelineHarness();
    const first = await deliverPush('sw-received-inline', { fault: 'receiver.afterClaim' });
    expect(first.result.statusCode).toBe(500);

    const report = await sweep(sweeper(SETTINGS.receivedGraceMs + MINUTE));
    expect(report.requeued).toEqual([]);
    expect(report.reported).toEqual([
      expect.objectContaining({ key: first.key, status: ClaimStatus.Received }),
    ]);
    expect(report.stuck).toBe(1);
    const stuck = await h.receiver.claim(first.key);
    expect(stuck).toMatchObject({ status: ClaimStatus.Received, sweepShard: STUCK_SHARD });
    expect(stuck?.stuckReason).toContain('only a provider retry can bring it back');
    expect(stuck?.stuckReason).toContain('injected fault at receiver.afterClaim');
    // Reported once: a later run does not read it again.
    expect(await sweep(sweeper(SETTINGS.receivedGraceMs + 2 * MINUTE))).toMatchObject({ due: 0, stuck: 1 });

    const retry = await h.receiver.deliver('github', first.body, first.headers);
    expect(retry).toMatchObject({ statusCode: 200, outcome: 'accepted' });
    const taken = await h.receiver.claim(first.key);
    expect(taken).toMatchObject({ sweepShard: pendingShard(first.key) });
    expect(taken).not.toHaveProperty('stuckReason');
    await h.drainQueue();
    expect(await h.receiver.claim(first.key)).toMatchObject({ status: ClaimStatus.Done });
    expect((await sweep(sweeper(0))).stuck).toBe(0);
  });

  it('never takes a receiver lease that is still live', async () => {
    h = await createPipelineHarness();
    const { key } = await deliverPush('sw-received-live', {
      bytes: 500_000,
      fault: 'receiver.afterPayloadStored',
    });
    // A new receiver takes the claim over (a provider retry arriving), holding a fresh lease.
    await h.receiver.store.takeOver(
      key,
      { status: ClaimStatus.Received, leaseToken: (await h.receiver.claim(key))?.leaseToken },
      { token: 'live-receiver', expiresAt: Date.now() + 10 * MINUTE, owner: 'receiver' },
      Date.now(),
    );
    const report = await sweep(sweeper(2 * MINUTE));
    expect(report).toMatchObject({ requeued: [], reported: [] });
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Received,
      leaseToken: 'live-receiver',
    });
    // And the store's fence refuses it even when asked directly: the lease is in the condition.
    const held = await h.receiver.claim(key);
    if (!held) throw new Error('no claim');
    const store = new SweepStore(h.receiver.dynamo, h.receiver.tableName);
    expect(await store.requeue(held, 'events/x', Date.now() + HOUR, Date.now() + 2 * MINUTE)).toBe(false);
    expect(await store.markStuck(held, 'no', Date.now() + 2 * MINUTE)).toBe(false);
    expect(await h.receiver.depth()).toBe(0);
  });
});

describe('sweeper: ENQUEUED claims whose message is gone', () => {
  it('re-sends a claim-checked event whose message was lost, and it is applied once', async () => {
    h = await createPipelineHarness();
    const { key } = await deliverPush('sw-enqueued-stored', { bytes: 500_000 });
    const [lost] = await loseQueuedMessages();
    expect(lost && isClaimCheck(lost)).toBe(true);

    expect((await sweep(sweeper(30 * MINUTE))).requeued).toEqual([]);
    expect((await sweep(sweeper(SETTINGS.enqueuedStaleMs + MINUTE))).requeued).toEqual([key]);
    await h.drainQueue();
    expect(await h.receiver.claim(key)).toMatchObject({ status: ClaimStatus.Done, processingAttempts: 1 });
  });

  it('reports an inline event whose message was lost, naming the queue and the DLQ', async () => {
    h = await createPipelineHarness();
    const { key } = await deliverPush('sw-enqueued-inline');
    await loseQueuedMessages();
    const report = await sweep(sweeper(SETTINGS.enqueuedStaleMs + MINUTE));
    expect(report.reported.map((r) => r.key)).toEqual([key]);
    expect((await h.receiver.claim(key))?.stuckReason).toMatch(/no processor has taken it.*DLQ/);
  });

  it('reports an event it already sent again maxRequeues times', async () => {
    h = await createPipelineHarness();
    const { key } = await deliverPush('sw-enqueued-limit', { bytes: 500_000 });
    await loseQueuedMessages();
    const settings = { maxRequeues: 1 };
    expect((await sweep(sweeper(SETTINGS.enqueuedStaleMs + MINUTE, settings))).requeued).toEqual([key]);
    await loseQueuedMessages();
    const second = await sweep(sweeper(2 * SETTINGS.enqueuedStaleMs + 2 * MINUTE, settings));
    expect(second.requeued).toEqual([]);
    expect(second.reported.map((r) => r.key)).toEqual([key]);
    expect((await h.receiver.claim(key))?.stuckReason).toContain('sent this event again 1 times');
  });
});

describe('sweeper: PROCESSING claims whose worker died with no redelivery', () => {
  it('re-sends an event from the processor archive when its last attempt died and the message left the queue', async () => {
    h = await createPipelineHarness();
    const { key } = await deliverPush('sw-processing');
    const [message] = await loseQueuedMessages();
    // A worker takes it, archives it, and dies: no release, no failure mark (a timeout, a crash).
    const dying = {
      ...h.processorDeps,
      log: silent,
      faultPoint: faultInjector('processor.afterClaim'),
      claims: Object.assign(Object.create(h.processorDeps.claims), {
        releaseProcessing: () => Promise.reject(new Error('the process died')),
        failProcessing: () => Promise.reject(new Error('the process died')),
      }),
    };
    await expect(processMessage(JSON.stringify(message), 1, dying)).rejects.toThrow();
    const held = await h.receiver.claim(key);
    expect(held).toMatchObject({ status: ClaimStatus.Processing });
    const leaseEnds = (held?.leaseExpiresAt ?? 0) - Date.now();

    // While the lease is live, and within the grace after it: left alone.
    expect((await sweep(sweeper(leaseEnds - 1_000))).requeued).toEqual([]);
    expect((await sweep(sweeper(leaseEnds + SETTINGS.processingGraceMs - MINUTE))).requeued).toEqual([]);
    expect((await h.receiver.claim(key))?.leaseToken).toBe(held?.leaseToken);

    const report = await sweep(sweeper(leaseEnds + SETTINGS.processingGraceMs + MINUTE));
    expect(report.requeued).toEqual([key]);
    await h.drainQueue();
    expect(await h.receiver.claim(key)).toMatchObject({ status: ClaimStatus.Done, processingAttempts: 2 });
  });

  it('reports a PROCESSING claim with no stored body, pointing at the DLQ', async () => {
    h = await createPipelineHarness();
    const { key } = await deliverPush('sw-processing-nobody');
    await loseQueuedMessages();
    await h.holdProcessingLease(key, 'dead-worker');
    const report = await sweep(sweeper(MINUTE + SETTINGS.processingGraceMs + MINUTE));
    expect(report.reported.map((r) => r.key)).toEqual([key]);
    expect((await h.receiver.claim(key))?.stuckReason).toMatch(/lease ran out.*redrive the DLQ/);
  });
});

describe('sweeper: races', () => {
  it('sends a stuck event once when two sweeps run at the same time', async () => {
    h = await createPipelineHarness();
    const { key } = await deliverPush('sw-race', { bytes: 500_000, fault: 'receiver.afterPayloadStored' });
    const ahead = SETTINGS.receivedGraceMs + MINUTE;
    const [a, b] = await Promise.all([sweep(sweeper(ahead)), sweep(sweeper(ahead))]);
    expect([...a.requeued, ...b.requeued]).toEqual([key]);
    expect(await h.receiver.depth()).toBe(1);
  });

  it('leaves a claim that a receiver took over between the read and the write', async () => {
    h = await createPipelineHarness();
    const { key } = await deliverPush('sw-race-receiver', {
      bytes: 500_000,
      fault: 'receiver.afterPayloadStored',
    });
    const deps = sweeper(SETTINGS.receivedGraceMs + MINUTE);
    const store = deps.claims as SweepStore;
    const seen = await store.get(key);
    if (!seen) throw new Error('no claim');
    await h.receiver.store.takeOver(
      key,
      { status: ClaimStatus.Received, leaseToken: seen.leaseToken },
      { token: 'retry', expiresAt: Date.now() + MINUTE, owner: 'receiver' },
      Date.now(),
    );
    expect(
      await store.requeue(
        seen,
        'events/x',
        Date.now() + HOUR,
        Date.now() + SETTINGS.receivedGraceMs + MINUTE,
      ),
    ).toBe(false);
    expect(await h.receiver.claim(key)).toMatchObject({ status: ClaimStatus.Received, leaseToken: 'retry' });
  });
});

describe('sweeper: housekeeping', () => {
  it('looks again later at a young ENQUEUED claim that was due, moving its index entry', async () => {
    h = await createPipelineHarness();
    // A claim-checked body, so the sweeper finds one when it is stale.
    const { key } = await deliverPush('sw-defer', { bytes: 500_000 });
    await loseQueuedMessages();
    const before = await h.receiver.claim(key);
    const sweptAt = Date.now() + 5 * MINUTE;
    const report = await sweep(sweeper(5 * MINUTE));
    expect(report).toMatchObject({ due: 1, deferred: 1, requeued: [], reported: [] });
    const after = await h.receiver.claim(key);
    expect(after?.status).toBe(ClaimStatus.Enqueued);
    // One processing grace on (a processor may take it meanwhile and die holding it), not an hour.
    expect(after?.sweepAt).toBeGreaterThanOrEqual(sweptAt + SETTINGS.processingGraceMs);
    expect(after?.sweepAt).toBeLessThan(sweptAt + SETTINGS.processingGraceMs + MINUTE);
    // Not due again until then; then deferred again, up to its ENQUEUED staleness.
    expect((await sweep(sweeper(9 * MINUTE))).due).toBe(0);
    expect(await sweep(sweeper(11 * MINUTE))).toMatchObject({ due: 1, deferred: 1, requeued: [] });
    const stale = Date.parse(before?.enqueuedAt ?? '') + SETTINGS.enqueuedStaleMs;
    expect(await sweep(sweeper(stale - Date.now() - MINUTE))).toMatchObject({ deferred: 1, requeued: [] });
    expect((await h.receiver.claim(key))?.sweepAt).toBe(stale);
    expect(await sweep(sweeper(stale - Date.now() + MINUTE))).toMatchObject({ requeued: [key] });
  });

  it('recovers a claim whose worker died holding its lease one grace after the lease, though the sweeper had deferred it while ENQUEUED', async () => {
    // Found by the soak (docs/soak.md): the processor keeps the index key, so a claim deferred to
    // its ENQUEUED staleness waited an hour, not the processing grace, after its worker died on
    // the message's last receive (SQS moved the message to the DLQ; the claim still PROCESSING).
    h = await createPipelineHarness();
    const { key } = await deliverPush('sw-died-after-defer', { bytes: 500_000 });
    expect(await sweep(sweeper(MINUTE))).toMatchObject({ due: 1, deferred: 1 });
    const [message] = await loseQueuedMessages();
    const lease = { token: 'dead-worker', expiresAt: Date.now() + MINUTE, owner: 'processor' as const };
    const taken = await h.processorDeps.claims.beginProcessing(
      {
        pk: key,
        provider: 'github',
        account: message?.account ?? '',
        eventId: message?.eventId ?? '',
        eventType: 'push',
        expiresAt: Math.floor(Date.now() / 1000) + 86_400,
      },
      lease,
      Date.now(),
      Math.floor(Date.now() / 1000) + 86_400,
      undefined,
    );
    expect(taken.kind).toBe('claimed');
    const ahead = 2 * MINUTE + SETTINGS.processingGraceMs + MINUTE;
    expect(await sweep(sweeper(ahead))).toMatchObject({ requeued: [key] });
    expect(await h.receiver.claim(key)).toMatchObject({ status: ClaimStatus.Enqueued, sweeps: 1 });
  });

  it('takes an expired claim out of the index instead of reading it on every run', async () => {
    h = await createPipelineHarness();
    const { key } = await deliverPush('sw-expired', { fault: 'receiver.afterClaim' });
    const claim = await h.receiver.claim(key);
    const pastTtl = (claim?.expiresAt ?? 0) * 1000 - Date.now() + MINUTE;
    const report = await sweep(sweeper(pastTtl));
    expect(report).toMatchObject({ due: 1, dropped: 1, reported: [] });
    const stored = await new SweepStore(h.receiver.dynamo, h.receiver.tableName).get(key);
    expect(stored).not.toHaveProperty('sweepShard');
    expect((await sweep(sweeper(pastTtl))).due).toBe(0);
  });

  it('makes a re-sent claim due again at once when the send fails, and the next run sends it', async () => {
    h = await createPipelineHarness();
    const { key } = await deliverPush('sw-sendfail', {
      bytes: 500_000,
      fault: 'receiver.afterPayloadStored',
    });
    const ahead = SETTINGS.receivedGraceMs + MINUTE;
    const failing = { ...sweeper(ahead), queue: { send: () => Promise.reject(new Error('SQS is down')) } };
    const first = await sweep(failing);
    expect(first).toMatchObject({ requeued: [], errors: 1 });
    const claim = await h.receiver.claim(key);
    expect(claim).toMatchObject({ status: ClaimStatus.Enqueued, sweeps: 1 });
    expect(claim?.lastError).toContain('sweeper send failed: Error: SQS is down');
    expect(claim?.sweepAt).toBeLessThanOrEqual(Date.now() + ahead);

    const second = await sweep(sweeper(ahead + 1_000));
    expect(second.requeued).toEqual([key]);
    await h.drainQueue();
    expect(await h.receiver.claim(key)).toMatchObject({ status: ClaimStatus.Done, sweeps: 2 });
  });

  it('reads at most maxClaimsPerRun claims a run and says the rest wait', async () => {
    h = await createPipelineHarness();
    await deliverPush('sw-cap-1', { fault: 'receiver.afterClaim:*' });
    await deliverPush('sw-cap-2', { fault: 'receiver.afterClaim:*' });
    const ahead = SETTINGS.receivedGraceMs + MINUTE;
    const first = await sweep(sweeper(ahead, { maxClaimsPerRun: 1 }));
    expect(first).toMatchObject({ due: 1, truncated: true });
    const second = await sweep(sweeper(ahead, { maxClaimsPerRun: 1 }));
    expect(second).toMatchObject({ due: 1, truncated: false, stuck: 2 });
  });
});
