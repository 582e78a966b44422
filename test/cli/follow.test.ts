import { describe, expect, it } from 'vitest';
import { inspectText, viewClaim } from '../../cli/commands/inspect.js';
import { followEntry, followFailed, summarizeFollow } from '../../cli/follow.js';
import type { StackContext } from '../../cli/stack.js';
import { type ClaimRecord, ClaimStatus } from '../../lambdas/store/claim.js';

const NOW = Date.parse('2026-12-03T10:00:00Z');
const SENT = NOW - 5_000;
const iso = (ms: number) => new Date(ms).toISOString();

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
      followEntry('k', claim({ outcome: 'applied', lastCompletedStep: 'receipt' }), SENT, NOW),
    ).toMatchObject({
      result: 'resumed',
      status: 'DONE',
    });
    const partial = followEntry(
      'k',
      claim({ outcome: 'applied', unresumedEffects: ['receipt'], recoveredFrom: 'business-row' }),
      SENT,
      NOW,
    );
    expect(partial).toMatchObject({ result: 'not-resumed', unresumedEffects: ['receipt'] });
    expect(partial.detail).toContain('receipt');
    expect(partial.detail).toContain('business-row');
  });

  it('tells a claim that failed again from one not taken yet', () => {
    const before = claim({ status: ClaimStatus.Failed, failedAt: iso(SENT - 1000), lastError: 'old' });
    const again = claim({
      status: ClaimStatus.Failed,
      failedAt: iso(SENT + 1000),
      lastError: 'Error: ledger 503',
    });
    expect(followEntry('k', before, SENT, NOW).result).toBe('pending');
    expect(followEntry('k', again, SENT, NOW)).toMatchObject({ result: 'failed' });
    expect(followEntry('k', again, SENT, NOW).detail).toContain('ledger 503');
  });

  it('treats an absent or expired claim as pending, as the processor treats it as absent', () => {
    expect(followEntry('k', undefined, SENT, NOW)).toMatchObject({ result: 'pending', status: null });
    const expired = claim({ status: ClaimStatus.Done, expiresAt: Math.floor(NOW / 1000) - 1 });
    expect(followEntry('k', expired, SENT, NOW)).toMatchObject({ result: 'pending', status: null });
  });

  it('reports a retry in progress with its error', () => {
    const retrying = claim({
      status: ClaimStatus.Enqueued,
      lastCompletedStep: 'state',
      lastError: 'Error: ledger 503',
      lastErrorAt: iso(SENT + 500),
    });
    const entry = followEntry('k', retrying, SENT, NOW);
    expect(entry.result).toBe('pending');
    expect(entry.detail).toContain('retrying after: Error: ledger 503');
  });

  it('fails the command only for events failed again or not fully resumed', () => {
    const report = (results: Array<{ result: 'resumed' | 'not-resumed' | 'failed' | 'pending' }>) => ({
      waitedMs: 0,
      followed: results.length,
      notFollowed: 0,
      results: [],
      summary: summarizeFollow(results),
    });
    expect(followFailed(report([{ result: 'resumed' }, { result: 'pending' }]))).toBe(false);
    expect(followFailed(report([{ result: 'not-resumed' }]))).toBe(true);
    expect(followFailed(report([{ result: 'failed' }]))).toBe(true);
    expect(followFailed(undefined)).toBe(false);
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
