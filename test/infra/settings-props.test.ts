/** The stack's props checked at synth time with the rules the functions apply at run time. */
import { Duration, Lazy } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { loadReceiverSettings } from '../../lambdas/receiver/settings.js';
import { buildReceiver } from './support.js';

describe('props that become a function’s variables', () => {
  it('refuses a receiverLease the receiver could not read back (beyond 2^53 seconds)', () => {
    // Synthesized before; every delivery then failed on RECEIVER_LEASE_SECONDS at cold start.
    expect(() => buildReceiver({ receiverLease: Duration.days(2e11) })).toThrow(
      /receiverLease \(17280000000000000 s\) must be a positive integer: it is written to the function as RECEIVER_LEASE_SECONDS/,
    );
  });

  it('refuses a stuckEnqueuedAfter the sweeper could not read back', () => {
    expect(() => buildReceiver({ stuckEnqueuedAfter: Duration.days(2e11) })).toThrow(
      /stuckEnqueuedAfter \(17280000000000000 s\) must be a positive integer: it is written to the function as SWEEP_ENQUEUED_STALE_SECONDS/,
    );
  });

  it.each([1_023, 1_024, 2_048.5, 65_536, 1_048_576, 1_048_577])(
    'accepts claimCheckThresholdBytes %d exactly when the receiver would',
    (threshold) => {
      const receiverAccepts = (() => {
        try {
          loadReceiverSettings({
            CLAIMS_TABLE_NAME: 't',
            EVENT_QUEUE_URL: 'q',
            CLAIM_CHECK_THRESHOLD_BYTES: String(threshold),
          });
          return true;
        } catch {
          return false;
        }
      })();
      const synthAccepts = (() => {
        try {
          buildReceiver({ claimCheckThresholdBytes: threshold });
          return true;
        } catch {
          return false;
        }
      })();
      expect(synthAccepts).toBe(receiverAccepts);
    },
  );

  it('leaves a value only known at deploy time (a token) to the deploy, not misreading it as out of range', () => {
    // A number token is a large negative number until resolved: checked, it would be refused here.
    expect(() =>
      buildReceiver({ claimCheckThresholdBytes: Lazy.number({ produce: () => 131_072 }) }),
    ).not.toThrow();
  });
});
