/**
 * The archive's object formats and the processor's batch grouping, as pure functions (the S3
 * round trips are in test/processor/processor.integration.test.ts and the CLI e2e tests).
 */
import { describe, expect, it } from 'vitest';
import { type EventMessage, SQS_MAX_MESSAGE_BYTES } from '../../lambdas/queue/event-message.js';
import { archiveBatchKey, archiveObjectKey } from '../../lambdas/shared/archive-layout.js';
import {
  ArchiveFormatError,
  archiveGroups,
  eventIn,
  parseArchive,
  queueMessageOf,
} from '../../lambdas/store/payload-archive.js';

const message = (key: string, provider: string, receivedAt: string): EventMessage => ({
  v: 1,
  key,
  provider,
  eventId: key.split(':').at(-1) ?? key,
  eventType: 'payment_intent.succeeded',
  account: 'platform',
  receivedAt,
  claimExpiresAt: 1_800_000_000,
  headers: { 'content-type': 'application/json' },
  body: '{}',
  bodyEncoding: 'utf8',
});

describe('archive objects', () => {
  it('reads an event object (v1) and a batch object (v2), giving every event its archivedAt', () => {
    const one = message('stripe:platform:evt_1', 'stripe', '2026-12-02T10:00:00.000Z');
    const two = message('stripe:platform:evt_2', 'stripe', '2026-12-02T10:00:01.000Z');
    expect(parseArchive(JSON.stringify({ ...one, archivedAt: 'A' }), 'x')).toEqual([
      { ...one, archivedAt: 'A' },
    ]);
    const batch = JSON.stringify({ v: 2, archivedAt: 'B', events: [one, two] });
    expect(parseArchive(batch, 'x')).toEqual([
      { ...one, archivedAt: 'B' },
      { ...two, archivedAt: 'B' },
    ]);
    expect(eventIn(parseArchive(batch, 'x'), two.key, 'x').eventId).toBe('evt_2');
  });

  it('refuses what is not an archive, and names what an object holds when the event is not in it', () => {
    expect(() => parseArchive('nope', 's3://b/k')).toThrow(new ArchiveFormatError('s3://b/k is not JSON'));
    expect(() => parseArchive('{"v":2,"archivedAt":"B","events":[{"v":1}]}', 'k')).toThrow(
      /k is not an archived batch of event messages/,
    );
    expect(() => parseArchive('{"v":3}', 'k')).toThrow(/k is not an archived event message/);
    const events = parseArchive(
      JSON.stringify({ v: 2, archivedAt: 'B', events: [message('a:1', 'stripe', '2026-12-02T00:00:00Z')] }),
      'k',
    );
    expect(() => eventIn(events, 'b:2', 'k')).toThrow('k holds event a:1, not b:2');
  });

  describe('an object that is not an archived event', () => {
    const good = {
      ...message('stripe:platform:evt_1', 'stripe', '2026-12-02T10:00:00.000Z'),
      archivedAt: 'A',
    };
    // Each row breaks one thing an archived event must have, in an event's own object and in a batch.
    const broken: Array<[string, unknown]> = [
      ['null', null],
      ['a string', 'event'],
      ['an array', [good]],
      ['version 3', { ...good, v: 3 }],
      ['no key', { ...good, key: undefined }],
      ['a numeric key', { ...good, key: 1 }],
      ['no provider', { ...good, provider: undefined }],
      ['a numeric provider', { ...good, provider: 1 }],
      ['no body', { ...good, body: undefined }],
      ['a body that is an object', { ...good, body: {} }],
    ];

    it.each(broken)('refuses an event object with %s', (_what, event) => {
      expect(() => parseArchive(JSON.stringify(event), 'k')).toThrow(
        new ArchiveFormatError('k is not an archived event message'),
      );
    });

    it.each(broken)('refuses a batch holding an event with %s', (_what, event) => {
      const batch = { v: 2, archivedAt: 'B', events: [good, event] };
      expect(() => parseArchive(JSON.stringify(batch), 'k')).toThrow(
        new ArchiveFormatError('k is not an archived batch of event messages'),
      );
    });

    it('refuses JSON that is no object at all', () => {
      for (const text of ['null', '2', '"v"', '[]', 'true']) {
        expect(() => parseArchive(text, 'k')).toThrow(
          new ArchiveFormatError('k is not an archived event message'),
        );
      }
    });

    it('refuses a batch without its time or its list of events', () => {
      for (const batch of [
        { v: 2, events: [good] },
        { v: 2, archivedAt: 1, events: [good] },
        { v: 2, archivedAt: 'B' },
        { v: 2, archivedAt: 'B', events: { 0: good } },
      ]) {
        expect(() => parseArchive(JSON.stringify(batch), 'k')).toThrow(
          'k is not an archived batch of event messages',
        );
      }
    });

    it('throws an ArchiveFormatError by that name, and names what a batch holds', () => {
      expect(new ArchiveFormatError('x').name).toBe('ArchiveFormatError');
      const two = parseArchive(
        JSON.stringify({ v: 2, archivedAt: 'B', events: [good, { ...good, key: 'k2' }] }),
        'k',
      );
      expect(() => eventIn(two, 'k3', 'k')).toThrow(new ArchiveFormatError('k holds 2 other events, not k3'));
      expect(() => eventIn([], 'k3', 'k')).toThrow(new ArchiveFormatError('k holds 0 other events, not k3'));
    });
  });

  describe('queueMessageOf', () => {
    const archived = (bodyLength: number) => ({
      ...message('stripe:platform:evt_1', 'stripe', '2026-12-02T10:00:00.000Z'),
      body: 'b'.repeat(bodyLength),
      archivedAt: 'A',
    });
    /** The body length that makes the message (without `archivedAt`) exactly `bytes` of JSON. */
    const bodyFor = (bytes: number) => {
      const { archivedAt: _a, ...bare } = archived(0);
      return bytes - Buffer.byteLength(JSON.stringify(bare));
    };

    it('sends the archived event as it was queued, up to the largest SQS message', () => {
      const largest = archived(bodyFor(SQS_MAX_MESSAGE_BYTES));
      const { archivedAt: _a, ...queued } = largest;
      expect(queueMessageOf(largest, 'events/stripe/x.json')).toStrictEqual(queued);
      expect(Buffer.byteLength(JSON.stringify(queued))).toBe(SQS_MAX_MESSAGE_BYTES);
    });

    it('sends a claim check pointing back at the object for an event one byte larger', () => {
      const larger = archived(bodyFor(SQS_MAX_MESSAGE_BYTES + 1));
      const { archivedAt: _a, body: _b, bodyEncoding: _e, ...envelope } = larger;
      expect(queueMessageOf(larger, 'events/stripe/x.json')).toStrictEqual({
        ...envelope,
        payloadKey: 'events/stripe/x.json',
        bodyBytes: larger.body.length,
      });
    });
  });

  it('groups a batch per provider and receivedAt day, each key once, in arrival order', () => {
    const a = message('stripe:p:1', 'stripe', '2026-12-02T23:59:59.999Z');
    const b = message('github:r:1', 'github', '2026-12-02T23:59:59.000Z');
    const c = message('stripe:p:2', 'stripe', '2026-12-03T00:00:00.000Z');
    const d = message('stripe:p:3', 'stripe', '2026-12-02T12:00:00.000Z');
    const groups = archiveGroups([a, b, c, a, d]);
    expect(groups.map((group) => group.map((m) => m.key))).toEqual([
      ['stripe:p:1', 'stripe:p:3'],
      ['github:r:1'],
      ['stripe:p:2'],
    ]);
    // A second copy of a key (the same event delivered twice in one batch) is left out: the first stays.
    const again = { ...a, headers: { 'content-type': 'application/json', 'x-attempt': '2' } };
    expect(archiveGroups([a, again])).toEqual([[a]]);
  });

  it('names batch objects under the events day prefix, apart from any event object', () => {
    const key = archiveBatchKey(
      'stripe',
      '2026-12-02T10:00:00Z',
      Date.parse('2026-12-03T00:00:01.234Z'),
      'id-1',
    );
    expect(key).toBe('events/stripe/2026-12-02/batch-20261203T000001234Z-id-1.json');
    // An event object's name is its encoded key, which always holds the `:` as %3A.
    expect(archiveObjectKey('stripe', '2026-12-02T10:00:00Z', 'stripe:p:1')).toBe(
      'events/stripe/2026-12-02/stripe%3Ap%3A1.json',
    );
  });
});
