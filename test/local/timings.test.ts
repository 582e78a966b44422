/**
 * The local stack's timings: the knobs of a local run are held to the construct's rules (a lease
 * outlives its function, is no longer than the visibility timeout; the sweeper waits longer than
 * SQS), moving the function and effect timeouts down with a short lease, and refusing in one line
 * what no move can fix.
 */
import { describe, expect, it } from 'vitest';
import { EFFECT_MARGIN_MS } from '../../lambdas/shared/timing-rules.js';
import { localEffectTimeoutSeconds, localTimings, type TemplateTimings } from '../../local/timings.js';

/** What the example stack synthesizes. */
const TEMPLATE: TemplateTimings = {
  receiverTimeoutSeconds: 10,
  receiverLeaseSeconds: 15,
  processorTimeoutSeconds: 30,
  processingLeaseSeconds: 120,
  visibilityTimeoutSeconds: 181,
  sweepProcessingGraceSeconds: 241,
};

describe('local timings', () => {
  it("keeps the template's values when no knob is set", () => {
    expect(localTimings(TEMPLATE, {})).toEqual({ ...TEMPLATE, moved: [] });
  });

  it('moves the function timeouts below a short lease', () => {
    expect(localTimings(TEMPLATE, { claimLeaseSeconds: 6, visibilityTimeoutSeconds: 6 })).toMatchObject({
      receiverLeaseSeconds: 6,
      processingLeaseSeconds: 6,
      leaseOverride: 6,
      receiverTimeoutSeconds: 5,
      processorTimeoutSeconds: 5,
      visibilityTimeoutSeconds: 6,
      moved: ['leases 6 s (CLAIM_LEASE_SECONDS)', 'receiver timeout 5 s', 'processor timeout 5 s'],
    });
  });

  it('brings the leases down to a visibility timeout set alone', () => {
    expect(localTimings(TEMPLATE, { visibilityTimeoutSeconds: 8 })).toMatchObject({
      processingLeaseSeconds: 8,
      receiverLeaseSeconds: 8,
      receiverTimeoutSeconds: 7,
      processorTimeoutSeconds: 7,
      moved: [
        'leases 8 s (LOCAL_VISIBILITY_TIMEOUT_SECONDS)',
        'receiver timeout 7 s',
        'processor timeout 7 s',
      ],
    });
  });

  it('leaves a function timeout that is already shorter than the lease', () => {
    expect(localTimings(TEMPLATE, { claimLeaseSeconds: 20, visibilityTimeoutSeconds: 20 })).toMatchObject({
      receiverTimeoutSeconds: 10,
      processorTimeoutSeconds: 19,
    });
  });

  it('refuses a lease longer than the visibility timeout, naming the rule', () => {
    expect(() => localTimings(TEMPLATE, { claimLeaseSeconds: 20, visibilityTimeoutSeconds: 6 })).toThrow(
      'CLAIM_LEASE_SECONDS (20 s) must not exceed LOCAL_VISIBILITY_TIMEOUT_SECONDS (6 s): a message SQS shows again after a worker died must find its lease run out',
    );
    // The template's 181 s visibility holds any lease up to it.
    expect(() => localTimings(TEMPLATE, { claimLeaseSeconds: 200 })).toThrow(
      /CLAIM_LEASE_SECONDS \(200 s\) must not exceed LOCAL_VISIBILITY_TIMEOUT_SECONDS \(181 s\)/,
    );
  });

  it('refuses a lease too short to outlive a function that outlives an effect', () => {
    expect(() => localTimings(TEMPLATE, { claimLeaseSeconds: 3 })).toThrow(
      /^CLAIM_LEASE_SECONDS \(3 s\) is too short for a local lease: at least 6 s/,
    );
    expect(() => localTimings(TEMPLATE, { visibilityTimeoutSeconds: 2 })).toThrow(
      /^LOCAL_VISIBILITY_TIMEOUT_SECONDS \(2 s\) is too short for a local lease: at least 6 s/,
    );
    expect(() => localTimings(TEMPLATE, { claimLeaseSeconds: 5, visibilityTimeoutSeconds: 5 })).toThrow(
      /at least 6 s/,
    );
    expect(localTimings(TEMPLATE, { claimLeaseSeconds: 6, visibilityTimeoutSeconds: 6 })).toMatchObject({
      processorTimeoutSeconds: 5,
    });
  });

  it('refuses a sweeper processing grace that does not exceed the visibility timeout', () => {
    expect(() =>
      localTimings(TEMPLATE, {
        claimLeaseSeconds: 6,
        visibilityTimeoutSeconds: 6,
        sweepProcessingGraceSeconds: 4,
      }),
    ).toThrow(
      'SWEEP_PROCESSING_GRACE_SECONDS (4 s) must be longer than LOCAL_VISIBILITY_TIMEOUT_SECONDS (6 s): SQS redelivers a stalled event before the sweeper re-sends it',
    );
    // The template's grace (241 s) against a longer local visibility timeout.
    expect(() => localTimings(TEMPLATE, { visibilityTimeoutSeconds: 300, claimLeaseSeconds: 120 })).toThrow(
      /SWEEP_PROCESSING_GRACE_SECONDS \(241 s\) must be longer than LOCAL_VISIBILITY_TIMEOUT_SECONDS \(300 s\)/,
    );
  });

  it('gives each effect a timeout of at most a third of the processor timeout', () => {
    expect(localEffectTimeoutSeconds(5_000, 30)).toBe(5);
    expect(localEffectTimeoutSeconds(5_000, 9)).toBe(3);
    expect(localEffectTimeoutSeconds(5_000, 5)).toBe(1);
    expect(localEffectTimeoutSeconds(5_000, 3)).toBe(1);
    // The result keeps the rule: shorter than the invocation by more than the margin.
    for (const processor of [3, 4, 5, 9, 30]) {
      expect(localEffectTimeoutSeconds(60_000, processor) * 1000).toBeLessThan(
        processor * 1000 - EFFECT_MARGIN_MS,
      );
    }
  });
});
