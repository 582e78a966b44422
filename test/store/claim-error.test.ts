/** What a claim keeps of an error: its start, cut to a byte budget, never inside a character. */
import { describe, expect, it } from 'vitest';
import { CLAIM_ERROR_MAX_BYTES, claimErrorText } from '../../lambdas/store/claim.js';

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
      }
    }
  });
});
