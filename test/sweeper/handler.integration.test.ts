/**
 * The sweeper Lambda handler on DynamoDB Local, SQS and s3rver: what it emits and logs per run. The
 * StuckClaims alarm reads the gauge with the dimension `service` only, so that is checked here
 * against the EMF the handler really prints.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { faultInjector } from '../../lambdas/shared/faults.js';
import { SweepStore } from '../../lambdas/store/sweep-store.js';
import { createSweeperHandler } from '../../lambdas/sweeper/handler.js';
import { sampleDelivery } from '../../local/samples.js';
import { capturePowertoolsOutput } from '../helpers/powertools-output.js';
import { createReceiverHarness, type ReceiverHarness } from '../helpers/receiver-harness.js';
import { githubHeaders, TEST_SECRETS } from '../helpers/signing.js';

describe('sweeper Lambda handler', () => {
  let h: ReceiverHarness;
  let output: string[];
  let aheadMs: number;
  beforeEach(async () => {
    h = await createReceiverHarness();
    aheadMs = 0;
    output = capturePowertoolsOutput();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  const handler = () =>
    createSweeperHandler({
      deps: () => ({
        claims: new SweepStore(h.dynamo, h.tableName),
        queue: h.queue,
        archive: h.archive,
        settings: {
          receivedGraceMs: 60_000,
          processingGraceMs: 300_000,
          enqueuedStaleMs: 3_600_000,
          maxRequeues: 3,
          maxClaimsPerRun: 100,
        },
        clock: () => Date.now() + aheadMs,
      }),
    });

  const lines = () =>
    output
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  it('emits nothing and logs nothing above debug on a quiet run', async () => {
    const report = await handler()();
    expect(report).toMatchObject({ due: 0, stuck: 0 });
    expect(output.join('')).toBe('');
  });

  it('emits the StuckClaims gauge with the service dimension only, and logs the stuck claim', async () => {
    const body = sampleDelivery('github', { secret: TEST_SECRETS.github, eventId: 'swh-1' }).body;
    const result = await h.deliver('github', body, await githubHeaders(body, { delivery: 'swh-1' }), {
      deps: { faultPoint: faultInjector('receiver.afterClaim') },
    });
    expect(result.statusCode).toBe(500);
    aheadMs = 5 * 60_000;

    const report = await handler()();
    expect(report).toMatchObject({ due: 1, stuck: 1 });
    const emf = lines().find((line) => '_aws' in line) as Record<string, unknown> & {
      _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][] }> };
    };
    expect(emf._aws.CloudWatchMetrics[0]).toMatchObject({
      Namespace: 'IdempotentWebhooks',
      Dimensions: [['service']],
    });
    expect(emf).toMatchObject({
      service: 'webhook-sweeper',
      StuckClaims: 1,
      NewlyStuckClaims: 1,
      RequeuedClaims: 0,
    });
    expect(lines()).toContainEqual(
      expect.objectContaining({
        level: 'ERROR',
        message: 'claim is stuck: the sweeper cannot recover it',
        key: result.key,
      }),
    );
  });
});
