/**
 * The payload archive: the raw payload and its headers (signature and token headers are never in
 * the queue message, so never here), written to S3 by the processor, off the receiver's hot path.
 * Objects are keyed by provider, the claim's first-seen day and the idempotency key, so one event
 * has one object and a time range is a prefix listing. The bucket's lifecycle rule expires them
 * (default 90 days); the claim row records where its object is (`archiveKey`).
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { EventMessage } from '../queue/event-message';
import { archiveObjectKey } from '../shared/archive-layout';

export interface ArchivedEvent extends EventMessage {
  readonly archivedAt: string;
}

export interface PayloadArchive {
  /** Writes (or rewrites, identically) the event's object; returns its key. */
  put(message: EventMessage, firstSeenAt: string, nowMs: number): Promise<string>;
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
}
