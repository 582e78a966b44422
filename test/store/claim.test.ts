/**
 * The claim's pure rules: when a lease is live and a claim expired (the same boundaries as the
 * store's conditions), and what a claim keeps of an error.
 */
import { describe, expect, it } from 'vitest';
import { CLAIM_ERROR_MAX_BYTES, claimErrorText, isExpired, isLeaseLive } from '../../lambdas/store/claim.js';

describe('isLeaseLive and isExpired', () => {
  it('calls a lease live until the millisecond it ends, as the take-over condition leaseExpiresAt <= :nowMs does', () => {
    expect(isLeaseLive({ leaseExpiresAt: 1_000 }, 999)).toBe(true);
    expect(isLeaseLive({ leaseExpiresAt: 1_000 }, 1_000)).toBe(false);
    expect(isLeaseLive({ leaseExpiresAt: 1_000 }, 1_001)).toBe(false);
    expect(isLeaseLive({}, 0)).toBe(false);
  });

  it('calls a claim expired from the second of its TTL, as CLAIM_ABSENT_OR_EXPIRED (expiresAt <= :nowS) does', () => {
    expect(isExpired({ expiresAt: 100 }, 99_999)).toBe(false);
    expect(isExpired({ expiresAt: 100 }, 100_000)).toBe(true);
    expect(isExpired({ expiresAt: 100 }, 100_999)).toBe(true);
  });
});

describe('claimErrorText', () => {
  it('keeps a short error as it is', () => {
    expect(claimErrorText('Error: SQS is down')).toBe('Error: SQS is down');
    const exact = 'x'.repeat(CLAIM_ERROR_MAX_BYTES);
    expect(claimErrorText(exact)).toBe(exact);
  });

  it('cuts a long one to the budget in bytes, marked with …', () => {
    const cut = claimErrorText('y'.repeat(5_000));
    expect(Buffer.byteLength(cut)).toBe(CLAIM_ERROR_MAX_BYTES);
    expect(cut).toBe(`${'y'.repeat(CLAIM_ERROR_MAX_BYTES - 3)}…`);
  });

  it('never splits a multi-byte character', () => {
    // 'ä' is two bytes, '€' three: every cut position lands inside one sooner or later.
    for (const filler of ['ä', '€', '😀']) {
      for (let lead = 0; lead < 4; lead++) {
        const cut = claimErrorText(`${'a'.repeat(lead)}${filler.repeat(200)}`);
        expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(CLAIM_ERROR_MAX_BYTES);
        expect(cut).not.toContain('\uFFFD');
        expect(cut.endsWith(`${filler}…`)).toBe(true);
        // As many whole characters as fit: one more would pass the budget.
        expect(Buffer.byteLength(cut) + Buffer.byteLength(filler)).toBeGreaterThan(CLAIM_ERROR_MAX_BYTES);
      }
    }
  });

  it('keeps replacement characters that were in the error itself', () => {
    const text = `${'a'.repeat(CLAIM_ERROR_MAX_BYTES - 3 - 6)}\uFFFD\uFFFD${'b'.repeat(100)}`;
    expect(claimErrorText(text)).toBe(`${'a'.repeat(CLAIM_ERROR_MAX_BYTES - 9)}\uFFFD\uFFFD…`);
    expect(claimErrorText(`\uFFFD${'b'.repeat(500)}`)).toBe(
      `\uFFFD${'b'.repeat(CLAIM_ERROR_MAX_BYTES - 6)}…`,
    );
  });
});
