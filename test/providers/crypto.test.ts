import { describe, expect, it } from 'vitest';
import {
  anyHexSignatureMatches,
  decodeBase64,
  decodeHex,
  isoToEpochSeconds,
  parseJsonObject,
  parseTimestampedSignatures,
  parseUnixSeconds,
  safeEqual,
  withinTolerance,
} from '../../lambdas/providers/crypto.js';

describe('decodeHex', () => {
  it('decodes whole hex pairs in either case', () => {
    expect(decodeHex('00ffAB')).toEqual(Buffer.from([0x00, 0xff, 0xab]));
  });

  it.each(['', 'abc', 'abzz', 'zz', '0x00', '00 ff', 'ab\n'])(
    'rejects %j instead of decoding part of it',
    (value) => {
      expect(decodeHex(value)).toBeUndefined();
    },
  );
});

describe('decodeBase64', () => {
  it('decodes canonical padded base64', () => {
    expect(decodeBase64('aGVsbG8=')).toEqual(Buffer.from('hello'));
    expect(decodeBase64('aGVsbG8h')).toEqual(Buffer.from('hello!'));
  });

  it.each(['', 'aGVsbG8', 'aGVsbG9=', 'aGV sbG8=', 'a-_b', 'aGVsbG8=\n', '===='])(
    'rejects %j (unpadded, non-canonical, URL-safe or with stray characters)',
    (value) => {
      expect(decodeBase64(value)).toBeUndefined();
    },
  );
});

describe('safeEqual', () => {
  it('compares equal-length buffers and returns false for different lengths without throwing', () => {
    expect(safeEqual(Buffer.from('abc'), Buffer.from('abc'))).toBe(true);
    expect(safeEqual(Buffer.from('abc'), Buffer.from('abd'))).toBe(false);
    expect(safeEqual(Buffer.from('abc'), Buffer.from('abcd'))).toBe(false);
  });
});

describe('parseJsonObject', () => {
  it('returns a JSON object', () => {
    expect(parseJsonObject(Buffer.from('{"a":1}'))).toEqual({ a: 1 });
  });

  it.each(['', 'null', '[]', '1', '"x"', '{', 'true'])('returns undefined for %j', (text) => {
    expect(parseJsonObject(Buffer.from(text))).toBeUndefined();
  });

  it('rejects invalid UTF-8 rather than reading replacement characters', () => {
    expect(
      parseJsonObject(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])),
    ).toBeUndefined();
  });
});

describe('parseUnixSeconds', () => {
  it('reads digits only', () => {
    expect(parseUnixSeconds('1718210703')).toBe(1_718_210_703);
    for (const value of ['', '-1', '1e9', '1.5', ' 1', '0x10', '9'.repeat(16)]) {
      expect(parseUnixSeconds(value), value).toBeUndefined();
    }
  });
});

describe('isoToEpochSeconds', () => {
  it('reads offsets, Z, fractions and a space separator', () => {
    expect(isoToEpochSeconds('2024-06-12T16:45:03-04:00')).toBe(Date.UTC(2024, 5, 12, 20, 45, 3) / 1000);
    expect(isoToEpochSeconds('2024-06-12T20:45:03.999Z')).toBe(Date.UTC(2024, 5, 12, 20, 45, 3) / 1000);
    expect(isoToEpochSeconds('2024-06-12 16:45:03+0530')).toBe(Date.UTC(2024, 5, 12, 11, 15, 3) / 1000);
  });

  it('reads a value without a zone at the given default offset', () => {
    expect(isoToEpochSeconds('2024-06-12 16:45:03')).toBe(Date.UTC(2024, 5, 12, 16, 45, 3) / 1000);
    expect(isoToEpochSeconds('2024-06-12 16:45:03', -180)).toBe(Date.UTC(2024, 5, 12, 19, 45, 3) / 1000);
  });

  it.each(['2024-02-30T00:00:00Z', '2024-13-01T00:00:00Z', '2024-06-12T24:00:00Z', '2024-06-12', 'soon', ''])(
    'rejects %j',
    (value) => {
      expect(isoToEpochSeconds(value)).toBeUndefined();
    },
  );

  it('rejects values that are not strings', () => {
    expect(isoToEpochSeconds(1_718_210_703)).toBeUndefined();
    expect(isoToEpochSeconds(null)).toBeUndefined();
  });
});

describe('withinTolerance', () => {
  it('accepts up to the tolerance either way and nothing when now is not finite', () => {
    expect(withinTolerance(1000, 1300, 300)).toBe(true);
    expect(withinTolerance(1000, 1301, 300)).toBe(false);
    expect(withinTolerance(1300, 1000, 300)).toBe(true);
    expect(withinTolerance(1301, 1000, 300)).toBe(false);
    expect(withinTolerance(1000, Number.NaN, 300)).toBe(false);
  });
});

describe('parseTimestampedSignatures', () => {
  const stripe = { separator: ',', timestamp: 't', signature: 'v1' } as const;
  const paddle = { separator: ';', timestamp: 'ts', signature: 'h1' } as const;

  it('reads the timestamp as sent and every signature, ignoring other keys', () => {
    expect(parseTimestampedSignatures('t=0123, v1=aa ,v0=bb,v1=cc', stripe)).toEqual({
      timestampText: '0123',
      timestamp: 123,
      signatures: ['aa', 'cc'],
    });
    expect(parseTimestampedSignatures('ts=5;h1=ab;h1=cd', paddle)?.signatures).toEqual(['ab', 'cd']);
  });

  it('refuses a missing, non-numeric or contradicting timestamp, and no signature', () => {
    for (const header of ['v1=aa', 't=x,v1=aa', 't=1,t=2,v1=aa', 't=1', 't=-1,v1=aa', ''])
      expect(parseTimestampedSignatures(header, stripe), header).toBeUndefined();
    expect(parseTimestampedSignatures('t=1,t=1,v1=aa', stripe)?.timestamp).toBe(1);
  });
});

describe('anyHexSignatureMatches', () => {
  it('matches strict hex only', () => {
    const expected = [Buffer.from('abcd', 'hex')];
    expect(anyHexSignatureMatches(['00', 'abcd'], expected)).toBe(true);
    expect(anyHexSignatureMatches(['abcdzz', 'ABCD'.toLowerCase().slice(0, 3)], expected)).toBe(false);
    expect(anyHexSignatureMatches([], expected)).toBe(false);
  });
});
