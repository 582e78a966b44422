/**
 * The payload archive: the raw payload and its headers (signature and token headers are never in
 * the queue message, so never here), one S3 object per event, keyed by provider, the claim's
 * first-seen day and the idempotency key (lambdas/shared/archive-layout.ts), so one event has one
 * object and a time range is a prefix listing. The bucket's lifecycle rule expires them (default
 * 90 days); the claim row records where its object is (`archiveKey`).
 *
 * Two writers, one object: the receiver writes it first for a body too large for a queue message
 * (the claim check, read back by the processor), and the processor writes it for every other event
 * it processes. Either way it is the same JSON, so `webhooks inspect` and `replay` read one format.
 */
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  claimCheckOf,
  decodeBody,
  type EventMessage,
  type QueueMessage,
  SQS_MAX_MESSAGE_BYTES,
} from '../queue/event-message.js';
import { archiveObjectKey } from '../shared/archive-layout.js';

export interface ArchivedEvent extends EventMessage {
  readonly archivedAt: string;
}

export interface PayloadArchive {
  /** Writes (or rewrites, identically) the event's object; returns its key. */
  put(message: EventMessage, firstSeenAt: string, nowMs: number): Promise<string>;
  /** Reads an event's object; throws when it is missing or is not an archived event. */
  get(objectKey: string): Promise<ArchivedEvent>;
}

/** The object is not an archived event: a bug or a foreign write, never a transient failure. */
export class ArchiveFormatError extends Error {
  override readonly name = 'ArchiveFormatError';
}

/** The archived event in `text`, or an ArchiveFormatError saying why it is not one. */
export function parseArchivedEvent(text: string, where: string): ArchivedEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ArchiveFormatError(`${where} is not JSON`);
  }
  const event = parsed as Partial<ArchivedEvent> | null;
  if (
    typeof event !== 'object' ||
    event === null ||
    event.v !== 1 ||
    typeof event.key !== 'string' ||
    typeof event.provider !== 'string' ||
    typeof event.body !== 'string'
  )
    throw new ArchiveFormatError(`${where} is not an archived event message`);
  return event as ArchivedEvent;
}

export class S3PayloadArchive implements PayloadArchive {
  constructor(
    private readonly client: S3Client,
    readonly bucket: string,
  ) {}

  async put(message: EventMessage, firstSeenAt: string, nowMs: number): Promise<string> {
    const objectKey = archiveObjectKey(message.provider, firstSeenAt, message.key);
    const archived: ArchivedEvent = { ...message, archivedAt: new Date(nowMs).toISOString() };
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: objectKey,
        Body: JSON.stringify(archived),
        ContentType: 'application/json',
        // SSE-S3 is also the bucket default; asking for it keeps objects encrypted under any bucket policy.
        ServerSideEncryption: 'AES256',
      }),
    );
    return objectKey;
  }

  /** The object, or undefined when there is none at `objectKey`. */
  async find(objectKey: string): Promise<ArchivedEvent | undefined> {
    try {
      return await this.get(objectKey);
    } catch (error) {
      if ((error as { name?: string })?.name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  async get(objectKey: string): Promise<ArchivedEvent> {
    const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: objectKey }));
    const text = (await object.Body?.transformToString('utf8')) ?? '';
    return parseArchivedEvent(text, `s3://${this.bucket}/${objectKey}`);
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
