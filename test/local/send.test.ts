/** `npm run send` arguments: the sized GitHub push used to try large payloads locally. */
import { describe, expect, it } from 'vitest';
import { sampleDelivery } from '../../local/samples.js';
import { parseByteSize, parseSendArgs, SendUsageError } from '../../local/send.js';

describe('npm run send -- github push --bytes', () => {
  it('reads decimal sizes as providers state them', () => {
    expect(parseByteSize('700kb')).toBe(700_000);
    expect(parseByteSize('5.5MB')).toBe(5_500_000);
    expect(parseByteSize('250000')).toBe(250_000);
    expect(() => parseByteSize('3 GB')).toThrow(SendUsageError);
    expect(() => parseByteSize('100')).toThrow(/from 4kb to 20mb/);
  });

  it('sizes GitHub pushes only, and builds a body of exactly that many bytes', () => {
    const parsed = parseSendArgs(['github', 'push', '--bytes', '1mb']);
    expect(parsed).toMatchObject({ help: false, args: { provider: 'github', bytes: 1_000_000 } });
    expect(() => parseSendArgs(['stripe', '--bytes', '1mb'])).toThrow(/GitHub push deliveries only/);
    const { body } = sampleDelivery('github', { secret: 's', bytes: 1_000_000 });
    expect(Buffer.byteLength(body)).toBe(1_000_000);
    expect(JSON.parse(body).commits.length).toBeGreaterThan(1_000);
  });
});
