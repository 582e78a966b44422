/**
 * `WEBHOOK_HMAC_PROVIDERS`: how it is read (JSON, one object or a list, or `@file[,@file]`), the
 * messages a bad value gets, and that a function started with one stops at cold start naming it.
 */

import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  configuredProviders,
  HMAC_PROVIDERS_ENV,
  readHmacProviderConfigs,
  writeHmacProviderConfigs,
} from '../../lambdas/providers/configured.js';
import { HmacProviderConfigError } from '../../lambdas/providers/hmac.js';
import { loadReceiverSettings } from '../../lambdas/receiver/settings.js';
import { KYC_CONFIG } from '../fixtures/providers/kyc-config.js';
import { REPO_ROOT } from '../helpers/local-stack-process.js';

const CONFIG = {
  ...KYC_CONFIG,
  signature: { ...KYC_CONFIG.signature, header: 'X-Signature' },
  secret: { hint: 'from the vendor', devSecret: 'local-kyc' },
  retryWindow: { text: '24 h', source: 'https://example.com' },
};

describe(HMAC_PROVIDERS_ENV, () => {
  it('is none when unset or blank', () => {
    expect(readHmacProviderConfigs(undefined)).toEqual([]);
    expect(readHmacProviderConfigs('  ')).toEqual([]);
    expect(configuredProviders({})).toEqual([]);
  });

  it('holds one config or a list, inline or in files, each checked (header names lower-cased)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hmac-providers-'));
    writeFileSync(join(dir, 'one.json'), JSON.stringify(CONFIG));
    writeFileSync(join(dir, 'two.json'), JSON.stringify([{ ...CONFIG, id: 'kyc2' }]));
    expect(readHmacProviderConfigs(JSON.stringify(CONFIG))[0]?.signature.header).toBe('x-signature');
    expect(readHmacProviderConfigs('@one.json, @two.json', dir).map((c) => c.id)).toEqual(['kyc', 'kyc2']);
    expect(configuredProviders({ [HMAC_PROVIDERS_ENV]: JSON.stringify([CONFIG]) }).map((p) => p.id)).toEqual([
      'kyc',
    ]);
  });

  it.each([
    ['{', /WEBHOOK_HMAC_PROVIDERS is not JSON/],
    ['@no-such-file.json', /WEBHOOK_HMAC_PROVIDERS: cannot read .*no-such-file\.json: ENOENT/],
    [`@x.json,${JSON.stringify(CONFIG)}`, /must be @<file> like the first entry/],
    [
      JSON.stringify([CONFIG, { ...CONFIG, claimTtlSeconds: -1 }]),
      /WEBHOOK_HMAC_PROVIDERS \[1\]: HMAC provider "kyc": claimTtlSeconds/,
    ],
  ])('refuses bad value %# with a message naming the variable', (value, message) => {
    expect(() => readHmacProviderConfigs(value)).toThrow(HmacProviderConfigError);
    expect(() => readHmacProviderConfigs(value)).toThrow(message);
  });

  it('is written without what only the stack, the docs and send read, and reads back the same', () => {
    const json = writeHmacProviderConfigs([CONFIG as never]) ?? '';
    expect(json).not.toMatch(/retryWindow|hint|devSecret|local-kyc/);
    const [checked] = readHmacProviderConfigs(JSON.stringify(CONFIG));
    const { retryWindow: _docs, secret: _secret, ...kept } = checked ?? {};
    expect(readHmacProviderConfigs(json)).toEqual([kept]);
    // The key's decoding stays: it is how the receiver verifies.
    const base64 = { ...CONFIG, secret: { encoding: 'base64', prefix: 'whsec_', devSecret: 'whsec_AAAA' } };
    expect(JSON.parse(writeHmacProviderConfigs([base64 as never]) ?? '')[0].secret).toEqual({
      encoding: 'base64',
      prefix: 'whsec_',
    });
    expect(writeHmacProviderConfigs([])).toBeUndefined();
  });

  it("is one of the receiver's settings: a bad value names it among the others", () => {
    expect(() =>
      loadReceiverSettings({
        CLAIMS_TABLE_NAME: 't',
        EVENT_QUEUE_URL: 'q',
        [HMAC_PROVIDERS_ENV]: '[{"id":"kyc"}]',
      }),
    ).toThrow(/WEBHOOK_HMAC_PROVIDERS \[0\]: HMAC provider "kyc": name/);
  });

  it('stops npm start before anything starts, in one line naming the variable and the field', async () => {
    const run = promisify(execFile)('npm', ['start'], {
      cwd: REPO_ROOT,
      env: { ...process.env, [HMAC_PROVIDERS_ENV]: '{"id":"kyc","name":"KYC"}', PORT: '0' },
      timeout: 60_000,
    });
    const failure = await run.then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr?.trim()).toBe(
      'npm start: WEBHOOK_HMAC_PROVIDERS: HMAC provider "kyc": signature is required; signedContent is ' +
        'required; eventId is required; eventType is required; claimTtlSeconds is required',
    );
  });

  it('stops the receiver at cold start, naming the variable and the field', async () => {
    const run = promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', "await import('./lambdas/receiver/handler.ts')"],
      {
        cwd: REPO_ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          [HMAC_PROVIDERS_ENV]: JSON.stringify({ ...CONFIG, signedContent: '{body}.{id}' }),
        },
        timeout: 30_000,
      },
    );
    await expect(run).rejects.toMatchObject({
      stderr: expect.stringMatching(
        /HmacProviderConfigError: WEBHOOK_HMAC_PROVIDERS: HMAC provider "kyc": signedContent/,
      ),
    });
  });
});
