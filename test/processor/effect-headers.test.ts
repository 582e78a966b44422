/**
 * An HTTP effect's configured headers (lambdas/processor/effect-headers.ts): what `EFFECTS` may say,
 * and how a header read from a secret is read, cached, served through an outage and re-read.
 */
import type { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import {
  EFFECT_SECRET_MAX_AGE_MS,
  effectHeaderSource,
  headerValueFromSecret,
  parseEffectHeaders,
  type SecretReader,
  secretsManagerReader,
} from '../../lambdas/processor/effect-headers.js';
import { loadProcessorSettings } from '../../lambdas/processor/settings.js';
import { ConfigError } from '../../lambdas/shared/settings.js';

const ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:crm-token-AbCdEf';

/** A reader over a map of secret texts that counts its reads; a missing secret throws. */
function fakeReader(secrets: Record<string, string>) {
  const reads: string[] = [];
  const reader: SecretReader = {
    async read(arn) {
      reads.push(arn);
      const text = secrets[arn];
      if (text === undefined)
        throw Object.assign(new Error('not found'), { name: 'ResourceNotFoundException' });
      return text;
    },
  };
  return { reader, reads };
}

describe('parseEffectHeaders', () => {
  it('reads static and secret headers, names in lower case', () => {
    expect(
      parseEffectHeaders('effect "crm"', {
        'X-Api-Version': { value: '2024-06-01' },
        Authorization: { secretArn: ARN, jsonField: 'token', prefix: 'Bearer ' },
      }),
    ).toEqual({
      'x-api-version': { value: '2024-06-01' },
      authorization: { secretArn: ARN, jsonField: 'token', prefix: 'Bearer ' },
    });
  });

  it.each([
    [{ 'idempotency-key': { value: 'x' } }, /set by the adapter itself/],
    [{ 'Content-Type': { value: 'x' } }, /set by the adapter itself/],
    [{ 'x bad': { value: 'x' } }, /not a valid HTTP header name/],
    [{ 'x-a': { value: 'a\r\nx-b: injected' } }, /CR, LF or NUL/],
    [{ 'x-a': { value: 'a', secretArn: ARN } }, /must be \{"value"/],
    [{ 'x-a': {} }, /must be \{"value"/],
    [{ 'x-a': { secretArn: ARN, jsonField: '' } }, /jsonField must be a non-empty string/],
    [{ 'x-a': { secretArn: ARN, prefix: 'a\nb' } }, /prefix must be a string without CR/],
    [['x'], /headers must be an object/],
  ])('refuses %j', (headers, message) => {
    expect(() => parseEffectHeaders('effect "crm"', headers)).toThrow(message);
    expect(() => parseEffectHeaders('effect "crm"', headers)).toThrow(ConfigError);
  });

  it('is part of the EFFECTS variable, with permanentStatuses', () => {
    const settings = loadProcessorSettings({
      CLAIMS_TABLE_NAME: 'claims',
      EFFECTS: JSON.stringify({
        crm: {
          url: 'https://crm.example.com/hooks',
          headers: { authorization: { secretArn: ARN, prefix: 'Bearer ' } },
          permanentStatuses: [400, 422],
        },
      }),
    });
    expect(settings.effects.crm).toMatchObject({
      headers: { authorization: { secretArn: ARN, prefix: 'Bearer ' } },
      permanentStatuses: [400, 422],
    });
    expect(() =>
      loadProcessorSettings({
        CLAIMS_TABLE_NAME: 'claims',
        EFFECTS: JSON.stringify({ crm: { url: 'https://crm.example.com', permanentStatuses: [200] } }),
      }),
    ).toThrow(/effect "crm": permanentStatuses must be a list of HTTP statuses from 300 to 599/);
  });
});

describe('headerValueFromSecret', () => {
  it('takes the whole secret, trimmed, or one string field of its JSON', () => {
    expect(headerValueFromSecret(' tok_123\n', undefined)).toBe('tok_123');
    expect(headerValueFromSecret('{"token":"tok_456","other":1}', 'token')).toBe('tok_456');
  });

  it('says what is wrong with a secret that has no such field', () => {
    expect(() => headerValueFromSecret('tok_123', 'token')).toThrow(/not JSON, so it has no field "token"/);
    expect(() => headerValueFromSecret('{"other":1}', 'token')).toThrow(/no string field "token"/);
  });
});

describe('effectHeaderSource', () => {
  it('is none for an adapter without headers', () => {
    expect(effectHeaderSource({}, fakeReader({}).reader)).toBeUndefined();
  });

  it('builds each header, reading a secret once for its max age, then again', async () => {
    let now = 1_000_000;
    const { reader, reads } = fakeReader({ [ARN]: '{"token":"tok_1"}' });
    const source = effectHeaderSource(
      {
        authorization: { secretArn: ARN, jsonField: 'token', prefix: 'Bearer ' },
        'x-api-version': { value: '2024-06-01' },
      },
      reader,
      { clock: () => now },
    );
    expect(await source?.headers()).toEqual({ authorization: 'Bearer tok_1', 'x-api-version': '2024-06-01' });
    now += EFFECT_SECRET_MAX_AGE_MS - 1;
    await source?.headers();
    expect(reads).toEqual([ARN]);
    now += 1;
    await source?.headers();
    expect(reads).toEqual([ARN, ARN]);
  });

  it('shares one read between concurrent calls', async () => {
    const { reader, reads } = fakeReader({ [ARN]: 'tok_1' });
    const source = effectHeaderSource({ authorization: { secretArn: ARN } }, reader);
    await Promise.all([source?.headers(), source?.headers(), source?.headers()]);
    expect(reads).toEqual([ARN]);
  });

  it('serves the last value read through an outage, and fails with no value ever read', async () => {
    let now = 0;
    const secrets: Record<string, string> = { [ARN]: 'tok_1' };
    const { reader } = fakeReader(secrets);
    const source = effectHeaderSource({ authorization: { secretArn: ARN } }, reader, { clock: () => now });
    await source?.headers();
    delete secrets[ARN];
    now += EFFECT_SECRET_MAX_AGE_MS;
    expect(await source?.headers()).toEqual({ authorization: 'tok_1' });

    const never = effectHeaderSource({ authorization: { secretArn: ARN } }, fakeReader({}).reader);
    await expect(never?.headers()).rejects.toThrow(
      /secret arn:aws:secretsmanager:.*crm-token-AbCdEf could not be read: ResourceNotFoundException/,
    );
  });

  it('reads the secret again after refresh (the service refused the value: a rotation)', async () => {
    const secrets: Record<string, string> = { [ARN]: 'tok_old' };
    const { reader, reads } = fakeReader(secrets);
    const source = effectHeaderSource({ authorization: { secretArn: ARN, prefix: 'Bearer ' } }, reader);
    await source?.headers();
    secrets[ARN] = 'tok_new';
    source?.refresh?.();
    expect(await source?.headers()).toEqual({ authorization: 'Bearer tok_new' });
    expect(reads).toEqual([ARN, ARN]);
  });

  it('refuses a secret whose value would split the header', async () => {
    const source = effectHeaderSource(
      { authorization: { secretArn: ARN, jsonField: 'token' } },
      fakeReader({ [ARN]: '{"token":"a\\r\\nx-injected: 1"}' }).reader,
    );
    await expect(source?.headers()).rejects.toThrow(/may not hold CR, LF or NUL/);
  });
});

describe('secretsManagerReader', () => {
  it('asks GetSecretValue for the ARN and returns its SecretString', async () => {
    const sent: unknown[] = [];
    const client = {
      send: async (command: GetSecretValueCommand) => {
        sent.push(command.input);
        return { SecretString: 'tok_1' };
      },
    } as unknown as SecretsManagerClient;
    expect(await secretsManagerReader(client).read(ARN)).toBe('tok_1');
    expect(sent).toEqual([{ SecretId: ARN }]);
  });

  it('refuses a binary secret', async () => {
    const client = {
      send: async () => ({ SecretBinary: new Uint8Array([1]) }),
    } as unknown as SecretsManagerClient;
    await expect(secretsManagerReader(client).read(ARN)).rejects.toThrow(/no SecretString/);
  });
});
