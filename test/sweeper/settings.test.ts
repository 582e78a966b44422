import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lambdas/shared/settings.js';
import * as sweeperSettings from '../../lambdas/sweeper/settings.js';

const base = { CLAIMS_TABLE_NAME: 'claims', EVENT_QUEUE_URL: 'http://queue' };
const ENV = sweeperSettings.ENV;

describe('sweeper settings', () => {
  it('applies the documented defaults, in milliseconds where the core computes in them', () => {
    expect(sweeperSettings.loadSweeperSettings(base)).toEqual({
      claimsTableName: 'claims',
      eventQueueUrl: 'http://queue',
      archiveBucket: undefined,
      archiveForcePathStyle: false,
      receivedGraceMs: 300_000,
      processingGraceMs: 600_000,
      enqueuedStaleMs: 3_600_000,
      maxRequeues: 3,
      maxClaimsPerRun: 500,
    });
    expect(sweeperSettings.SWEEPER_DEFAULTS).toBe(sweeperSettings.DEFAULTS);
  });

  it('reads the graces as seconds and accepts a few seconds (local runs and tests use them)', () => {
    expect(
      sweeperSettings.load({ ...base, [ENV.receivedGraceMs]: '2', [ENV.enqueuedStaleMs]: '6' }),
    ).toMatchObject({ receivedGraceMs: 2_000, enqueuedStaleMs: 6_000 });
  });

  it.each([
    [ENV.claimsTableName, '', /^environment variable CLAIMS_TABLE_NAME is required$/],
    [
      ENV.receivedGraceMs,
      '1.5',
      /^environment variable SWEEP_RECEIVED_GRACE_SECONDS must be a positive integer, got "1.5"$/,
    ],
    [
      ENV.processingGraceMs,
      '0',
      /^environment variable SWEEP_PROCESSING_GRACE_SECONDS must be a positive integer/,
    ],
    [
      ENV.enqueuedStaleMs,
      'an hour',
      /^environment variable SWEEP_ENQUEUED_STALE_SECONDS must be a positive integer/,
    ],
    [ENV.maxRequeues, '-1', /^environment variable SWEEP_MAX_REQUEUES must be a positive integer/],
    [
      ENV.maxClaimsPerRun,
      '10001',
      /^environment variable SWEEP_MAX_CLAIMS_PER_RUN must be an integer from 1 to 10000, got "10001"$/,
    ],
  ])('refuses %s=%j with one error naming the variable and the rule', (name, value, message) => {
    expect(() => sweeperSettings.load({ ...base, [name]: value })).toThrow(ConfigError);
    expect(() => sweeperSettings.load({ ...base, [name]: value })).toThrow(message);
  });

  it('reads back exactly what toEnvironment writes, the graces as whole seconds', () => {
    const settings: sweeperSettings.SweeperSettings = {
      claimsTableName: 'claims',
      eventQueueUrl: 'http://queue',
      archiveBucket: 'archive',
      archiveForcePathStyle: true,
      receivedGraceMs: 120_000,
      processingGraceMs: 241_000,
      enqueuedStaleMs: 21_600_000,
      maxRequeues: 5,
      maxClaimsPerRun: 10_000,
    };
    const environment = sweeperSettings.toEnvironment(settings);
    expect(environment).toMatchObject({
      SWEEP_RECEIVED_GRACE_SECONDS: '120',
      SWEEP_PROCESSING_GRACE_SECONDS: '241',
      SWEEP_ENQUEUED_STALE_SECONDS: '21600',
      ARCHIVE_FORCE_PATH_STYLE: 'true',
    });
    expect(sweeperSettings.load(environment)).toEqual(settings);
  });
});
