import { describe, expect, it } from 'vitest';
import { archiveUri, queueMessageOf, rangePrefixes, receivedInRange, utcDays } from '../../cli/archive.js';
import { isClaimCheck, SQS_MAX_MESSAGE_BYTES } from '../../lambdas/queue/event-message.js';
import type { ArchivedEvent } from '../../lambdas/store/payload-archive.js';

const at = (iso: string) => new Date(iso);

describe('utcDays', () => {
  it('lists every UTC day a half-open range touches', () => {
    expect(utcDays(at('2026-11-30T22:00:00Z'), at('2026-12-02T01:00:00Z'))).toEqual([
      '2026-11-30',
      '2026-12-01',
      '2026-12-02',
    ]);
  });

  it('leaves out the day of --to when the range ends at its midnight', () => {
    expect(utcDays(at('2026-12-01'), at('2026-12-02'))).toEqual(['2026-12-01']);
  });

  it('is one day for a range inside a day, and nothing for an empty or inverted range', () => {
    expect(utcDays(at('2026-12-02T10:00Z'), at('2026-12-02T11:00Z'))).toEqual(['2026-12-02']);
    expect(utcDays(at('2026-12-02'), at('2026-12-02'))).toEqual([]);
    expect(utcDays(at('2026-12-03'), at('2026-12-02'))).toEqual([]);
  });

  it('crosses a year boundary', () => {
    expect(utcDays(at('2026-12-31T23:59Z'), at('2027-01-01T00:01Z'))).toEqual(['2026-12-31', '2027-01-01']);
  });
});

describe('rangePrefixes', () => {
  it('gives one archive prefix per provider and day, in the processor layout', () => {
    expect(rangePrefixes(['stripe', 'github'], at('2026-12-01T12:00Z'), at('2026-12-02T12:00Z'))).toEqual([
      'events/stripe/2026-12-01/',
      'events/stripe/2026-12-02/',
      'events/github/2026-12-01/',
      'events/github/2026-12-02/',
    ]);
  });
});

describe('receivedInRange', () => {
  const from = at('2026-12-02T10:00:00Z');
  const to = at('2026-12-02T11:00:00Z');

  it('includes --from and excludes --to', () => {
    expect(receivedInRange({ receivedAt: '2026-12-02T10:00:00.000Z' }, from, to)).toBe(true);
    expect(receivedInRange({ receivedAt: '2026-12-02T10:59:59.999Z' }, from, to)).toBe(true);
    expect(receivedInRange({ receivedAt: '2026-12-02T11:00:00.000Z' }, from, to)).toBe(false);
    expect(receivedInRange({ receivedAt: '2026-12-02T09:59:59.999Z' }, from, to)).toBe(false);
  });

  it('excludes an event without a readable time', () => {
    expect(receivedInRange({ receivedAt: 'soon' }, from, to)).toBe(false);
  });
});

describe('queueMessageOf', () => {
  it('drops archivedAt and keeps everything the processor reads', () => {
    const archived = {
      v: 1,
      key: 'stripe:platform:pi_1:payment_intent.succeeded',
      provider: 'stripe',
      eventId: 'evt_1',
      eventType: 'payment_intent.succeeded',
      account: 'platform',
      receivedAt: '2026-12-02T10:00:00.000Z',
      claimExpiresAt: 1,
      headers: { 'content-type': 'application/json' },
      body: '{}',
      bodyEncoding: 'utf8',
      archivedAt: '2026-12-02T10:00:01.000Z',
    } as ArchivedEvent;
    const message = queueMessageOf(archived, 'events/stripe/2026-12-02/k.json');
    expect(message).not.toHaveProperty('archivedAt');
    const { archivedAt: _archivedAt, ...rest } = archived;
    expect(message).toEqual(rest);
  });

  it('replays an event too large for one SQS message as a claim check on its archive object', () => {
    const body = JSON.stringify({ commits: 'x'.repeat(SQS_MAX_MESSAGE_BYTES) });
    const archived = {
      v: 1,
      key: 'github:1:d-1',
      provider: 'github',
      eventId: 'd-1',
      eventType: 'push',
      account: '1',
      receivedAt: '2026-12-02T10:00:00.000Z',
      claimExpiresAt: 1,
      headers: { 'content-type': 'application/json' },
      body,
      bodyEncoding: 'utf8',
      archivedAt: '2026-12-02T10:00:01.000Z',
    } as ArchivedEvent;
    const message = queueMessageOf(archived, 'events/github/2026-12-02/k.json');
    expect(isClaimCheck(message)).toBe(true);
    expect(message).toMatchObject({
      key: 'github:1:d-1',
      payloadKey: 'events/github/2026-12-02/k.json',
      bodyBytes: Buffer.byteLength(body),
    });
    expect(message).not.toHaveProperty('body');
    expect(Buffer.byteLength(JSON.stringify(message))).toBeLessThan(2_048);
  });
});

describe('archiveUri', () => {
  it('is an s3:// URI of the bucket and key', () => {
    expect(archiveUri('bucket', 'events/stripe/2026-12-02/k.json')).toBe(
      's3://bucket/events/stripe/2026-12-02/k.json',
    );
  });
});
