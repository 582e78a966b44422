import { describe, expect, it } from 'vitest';
import { inspectText, viewClaim } from '../../cli/commands/inspect.js';
import {
  type ClaimBaseline,
  claimBaseline,
  EXIT_PENDING,
  type FollowResult,
  followEntry,
  followExitCode,
  followFailed,
  summarizeFollow,
} from '../../cli/follow.js';
import type { StackContext } from '../../cli/stack.js';
import { type ClaimRecord, ClaimStatus } from '../../lambdas/store/claim.js';

const NOW = Date.parse('2026-12-03T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
/** A claim that failed once before, as a redrive finds it. */
const FAILED_BEFORE: ClaimBaseline = {
  attempts: 3,
  failedAt: iso(NOW - 60_000),
  lastErrorAt: iso(NOW - 60_000),
};
/** No live claim before the send. */
const NONE: ClaimBaseline = { attempts: 0, failedAt: null, lastErrorAt: null };

function claim(fields: Partial<ClaimRecord>): ClaimRecord {
  return {
    pk: 'stripe:platform:pi_1:payment_intent.succeeded',
    provider: 'stripe',
    account: 'platform',
    eventId: 'evt_1',
    eventType: 'payment_intent.succeeded',
    status: ClaimStatus.Done,
    deliveries: 1,
    firstSeenAt: iso(NOW - 60_000),
    lastSeenAt: iso(NOW - 60_000),
    expiresAt: Math.floor(NOW / 1000) + 3600,
    ...fields,
  };
}

describe('followEntry: where a redriven or replayed event stands', () => {
  it('calls a DONE claim resumed, and one with effects left for a person not resumed', () => {
    expect(
      followEntry('k', claim({ outcome: 'applied', lastCompletedStep: 'receipt' }), FAILED_BEFORE, NOW),
    ).toMatchObject({
      result: 'resumed',
      status: 'DONE',
    });
    const partial = followEntry(
      'k',
      claim({ outcome: 'applied', unresumedEffects: ['receipt'], recoveredFrom: 'business-row' }),
      NONE,
      NOW,
    );
    expect(partial).toMatchObject({ result: 'not-resumed', unresumedEffects: ['receipt'] });
    expect(partial.detail).toContain('receipt');
    expect(partial.detail).toContain('business-row');
  });

  it("tells a claim that failed again from one not taken yet by the claim's attempts, not by clocks", () => {
    const before = claim({
      status: ClaimStatus.Failed,
      processingAttempts: 3,
      failedAt: FAILED_BEFORE.failedAt ?? '',
      lastErrorAt: FAILED_BEFORE.lastErrorAt ?? '',
      lastError: 'old',
    });
    expect(followEntry('k', before, FAILED_BEFORE, NOW)).toMatchObject({ result: 'pending' });
    expect(followEntry('k', before, FAILED_BEFORE, NOW).detail).toBe(
      'still FAILED: the processor has not taken it yet',
    );
    // Lambda's clock 30 s behind the operator's: its failedAt is "before" the redrive by the
    // operator's clock, yet the processor took the claim three times more since.
    const again = claim({
      status: ClaimStatus.Failed,
      processingAttempts: 6,
      failedAt: iso(NOW - 30_000),
      lastErrorAt: iso(NOW - 30_000),
      lastError: 'Error: ledger 503',
    });
    expect(followEntry('k', again, FAILED_BEFORE, NOW)).toMatchObject({ result: 'failed' });
    expect(followEntry('k', again, FAILED_BEFORE, NOW).detail).toBe('FAILED again: Error: ledger 503');
  });

  it('calls FAILED again a claim failed since without a lease taken (the processor could not start)', () => {
    const unheld = claim({
      status: ClaimStatus.Failed,
      processingAttempts: 3,
      failedAt: iso(NOW - 1_000),
      lastError: 'Error: bad config',
    });
    expect(followEntry('k', unheld, FAILED_BEFORE, NOW).result).toBe('failed');
  });

  it('calls FAILED again a claim created and failed since, where none was live before', () => {
    const created = claim({ status: ClaimStatus.Failed, processingAttempts: 3, failedAt: iso(NOW) });
    expect(followEntry('k', created, NONE, NOW).result).toBe('failed');
  });

  it('treats an absent or expired claim as pending, as the processor treats it as absent', () => {
    expect(followEntry('k', undefined, NONE, NOW)).toMatchObject({ result: 'pending', status: null });
    const expired = claim({ status: ClaimStatus.Done, expiresAt: Math.floor(NOW / 1000) - 1 });
    expect(followEntry('k', expired, NONE, NOW)).toMatchObject({ result: 'pending', status: null });
  });

  it('reports a retry in progress with its error, and not the error from before the send', () => {
    const retrying = claim({
      status: ClaimStatus.Processing,
      processingAttempts: 4,
      lastCompletedStep: 'state',
      lastError: 'Error: ledger 503',
      lastErrorAt: iso(NOW - 40_000),
    });
    const entry = followEntry('k', retrying, FAILED_BEFORE, NOW);
    expect(entry.result).toBe('pending');
    expect(entry.detail).toBe('PROCESSING at state; retrying after: Error: ledger 503');
    const untouched = claim({
      status: ClaimStatus.Failed,
      processingAttempts: 3,
      failedAt: FAILED_BEFORE.failedAt ?? '',
      lastErrorAt: FAILED_BEFORE.lastErrorAt ?? '',
      lastError: 'Error: ledger 503',
    });
    expect(followEntry('k', untouched, FAILED_BEFORE, NOW).detail).not.toContain('retrying');
  });

  it('takes as baseline what the processor will see: none for an absent or expired claim', () => {
    expect(claimBaseline(undefined, NOW)).toEqual(NONE);
    const stored = claim({ status: ClaimStatus.Failed, processingAttempts: 3, failedAt: iso(NOW - 5) });
    expect(claimBaseline(stored, NOW)).toEqual({ attempts: 3, failedAt: iso(NOW - 5), lastErrorAt: null });
    expect(claimBaseline({ ...stored, expiresAt: Math.floor(NOW / 1000) - 1 }, NOW)).toEqual(NONE);
  });

  const report = (results: Array<{ result: FollowResult }>, notFollowed = 0) => ({
    waitedMs: 0,
    followed: results.length,
    notFollowed,
    results: [],
    summary: summarizeFollow(results),
  });

  it('fails the command only for events failed again or not fully resumed', () => {
    expect(followFailed(report([{ result: 'resumed' }, { result: 'pending' }]))).toBe(false);
    expect(followFailed(report([{ result: 'not-resumed' }]))).toBe(true);
    expect(followFailed(report([{ result: 'failed' }]))).toBe(true);
    expect(followFailed(undefined)).toBe(false);
  });

  it('exits 0 only when every event sent was seen finished, 3 while one is pending or not followed', () => {
    expect(EXIT_PENDING).toBe(3);
    expect(followExitCode(report([{ result: 'resumed' }, { result: 'resumed' }]))).toBe(0);
    expect(followExitCode(report([{ result: 'resumed' }, { result: 'pending' }]))).toBe(3);
    expect(followExitCode(report([{ result: 'resumed' }], 1))).toBe(3);
    expect(followExitCode(report([{ result: 'pending' }, { result: 'failed' }]))).toBe(1);
    expect(followExitCode(report([{ result: 'not-resumed' }], 5))).toBe(1);
    // --wait 0: nothing followed, as asked.
    expect(followExitCode(undefined)).toBe(0);
  });
});

describe('inspect: an expired claim is shown as the pipeline sees it', () => {
  const stack = { outputs: {} } as unknown as StackContext;
  const textOf = (view: Awaited<ReturnType<typeof viewClaim>>) =>
    inspectText(
      {
        stack: 'local',
        query: { kind: 'key', key: view.key },
        lookup: { method: 'get', key: view.key },
        claims: [view],
      },
      NOW,
    );

  it('gives no effective status past the TTL and says what the next delivery or redrive does', async () => {
    const stored = claim({
      status: ClaimStatus.Failed,
      lastCompletedStep: 'state',
      plannedEffects: ['ledger', 'receipt'],
      expiresAt: Math.floor(NOW / 1000) - 60,
    });
    const view = await viewClaim(stack, stored, NOW);
    expect(view).toMatchObject({ status: 'FAILED', effectiveStatus: null, ttl: { expired: true } });
    const text = textOf(view);
    expect(text).toContain('none (expired; stored as FAILED)');
    expect(text).toContain('keeping its step markers');
  });

  it('shows a live claim as stored, with a recovery and the effects left for a person', async () => {
    const view = await viewClaim(
      stack,
      claim({
        outcome: 'applied',
        recoveredFrom: 'business-row',
        unresumedEffects: ['receipt'],
        replan: true,
      }),
      NOW,
    );
    expect(view).toMatchObject({
      effectiveStatus: 'DONE',
      recoveredFrom: 'business-row',
      unresumedEffects: ['receipt'],
      replan: true,
    });
    const text = textOf(view);
    expect(text).toMatch(
      /in doubt +receipt: may have acted, not run again \(it might act twice\); check by hand/,
    );
    expect(text).toMatch(/recovered +from the business-row/);
  });
});
