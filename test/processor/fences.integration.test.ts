/**
 * The guarantees' second lines of defence, each driven to where the first check cannot stop it
 * (issue 31, point 6). Where the code checks twice (the plan, then a DynamoDB condition; the claim's
 * status, then its lease token), the other tests only reach cases the first check already refuses;
 * these reach the second. Each test names the condition it guards: deleting that condition makes it
 * fail (checked by hand when it was written; docs/mutation.md).
 *
 * On DynamoDB Local and the SQS emulator, through the receiver core, `processMessage`, the
 * ProcessingClaims and the StateStore. A worker "stalls" at a point the test releases, and the worker
 * that takes over runs with a clock past the first one's lease, as a redelivery after it would.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EXAMPLE_APPLIERS } from '../../examples/payments/appliers/index.js';
import { PAYMENT_INTENT_RANK, paymentRowKey } from '../../examples/payments/appliers/stripe.js';
import { type ProcessorDeps, type ProcessorLog, processMessage } from '../../lambdas/processor/core.js';
import { num, obj, str } from '../../lambdas/processor/sdk/index.js';
import type { Applier, EventOrder } from '../../lambdas/processor/types.js';
import { CLAIM_RETENTION_DEFAULT_SECONDS } from '../../lambdas/shared/claim-retention.js';
import { ClaimStatus } from '../../lambdas/store/claim.js';
import { LeaseLostError } from '../../lambdas/store/processing-claims.js';
import { receiveAll } from '../helpers/aws.js';
import { stripePaymentIntentEvent } from '../helpers/events.js';
import { type LogLine, recordingLog } from '../helpers/log.js';
import { createPipelineHarness, type PipelineHarness } from '../helpers/pipeline-harness.js';
import { stripeHeaders } from '../helpers/signing.js';

const DAY_MS = 24 * 3600 * 1000;
const LEASE_SECONDS = 30;
/** A clock just past a lease taken now: the worker a redelivery hands the message to. */
const pastTheLease = () => Date.now() + (LEASE_SECONDS + 1) * 1000;

let h: PipelineHarness;
afterEach(async () => {
  await h?.stop();
});

/** A recording log whose warnings (message and details) the tests read. */
function warningLog(): ProcessorLog & { readonly warnings: () => Omit<LogLine, 'level'>[] } {
  const { log, lines } = recordingLog();
  return {
    ...log,
    warnings: () =>
      lines.filter((l) => l.level === 'warn').map(({ message, details }) => ({ message, details })),
  };
}

/** A point a worker waits at until the test releases it; `reached` resolves when it gets there. */
function stallPoint() {
  let arrive!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((resolve) => {
    arrive = resolve;
  });
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    reached,
    release,
    async stall() {
      arrive();
      await released;
    },
  };
}
type StallPoint = ReturnType<typeof stallPoint>;

function stripePaymentApplier(): Applier {
  const applier = EXAMPLE_APPLIERS.stripe?.['payment_intent.*'];
  if (!applier) throw new Error('the example appliers have no Stripe payment_intent applier');
  return applier;
}

/** The example Stripe applier, stalling after its plan's read; then it returns the plan, or throws. */
function stallsWhilePlanning(point: StallPoint, failWith?: Error): ProcessorDeps['appliers'] {
  const real = stripePaymentApplier();
  const applier: Applier = {
    ...real,
    async plan(event, context) {
      const plan = await real.plan(event, context);
      await point.stall();
      if (failWith) throw failWith;
      return plan;
    },
  };
  return { stripe: { 'payment_intent.*': applier } };
}

/**
 * An applier whose only effect (so the last: its marker is DONE) stalls before it returns. The
 * effect declares the ledger's adapter, which honours the idempotency key, so the worker that takes
 * over runs it again (an effect that may act twice would be left in doubt instead: effects-in-doubt
 * tests); it is counted here, and what it does twice is not what these tests are about.
 */
function stallsInItsEffect(point: StallPoint, runs: string[], name: string): ProcessorDeps['appliers'] {
  const applier: Applier = {
    plan: async () => ({ effects: ['notify'], outcome: 'applied' }),
    effects: {
      notify: {
        adapter: 'ledger',
        run: async () => {
          runs.push(name);
          await point.stall();
        },
      },
    },
  };
  return { stripe: { 'payment_intent.*': applier } };
}

/**
 * Worker B takes the claim over from a stalled worker (its clock past A's lease) and stalls while
 * planning, holding the claim PROCESSING; `heldByB` is the claim as B holds it.
 */
async function takenOverWhilePlanning(message: string, receiveCount: number, key: string, log: ProcessorLog) {
  const b = stallPoint();
  const workerB = processMessage(
    message,
    receiveCount,
    worker('worker-B', stallsWhilePlanning(b), log, pastTheLease),
  );
  await b.reached;
  const heldByB = await h.receiver.claim(key);
  expect(heldByB).toMatchObject({ status: ClaimStatus.Processing, leaseToken: 'worker-B' });
  return { b, workerB, heldByB };
}

/** Delivers a Stripe payment through the receiver core and takes its queued message off the queue. */
async function acceptedPayment(intentId: string) {
  const body = JSON.stringify(stripePaymentIntentEvent({ intentId }));
  const accepted = await h.receiver.deliver('stripe', body, stripeHeaders(body));
  expect(accepted).toMatchObject({ statusCode: 200, outcome: 'accepted' });
  const [message, ...others] = await receiveAll(h.receiver.sqs, h.receiver.queueUrl);
  expect(others).toEqual([]);
  return { key: accepted.key ?? '', message: message?.Body ?? '' };
}

function worker(
  token: string,
  appliers: ProcessorDeps['appliers'],
  log: ProcessorLog,
  clock?: () => number,
): ProcessorDeps {
  return {
    ...h.processorDeps,
    appliers,
    log,
    newLeaseToken: () => token,
    ...(clock ? { clock } : {}),
  };
}

const ledgerCalls = () => h.sink.entries().filter((e) => e.service === 'ledger' && !e.replay);
const receipts = () => h.sink.entries().filter((e) => e.service === 'mailer');

describe('the lease token fences a worker whose claim was taken over while the new holder is PROCESSING', () => {
  // Guards `leaseToken = :token` in ProcessingClaims.stepUpdate's condition, which the state commit's
  // transaction carries. B keeps the claim PROCESSING, so the status check alone lets A through:
  // without the token A's rows and `state` marker land under B, and A posts the ledger and marks
  // the event DONE.
  it("refuses A's state commit: no row, no effect, B's claim untouched; B then applies the event once", async () => {
    h = await createPipelineHarness({ leaseSeconds: LEASE_SECONDS });
    const { key, message } = await acceptedPayment('pi_fence_state');
    const log = warningLog();

    // A takes the claim, reads the row, and stalls while planning, past its lease.
    const a = stallPoint();
    const workerA = processMessage(message, 1, worker('worker-A', stallsWhilePlanning(a), log));
    await a.reached;
    // The redelivery goes to B, which takes the claim over and stalls while planning too.
    const { b, workerB, heldByB } = await takenOverWhilePlanning(message, 2, key, log);

    a.release();
    await expect(workerA).rejects.toBeInstanceOf(LeaseLostError);
    expect(await h.row('payments', paymentRowKey('platform', 'pi_fence_state'))).toBeUndefined();
    expect(await h.receiver.claim(key)).toEqual(heldByB);
    expect(h.sink.entries()).toEqual([]);
    expect(log.warnings()).toEqual([
      { message: 'processing lease was taken over; leaving the event to its new holder', details: { key } },
    ]);

    b.release();
    await expect(workerB).resolves.toMatchObject({ kind: 'done', outcome: 'applied' });
    expect(await h.row('payments', paymentRowKey('platform', 'pi_fence_state'))).toMatchObject({
      status: 'succeeded',
    });
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Done,
      lastCompletedStep: 'receipt',
    });
    expect(ledgerCalls()).toHaveLength(1);
    expect(receipts()).toHaveLength(1);
  });

  // Guards the same `leaseToken = :token`, on a step marker written alone (ProcessingClaims.markStep).
  // Without it A's DONE lands on the claim B is working on, and B's own marker is then refused.
  it("refuses A's step marker after its effect: the claim stays B's, and B marks it DONE", async () => {
    h = await createPipelineHarness({ leaseSeconds: LEASE_SECONDS });
    const { key, message } = await acceptedPayment('pi_fence_marker');
    const log = warningLog();
    const runs: string[] = [];

    // A commits its state step, then stalls inside its (only, so last) effect, past its lease.
    const a = stallPoint();
    const workerA = processMessage(message, 1, worker('worker-A', stallsInItsEffect(a, runs, 'A'), log));
    await a.reached;
    expect(await h.receiver.claim(key)).toMatchObject({ lastCompletedStep: 'state', leaseToken: 'worker-A' });
    // B takes over, resumes after `state`, and stalls in the same effect.
    const b = stallPoint();
    const workerB = processMessage(
      message,
      2,
      worker('worker-B', stallsInItsEffect(b, runs, 'B'), log, pastTheLease),
    );
    await b.reached;
    const heldByB = await h.receiver.claim(key);
    expect(heldByB).toMatchObject({
      status: ClaimStatus.Processing,
      leaseToken: 'worker-B',
      lastCompletedStep: 'state',
    });

    a.release();
    await expect(workerA).rejects.toBeInstanceOf(LeaseLostError);
    expect(await h.receiver.claim(key)).toEqual(heldByB);

    b.release();
    await expect(workerB).resolves.toMatchObject({ kind: 'done', outcome: 'applied' });
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Done,
      lastCompletedStep: 'notify',
      outcome: 'applied',
    });
    expect(runs).toEqual(['A', 'B']);
  });

  // Guards `leaseToken = :token` in ProcessingClaims.recordFailure's condition (releaseProcessing,
  // failProcessing). Without it a failing A ends B's live lease (release: a third worker could take
  // the claim while B works) or marks B's claim FAILED and drops it from the sweeper's index.
  it.each([
    ['releases', 1],
    ['fails, on its last attempt,', 3],
  ])("refuses A's failure record when A %s the claim B holds", async (_what, receiveCount) => {
    h = await createPipelineHarness({ leaseSeconds: LEASE_SECONDS, maxReceiveCount: 3 });
    const { key, message } = await acceptedPayment(`pi_fence_failure_${receiveCount}`);
    const log = warningLog();

    const a = stallPoint();
    const failure = new Error('the ERP timed out');
    const workerA = processMessage(
      message,
      receiveCount,
      worker('worker-A', stallsWhilePlanning(a, failure), log),
    );
    await a.reached;
    const { b, workerB, heldByB } = await takenOverWhilePlanning(message, 1, key, log);

    a.release();
    await expect(workerA).rejects.toBe(failure);
    expect(await h.receiver.claim(key)).toEqual(heldByB);
    // The operator is told why A's failure is not on the claim.
    expect(log.warnings()).toEqual([
      {
        message: 'could not record the failure on the claim',
        details: { key, error: `LeaseLostError: processing lease on ${key} is no longer ours` },
      },
    ]);

    b.release();
    await expect(workerB).resolves.toMatchObject({ kind: 'done', outcome: 'applied' });
    expect(await h.receiver.claim(key)).toMatchObject({ status: ClaimStatus.Done });
    expect(ledgerCalls()).toHaveLength(1);
    expect(receipts()).toHaveLength(1);
  });
});

/**
 * An applier that reads the row, as the plan API asks, and then writes whatever `newer` says: the
 * bug the commit's own stale-order condition is there for. Order as the example Stripe applier's.
 */
const ignoresNewer: Applier = {
  async plan(event, context) {
    const intent = obj(obj(event.payload.data)?.object);
    const pk = paymentRowKey(event.account, str(intent?.id) ?? '');
    const order: EventOrder = {
      at: num(event.payload.created) ?? 0,
      rank: PAYMENT_INTENT_RANK[event.eventType] ?? 0,
      eventId: event.eventId,
    };
    await context.read('payments', pk, order);
    return {
      writes: [
        { table: 'payments', pk, order, attributes: { status: str(intent?.status), type: event.eventType } },
      ],
    };
  },
};

describe("the commit's stale-order condition refuses what an applier that ignores `newer` would write", () => {
  const deliverAndProcess = async (event: object) => {
    const body = JSON.stringify(event);
    const accepted = await h.receiver.deliver('stripe', body, stripeHeaders(body));
    expect(accepted).toMatchObject({ statusCode: 200, outcome: 'accepted' });
    await h.drainQueue(20_000);
    return accepted.key ?? '';
  };

  // Guards `#gat < :gat` in StateStore's stale-order condition (made `<=`, a same-second event of
  // lower rank is written), and `#grank < :grank` (made `<=`, one of equal rank is): the rule of
  // lambdas/processor/sdk/order.ts, "equal both ways, the row is kept".
  it.each([
    // 7 then 3
    ['of lower rank', ['payment_intent.succeeded', 'succeeded'], ['payment_intent.processing', 'processing']],
    // 4 and 4: two transitions of one intent (same-type events share a key, so never reach the commit)
    [
      'of equal rank',
      ['payment_intent.amount_capturable_updated', 'requires_capture'],
      ['payment_intent.partially_funded', 'requires_payment_method'],
    ],
  ] as const)(
    'keeps the row when a same-second event %s comes second; a later second still writes it',
    async (rank, [firstType, firstStatus], [secondType, secondStatus]) => {
      const plans = new Map<string, number>();
      const counted: Applier = {
        plan: (event, context) => {
          plans.set(event.eventId, (plans.get(event.eventId) ?? 0) + 1);
          return ignoresNewer.plan(event, context);
        },
      };
      h = await createPipelineHarness({
        appliers: { stripe: { 'payment_intent.*': counted } },
        maxReceiveCount: 1,
      });
      const intentId = `pi_stale_${rank.split(' ')[1]}`;
      const created = Math.floor(Date.now() / 1000);
      const first = stripePaymentIntentEvent({ intentId, created, type: firstType, status: firstStatus });
      await deliverAndProcess(first);
      const row = () => h.row('payments', paymentRowKey('platform', intentId));
      const written = await row();
      expect(written).toMatchObject({
        lastEventId: first.id,
        status: firstStatus,
        lastEventRank: PAYMENT_INTENT_RANK[firstType],
      });

      const second = stripePaymentIntentEvent({ intentId, created, type: secondType, status: secondStatus });
      const secondKey = await deliverAndProcess(second);
      expect(await row()).toEqual(written);
      // The write can never succeed: the attempt fails, and with it the message (to the DLQ) and claim.
      expect(await h.receiver.claim(secondKey)).toMatchObject({
        status: ClaimStatus.Failed,
        lastError: expect.stringMatching(/^WriteConflictError: /),
      });
      expect(await h.dlqMessages()).toBe(1);
      // Planned again after each refusal, five times in all (a row that moved may settle), then given up.
      expect(plans.get(second.id)).toBe(5);

      // The condition refuses only the stale: an event a second later, of the lowest rank, is written.
      const later = stripePaymentIntentEvent({
        intentId,
        created: created + 1,
        type: 'payment_intent.created',
        status: 'requires_payment_method',
      });
      await deliverAndProcess(later);
      expect(await row()).toMatchObject({ lastEventId: later.id, status: 'requires_payment_method' });
    },
  );
});

describe("the claim's TTL follows every processing attempt", () => {
  // Guards `expiresAt = :retainUntil` in ProcessingClaims.beginProcessing's update. Without it the
  // claim keeps the TTL its receiver gave it, which can end before the message it must outlive does:
  // this attempt's redeliveries, then the DLQ's 14 days and a redrive (docs/rules.md, claim TTL).
  it('raises it to attempt time plus the retention when the message is processed 10 days after receipt', async () => {
    h = await createPipelineHarness({ leaseSeconds: LEASE_SECONDS });
    const { key, message } = await acceptedPayment('pi_ttl_late');
    const atReceipt = (await h.receiver.claim(key))?.expiresAt ?? 0;
    const attemptMs = Date.now() + 10 * DAY_MS;
    const required = Math.floor(attemptMs / 1000) + CLAIM_RETENTION_DEFAULT_SECONDS;
    expect(atReceipt).toBeLessThan(required);

    // The attempt fails after its state step (the ledger is down): SQS will deliver the message again.
    h.sink.failNext('ledger', 1);
    const log = warningLog();
    await expect(
      processMessage(message, 1, { ...h.processorDeps, log, clock: () => attemptMs }),
    ).rejects.toThrow(/^ledger answered 5\d\d/);
    expect(await h.receiver.claim(key)).toMatchObject({
      status: ClaimStatus.Processing,
      lastCompletedStep: 'state',
      processingAttempts: 1,
      expiresAt: required,
    });
  });
});
