/**
 * The keys of the objects under a prefix, in S3's order (UTF-8 binary), page by page: the one way
 * the processor's compliance scans, the CLI's archive listings and the tests list a bucket.
 * https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html
 */
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';

export interface ObjectListing {
  readonly bucket: string;
  readonly prefix?: string;
  /** List the keys after this one only. */
  readonly startAfter?: string;
  /** Keys per page. @default S3's 1,000 */
  readonly pageSize?: number;
}

export async function* listObjectKeys(
  client: Pick<S3Client, 'send'>,
  { bucket, prefix, startAfter, pageSize }: ObjectListing,
): AsyncIterable<string> {
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: prefix,
        MaxKeys: pageSize,
        // S3 ignores StartAfter beside a continuation token: the first page only.
        ...(token === undefined ? { StartAfter: startAfter } : { ContinuationToken: token }),
      }),
    );
    for (const object of page.Contents ?? []) if (object.Key !== undefined) yield object.Key;
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
}

/** Every key {@link listObjectKeys} lists. */
export async function allObjectKeys(
  client: Pick<S3Client, 'send'>,
  listing: ObjectListing,
): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of listObjectKeys(client, listing)) keys.push(key);
  return keys;
}
