/**
 * The archive bucket for compliance requests (lambdas/processor/compliance.ts): listing, reading with
 * the ETag, and replacing or deleting only if the object is unchanged (S3 conditional writes and
 * deletes with `If-Match`: a 412 means another writer got there first).
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-deletes.html
 */
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { ComplianceStore } from '../processor/compliance.js';
import { listObjectKeys } from './object-listing.js';

/** Whether S3 answered `status`, known by the HTTP status or by the error's name. */
const isStatus = (error: unknown, status: number, name: string): boolean => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  return e?.$metadata?.httpStatusCode === status || e?.name === name;
};

export class S3ComplianceStore implements ComplianceStore {
  constructor(
    private readonly client: Pick<S3Client, 'send'>,
    readonly bucket: string,
    /** Keys per listing page. @default S3's 1,000 */
    private readonly pageSize?: number,
  ) {}

  list(prefix: string, startAfter?: string): AsyncIterable<string> {
    return listObjectKeys(this.client, { bucket: this.bucket, prefix, startAfter, pageSize: this.pageSize });
  }

  async read(key: string): Promise<{ text: string; etag: string } | undefined> {
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return { text: (await object.Body?.transformToString('utf8')) ?? '', etag: object.ETag ?? '' };
    } catch (error) {
      if (isStatus(error, 404, 'NoSuchKey')) return undefined;
      throw error;
    }
  }

  async replaceIfUnchanged(key: string, body: string, etag: string): Promise<boolean> {
    try {
      await this.client.send(new PutObjectCommand({ ...this.object(key, body), IfMatch: etag }));
      return true;
    } catch (error) {
      // 412: changed since it was read; 404: deleted since (S3 answers a PUT with If-Match on a missing key so).
      if (isStatus(error, 412, 'PreconditionFailed') || isStatus(error, 404, 'NoSuchKey')) return false;
      throw error;
    }
  }

  async deleteIfUnchanged(key: string, etag: string): Promise<boolean> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key, IfMatch: etag }));
      return true;
    } catch (error) {
      if (isStatus(error, 412, 'PreconditionFailed')) return false;
      if (isStatus(error, 404, 'NoSuchKey')) return true;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async write(key: string, body: string): Promise<void> {
    await this.client.send(new PutObjectCommand(this.object(key, body)));
  }

  private object(key: string, body: string) {
    return {
      Bucket: this.bucket,
      Key: key,
      Body: body,
      ContentType: 'application/json',
      ServerSideEncryption: 'AES256' as const,
    };
  }
}
