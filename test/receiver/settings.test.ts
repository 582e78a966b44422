import { describe, expect, it } from 'vitest';
import { PROVIDER_LIST } from '../../lambdas/providers/index.js';
import * as receiverSettings from '../../lambdas/receiver/settings.js';
import {
  ConfigError,
  loadReceiverSettings,
  parseProviderSettings,
  RECEIVER_DEFAULTS,
} from '../../lambdas/receiver/settings.js';
import { KYC_CONFIG } from '../fixtures/providers/kyc-config.js';

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

  it('accepts every body that can reach the function, and claim-checks messages over 448 KiB', () => {
    const settings = loadReceiverSettings(base);
    expect(settings.maxBodyBytes).toBe(6_291_456);
    expect(settings.claimCheckThresholdBytes).toBe(458_752);
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

  it('reads PUBLIC_BASE_URL, unset by default, and refuses one that is no http(s) base', () => {
    expect(loadReceiverSettings(base).publicBaseUrl).toBeUndefined();
    expect(
      loadReceiverSettings({ ...base, PUBLIC_BASE_URL: 'https://hooks.example.com' }).publicBaseUrl,
    ).toBe('https://hooks.example.com');
    expect(() =>
      loadReceiverSettings({ ...base, PUBLIC_BASE_URL: 'https://hooks.example.com/?x=1' }),
    ).toThrow(/PUBLIC_BASE_URL must have no query or fragment/);
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

describe('PROVIDER_SETTINGS, value by value', () => {
  const KINDS = 'key rule must be one of event-id, composite, business-object';
  it.each([
    ['null', 'PROVIDER_SETTINGS must be a JSON object keyed by provider'],
    ['"stripe"', 'PROVIDER_SETTINGS must be a JSON object keyed by provider'],
    ['[]', 'PROVIDER_SETTINGS must be a JSON object keyed by provider'],
    ['{"stripe":5}', 'PROVIDER_SETTINGS.stripe must be an object'],
    ['{"stripe":"composite"}', 'PROVIDER_SETTINGS.stripe must be an object'],
    ['{"stripe":[]}', 'PROVIDER_SETTINGS.stripe must be an object'],
    [
      '{"stripe":{"claimTtlSeconds":0}}',
      'PROVIDER_SETTINGS.stripe.claimTtlSeconds must be a positive integer',
    ],
    [
      '{"stripe":{"claimTtlSeconds":1.5}}',
      'PROVIDER_SETTINGS.stripe.claimTtlSeconds must be a positive integer',
    ],
    [
      '{"stripe":{"claimTtlSeconds":"864000"}}',
      'PROVIDER_SETTINGS.stripe.claimTtlSeconds must be a positive integer',
    ],
    [
      '{"stripe":{"toleranceSeconds":0}}',
      'PROVIDER_SETTINGS.stripe.toleranceSeconds must be a positive integer',
    ],
    [
      '{"stripe":{"toleranceSeconds":-300}}',
      'PROVIDER_SETTINGS.stripe.toleranceSeconds must be a positive integer',
    ],
    [
      '{"stripe":{"toleranceSeconds":2.5}}',
      'PROVIDER_SETTINGS.stripe.toleranceSeconds must be a positive integer',
    ],
    [
      '{"github":{"toleranceSeconds":"60"}}',
      'PROVIDER_SETTINGS.github.toleranceSeconds must be a positive integer',
    ],
    ['{"stripe":{"keyRules":"composite"}}', 'PROVIDER_SETTINGS.stripe.keyRules must be an object'],
    ['{"stripe":{"keyRules":[]}}', 'PROVIDER_SETTINGS.stripe.keyRules must be an object'],
    [
      '{"stripe":{"keyRules":{"byEventType":null}}}',
      'PROVIDER_SETTINGS.stripe.keyRules.byEventType must be an object',
    ],
    [
      '{"stripe":{"keyRules":{"byEventType":["composite"]}}}',
      'PROVIDER_SETTINGS.stripe.keyRules.byEventType must be an object',
    ],
    [
      '{"stripe":{"keyRules":{"byEventType":{"charge.*":"hash"}}}}',
      `PROVIDER_SETTINGS.stripe.keyRules.byEventType["charge.*"]: ${KINDS}`,
    ],
    [
      '{"stripe":{"keyRules":{"byEventType":{"charge.*":{"kind":5}}}}}',
      `PROVIDER_SETTINGS.stripe.keyRules.byEventType["charge.*"]: ${KINDS}`,
    ],
    ['{"stripe":{"keyRules":{"default":null}}}', `PROVIDER_SETTINGS.stripe.keyRules.default: ${KINDS}`],
    ['{"stripe":{"keyRules":{"default":7}}}', `PROVIDER_SETTINGS.stripe.keyRules.default: ${KINDS}`],
    ['{"stripe":{"keyRules":{"default":{}}}}', `PROVIDER_SETTINGS.stripe.keyRules.default: ${KINDS}`],
  ])('refuses %s: %s', (json, message) => {
    expect(() => parseProviderSettings(json)).toThrow(new ConfigError(message));
  });

  it('names the providers there are when one is unknown', () => {
    const two = PROVIDER_LIST.filter((provider) => provider.id === 'stripe' || provider.id === 'github');
    expect(() => parseProviderSettings('{"paypal":{}}', two)).toThrow(
      new ConfigError('PROVIDER_SETTINGS names unknown provider "paypal" (the providers are stripe, github)'),
    );
  });

  it('reads blank as no overrides, and takes the smallest values and a rule given as an object', () => {
    expect(parseProviderSettings('  ')).toEqual(parseProviderSettings(undefined));
    const providers = parseProviderSettings(
      JSON.stringify({
        stripe: { claimTtlSeconds: 1, toleranceSeconds: 1, keyRules: { default: { kind: 'composite' } } },
        github: { toleranceSeconds: 60, keyRules: { byEventType: { push: { kind: 'business-object' } } } },
      }),
    );
    expect(providers.stripe).toEqual({
      claimTtlSeconds: 1,
      toleranceSeconds: 1,
      keyRules: {
        default: { kind: 'composite' },
        byEventType: { 'payment_intent.*': { kind: 'composite' } },
      },
    });
    expect(providers.github).toEqual({
      claimTtlSeconds: 7 * DAY,
      toleranceSeconds: 60,
      keyRules: { default: { kind: 'event-id' }, byEventType: { push: { kind: 'business-object' } } },
    });
    // GitHub signs no timestamp: no tolerance unless one is set.
    expect(parseProviderSettings(undefined).github.toleranceSeconds).toBeUndefined();
  });
});

describe('receiver settings: one schema for the handler, the construct and the local runner', () => {
  const ENV = receiverSettings.ENV;

  it('defaults every optional variable to DEFAULTS, the numbers the stack derives its own from', () => {
    expect(receiverSettings.load(base)).toMatchObject({
      leaseSeconds: receiverSettings.DEFAULTS.leaseSeconds,
      duplicateWaitMs: 2_000,
      duplicatePollMs: 50,
      maxBodyBytes: 6_291_456,
      claimCheckThresholdBytes: 458_752,
      claimRetentionSeconds: 15 * DAY,
      archiveForcePathStyle: false,
    });
    const settings = receiverSettings.load(base);
    expect(settings.archiveBucket).toBeUndefined();
    expect(
      receiverSettings.load({
        ...base,
        FAULT_POINTS: 'receiver.afterClaim',
        FAULT_POINTS_STATE_DIR: '/tmp/faults',
      }),
    ).toMatchObject({ faultPoints: 'receiver.afterClaim', faultPointsStateDirectory: '/tmp/faults' });
    expect(settings.faultPoints).toBeUndefined();
    expect(settings.secretArnsJson).toBeUndefined();
    expect(RECEIVER_DEFAULTS).toBe(receiverSettings.DEFAULTS);
  });

  it.each([
    [ENV.eventQueueUrl, '  ', /^environment variable EVENT_QUEUE_URL is required$/],
    [
      ENV.leaseSeconds,
      '0',
      /^environment variable RECEIVER_LEASE_SECONDS must be a positive integer, got "0"$/,
    ],
    [
      ENV.duplicateWaitMs,
      'soon',
      /^environment variable DUPLICATE_WAIT_MS must be a positive integer, got "soon"$/,
    ],
    [
      ENV.duplicatePollMs,
      '-5',
      /^environment variable DUPLICATE_POLL_MS must be a positive integer, got "-5"$/,
    ],
    [ENV.maxBodyBytes, '1.5', /^environment variable MAX_BODY_BYTES must be a positive integer, got "1.5"$/],
    [
      ENV.claimRetentionSeconds,
      'x',
      /^environment variable CLAIM_RETENTION_SECONDS must be a positive integer/,
    ],
    [
      ENV.claimCheckThresholdBytes,
      '1023',
      /^environment variable CLAIM_CHECK_THRESHOLD_BYTES must be between 1024/,
    ],
    [ENV.providers, '[1]', /^PROVIDER_SETTINGS must be a JSON object keyed by provider$/],
    [ENV.faultPoints, 'receiver.nowhere', /^FAULT_POINTS entry "receiver.nowhere" is not point/],
    ['FAULT_POINTS', 'receiver.nowhere', /^FAULT_POINTS entry "receiver.nowhere" is not point/],
  ])('refuses %s=%j with one error naming the variable and the rule', (name, value, message) => {
    expect(() => receiverSettings.load({ ...base, [name]: value })).toThrow(ConfigError);
    expect(() => receiverSettings.load({ ...base, [name]: value })).toThrow(message);
  });

  it('names every bad variable in its one error', () => {
    expect(() => receiverSettings.load({ DUPLICATE_POLL_MS: '0' })).toThrow(
      new ConfigError(
        'environment variable CLAIMS_TABLE_NAME is required; environment variable EVENT_QUEUE_URL is required; ' +
          'environment variable DUPLICATE_POLL_MS must be a positive integer, got "0"',
      ),
    );
  });

  it('counts duplicates unless COUNT_DUPLICATES is false, and refuses any other value', () => {
    expect(receiverSettings.load(base).countDuplicates).toBe(true);
    expect(receiverSettings.load({ ...base, COUNT_DUPLICATES: 'false' }).countDuplicates).toBe(false);
    expect(receiverSettings.load({ ...base, COUNT_DUPLICATES: 'true' }).countDuplicates).toBe(true);
    expect(() => receiverSettings.load({ ...base, COUNT_DUPLICATES: 'no' })).toThrow(
      /environment variable COUNT_DUPLICATES must be true or false, got "no"/,
    );
    // The default is not written: a stack that leaves it alone has no variable for it.
    expect(receiverSettings.toEnvironment({ ...receiverSettings.load(base) })).not.toHaveProperty(
      'COUNT_DUPLICATES',
    );
  });

  it('marks claims ENQUEUED unless MARK_ENQUEUED is false, and refuses any other value', () => {
    expect(receiverSettings.load(base).markEnqueued).toBe(true);
    expect(receiverSettings.load({ ...base, MARK_ENQUEUED: 'false' }).markEnqueued).toBe(false);
    expect(() => receiverSettings.load({ ...base, MARK_ENQUEUED: '0' })).toThrow(
      /environment variable MARK_ENQUEUED must be true or false, got "0"/,
    );
    expect(receiverSettings.toEnvironment({ ...receiverSettings.load(base) })).not.toHaveProperty(
      'MARK_ENQUEUED',
    );
  });

  it('reads back exactly what toEnvironment writes', () => {
    const settings: receiverSettings.ReceiverSettings = {
      claimsTableName: 'claims',
      eventQueueUrl: 'http://queue',
      leaseSeconds: 20,
      duplicateWaitMs: 3_000,
      duplicatePollMs: 25,
      countDuplicates: false,
      markEnqueued: false,
      maxBodyBytes: 1_000_000,
      claimRetentionSeconds: 20 * DAY,
      claimCheckThresholdBytes: 262_144,
      archiveBucket: 'archive',
      archiveForcePathStyle: true,
      // A provider by configuration, as the construct writes it (checked, defaults not filled in).
      hmacProviders: [KYC_CONFIG],
      providers: parseProviderSettings(
        JSON.stringify({
          shopify: { claimTtlSeconds: 5 * DAY, keyRules: { default: 'business-object' } },
          standard: { toleranceSeconds: 60 },
        }),
      ),
      secretArnsJson: '{"stripe":"arn:aws:secretsmanager:us-east-1:123456789012:secret:stripe"}',
      faultPoints: 'receiver.afterClaim@evt_:2',
      faultPointsStateDirectory: '/tmp/faults',
    };
    expect(receiverSettings.load(receiverSettings.toEnvironment(settings))).toEqual(settings);
    const defaults = receiverSettings.load(base);
    expect(receiverSettings.load(receiverSettings.toEnvironment(defaults))).toEqual(defaults);
  });

  it('writes only the variables it is given, the provider overrides as PROVIDER_SETTINGS JSON', () => {
    expect(
      receiverSettings.toEnvironment({
        claimsTableName: 'claims',
        eventQueueUrl: 'http://queue',
        leaseSeconds: 15,
        archiveForcePathStyle: false,
        providers: { stripe: { claimTtlSeconds: 864_000 } },
      }),
    ).toEqual({
      CLAIMS_TABLE_NAME: 'claims',
      EVENT_QUEUE_URL: 'http://queue',
      RECEIVER_LEASE_SECONDS: '15',
      PROVIDER_SETTINGS: '{"stripe":{"claimTtlSeconds":864000}}',
    });
  });
});
