import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  loadReceiverSettings,
  parseProviderSettings,
  RECEIVER_DEFAULTS,
} from '../../lambdas/receiver/settings.js';

const base = { CLAIMS_TABLE_NAME: 'claims', EVENT_QUEUE_URL: 'http://queue' };
const DAY = 24 * 3600;

describe('receiver settings', () => {
  it('applies the documented defaults', () => {
    const settings = loadReceiverSettings(base);
    expect(settings).toMatchObject({
      claimsTableName: 'claims',
      eventQueueUrl: 'http://queue',
      leaseSeconds: 15,
      duplicateWaitMs: 2_000,
      maxBodyBytes: RECEIVER_DEFAULTS.maxBodyBytes,
    });
    expect(settings.providers.stripe.claimTtlSeconds).toBe(7 * DAY);
    expect(settings.providers.github.claimTtlSeconds).toBe(7 * DAY);
    expect(settings.providers.shopify.claimTtlSeconds).toBe(3 * DAY);
    expect(settings.providers.asaas.claimTtlSeconds).toBe(21 * DAY);
    expect(settings.providers.standard.claimTtlSeconds).toBe(3 * DAY);
    expect(settings.providers.stripe.toleranceSeconds).toBe(300);
    expect(settings.providers.standard.toleranceSeconds).toBe(300);
  });

  it('accepts every body that can reach the function, and claim-checks messages over 64 KiB', () => {
    const settings = loadReceiverSettings(base);
    expect(settings.maxBodyBytes).toBe(6_291_456);
    expect(settings.claimCheckThresholdBytes).toBe(65_536);
    expect(settings.archiveBucket).toBeUndefined();
    expect(
      loadReceiverSettings({
        ...base,
        ARCHIVE_BUCKET_NAME: 'archive',
        CLAIM_CHECK_THRESHOLD_BYTES: '262144',
      }),
    ).toMatchObject({ archiveBucket: 'archive', claimCheckThresholdBytes: 262_144 });
  });

  it('refuses a claim-check threshold over SQS’s message limit or under 1 KiB', () => {
    expect(() => loadReceiverSettings({ ...base, CLAIM_CHECK_THRESHOLD_BYTES: '1048577' })).toThrow(
      /CLAIM_CHECK_THRESHOLD_BYTES must be between 1024 and 1048576/,
    );
    expect(() => loadReceiverSettings({ ...base, CLAIM_CHECK_THRESHOLD_BYTES: '100' })).toThrow(
      /CLAIM_CHECK_THRESHOLD_BYTES/,
    );
  });

  it('names the missing variable', () => {
    expect(() => loadReceiverSettings({ EVENT_QUEUE_URL: 'x' })).toThrow(
      new ConfigError('environment variable CLAIMS_TABLE_NAME is required'),
    );
  });

  it('rejects a non-integer lease', () => {
    expect(() => loadReceiverSettings({ ...base, RECEIVER_LEASE_SECONDS: '1.5' })).toThrow(
      /RECEIVER_LEASE_SECONDS must be a positive integer/,
    );
  });

  it('overrides a TTL and merges per-event-type key rules over the defaults', () => {
    const providers = parseProviderSettings(
      JSON.stringify({
        stripe: { claimTtlSeconds: 10 * DAY, keyRules: { byEventType: { 'charge.*': 'composite' } } },
      }),
    );
    expect(providers.stripe.claimTtlSeconds).toBe(10 * DAY);
    expect(providers.stripe.keyRules.byEventType).toEqual({
      'payment_intent.*': { kind: 'composite' },
      'charge.*': { kind: 'composite' },
    });
    expect(providers.github.claimTtlSeconds).toBe(7 * DAY);
  });

  it('rejects unknown providers, bad JSON and unknown key rules with a message naming the setting', () => {
    expect(() => parseProviderSettings('{"paypal":{}}')).toThrow(/unknown provider "paypal"/);
    expect(() => parseProviderSettings('{')).toThrow(/not valid JSON/);
    expect(() => parseProviderSettings('{"stripe":{"keyRules":{"default":"hash"}}}')).toThrow(
      /PROVIDER_SETTINGS.stripe.keyRules.default: key rule must be one of/,
    );
    expect(() => parseProviderSettings('{"asaas":{"claimTtlSeconds":-1}}')).toThrow(
      /claimTtlSeconds must be a positive integer/,
    );
  });
});
