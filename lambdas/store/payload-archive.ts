/**
 * The payload archive: the raw payload and its headers (signature and token headers are never in
 * the queue message, so never here), keyed by provider and day (lambdas/shared/archive-layout.ts),
 * so a time range is a prefix listing. The bucket's lifecycle rule expires the objects (default
 * 90 days); the claim row records which object holds its event (`archiveKey`).
 *
 * Two kinds of object, one reader:
 * - one event (`v: 1`, the event message plus `archivedAt`), keyed by the claim's first-seen day and
 *   its idempotency key: the receiver's claim check for a body too large for a queue message, read
 *   back by the processor (and, before batch archives, every archived event);
 * - one batch (`v: 2`, `{archivedAt, events}`), keyed by a day of the events' `receivedAt` and a
 *   random id: the processor writes one per provider and day of an SQS batch for the events that came
 *   with their body, so ten events cost one PUT, not ten (docs/performance.md).
 * `webhooks inspect`, `replay` and the sweeper read both, and always pick an event by its key.
 */
import { randomUUID } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  claimCheckOf,
  decodeBody,
  type EventMessage,
  type QueueMessage,
  SQS_MAX_MESSAGE_BYTES,
} from '../queue/event-message.js';
import { archiveBatchKey, archiveDay, archiveObjectKey } from '../shared/archive-layout.js';

export interface ArchivedEvent extends EventMessage {
  readonly archivedAt: string;
}

/** Version 2 of an archive object: the events of one SQS batch, for one provider and day. */
export const ARCHIVE_BATCH_VERSION = 2;

interface ArchivedBatch {
  readonly v: typeof ARCHIVE_BATCH_VERSION;
  readonly archivedAt: string;
  readonly events: readonly EventMessage[];
}

export interface PayloadArchive {
  /** Writes (or rewrites, identically) one event's own object; returns its key. */
  put(message: EventMessage, firstSeenAt: string, nowMs: number): Promise<string>;
  /**
   * Writes one object holding `messages` (one provider, one `receivedAt` day: see
   * {@link archiveGroups}); returns its key.
   */
  putBatch(messages: readonly EventMessage[], nowMs: number): Promise<string>;
  /** The event `key` in the object; throws when the object is missing, unreadable or lacks it. */
  get(objectKey: string, key: string): Promise<ArchivedEvent>;
}

/** The object is not an archived event: a bug or a foreign write, never a transient failure. */
export class ArchiveFormatError extends Error {
  override readonly name = 'ArchiveFormatError';
}

function isEventMessage(value: unknown): value is EventMessage {
  // Any value but an object has no `v` of 1 (`null` and `undefined` have no properties at all).
  const event = value as Partial<EventMessage> | null | undefined;
  return (
    event?.v === 1 &&
    typeof event.key === 'string' &&
    typeof event.provider === 'string' &&
    typeof event.body === 'string'
  );
}

/**
 * The archived events in `text` (one for an event's own object, up to a batch's for a batch
 * object), or an ArchiveFormatError saying why it is neither.
 */
export function parseArchive(text: string, where: string): ArchivedEvent[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ArchiveFormatError(`${where} is not JSON`);
  }
  const batch = parsed as Partial<ArchivedBatch> | null;
  if (batch?.v === ARCHIVE_BATCH_VERSION) {
    if (
      typeof batch.archivedAt !== 'string' ||
      !Array.isArray(batch.events) ||
      !batch.events.every(isEventMessage)
    )
      throw new ArchiveFormatError(`${where} is not an archived batch of event messages`);
    const archivedAt = batch.archivedAt;
    return batch.events.map((event) => ({ ...event, archivedAt }));
  }
  if (!isEventMessage(parsed)) throw new ArchiveFormatError(`${where} is not an archived event message`);
  return [parsed as ArchivedEvent];
}

/** The event `key` among an object's events, or an ArchiveFormatError naming what it holds. */
export function eventIn(events: readonly ArchivedEvent[], key: string, where: string): ArchivedEvent {
  const found = events.find((event) => event.key === key);
  if (found) return found;
  const held = events.length === 1 ? `event ${events[0]?.key}` : `${events.length} other events`;
  throw new ArchiveFormatError(`${where} holds ${held}, not ${key}`);
}

/**
 * The messages of a batch grouped as the processor archives them: one group per provider and UTC
 * day of `receivedAt` (the day `webhooks replay --from/--to` lists), each key once.
 */
export function archiveGroups(messages: readonly EventMessage[]): EventMessage[][] {
  const groups = new Map<string, Map<string, EventMessage>>();
  for (const message of messages) {
    const group = `${message.provider}/${archiveDay(message.receivedAt)}`;
    const byKey = groups.get(group) ?? new Map<string, EventMessage>();
    groups.set(group, byKey);
    if (!byKey.has(message.key)) byKey.set(message.key, message);
  }
  return [...groups.values()].map((byKey) => [...byKey.values()]);
}

export class S3PayloadArchive implements PayloadArchive {
  constructor(
    private readonly client: S3Client,
    readonly bucket: string,
    private readonly newId: () => string = randomUUID,
  ) {}

  async put(message: EventMessage, firstSeenAt: string, nowMs: number): Promise<string> {
    const objectKey = archiveObjectKey(message.provider, firstSeenAt, message.key);
    const archived: ArchivedEvent = { ...message, archivedAt: new Date(nowMs).toISOString() };
    await this.write(objectKey, JSON.stringify(archived));
    return objectKey;
  }

  async putBatch(messages: readonly EventMessage[], nowMs: number): Promise<string> {
    const first = messages[0];
    if (first === undefined) throw new Error('an archive batch needs at least one event');
    const objectKey = archiveBatchKey(first.provider, first.receivedAt, nowMs, this.newId());
    const batch: ArchivedBatch = {
      v: ARCHIVE_BATCH_VERSION,
      archivedAt: new Date(nowMs).toISOString(),
      events: messages,
    };
    await this.write(objectKey, JSON.stringify(batch));
    return objectKey;
  }

  private async write(objectKey: string, body: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: objectKey,
        Body: body,
        ContentType: 'application/json',
        // SSE-S3 is also the bucket default; asking for it keeps objects encrypted under any bucket policy.
        ServerSideEncryption: 'AES256',
      }),
    );
  }

  /** The object's events, or undefined when there is none at `objectKey`. */
  async find(objectKey: string): Promise<ArchivedEvent[] | undefined> {
    try {
      return await this.read(objectKey);
    } catch (error) {
      if ((error as { name?: string })?.name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  async get(objectKey: string, key: string): Promise<ArchivedEvent> {
    return eventIn(await this.read(objectKey), key, this.uri(objectKey));
  }

  async read(objectKey: string): Promise<ArchivedEvent[]> {
    const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: objectKey }));
    const text = (await object.Body?.transformToString('utf8')) ?? '';
    return parseArchive(text, this.uri(objectKey));
  }

  private uri(objectKey: string): string {
    return `s3://${this.bucket}/${objectKey}`;
  }
}

/**
 * The queue message that sends an archived event again (a replay, a sweep): the object without
 * `archivedAt`, or, when that would not fit in one SQS message, a claim check pointing back at the
 * object (the processor reads the body from it, as it does for the receiver's claim checks).
 */
export function queueMessageOf(archived: ArchivedEvent, objectKey: string): QueueMessage {
  const { archivedAt: _archivedAt, ...message } = archived;
  if (Buffer.byteLength(JSON.stringify(message)) <= SQS_MAX_MESSAGE_BYTES) return message;
  return claimCheckOf(message, objectKey, decodeBody(message).length);
}
