/**
 * Reading the payload archive (layout: lambdas/shared/archive-layout.ts). An object holds one event
 * or a batch of them (lambdas/store/payload-archive.ts); each is the queue message plus
 * `archivedAt`, so replaying it is sending it back without that field.
 */
import { GetObjectCommand, NoSuchKey } from '@aws-sdk/client-s3';
import type { ProviderId } from '../lambdas/providers/types.js';
import type { EventMessage } from '../lambdas/queue/event-message.js';
import { archiveDayPrefix } from '../lambdas/shared/archive-layout.js';
import { allObjectKeys } from '../lambdas/store/object-listing.js';
import {
  type ArchivedEvent,
  ArchiveFormatError,
  eventIn,
  parseArchive,
} from '../lambdas/store/payload-archive.js';
import { CliError, describeAwsError } from './errors.js';
import { aws, type StackContext } from './stack.js';

const DAY_MS = 86_400_000;

/** `s3://bucket/key`, for people and for `aws s3 cp`. */
export function archiveUri(bucket: string, key: string): string {
  return `s3://${bucket}/${key}`;
}

/**
 * The UTC days (`yyyy-mm-dd`) a half-open range [from, to) touches: the day of `from` through the
 * day of the last millisecond before `to`.
 */
export function utcDays(from: Date, to: Date): string[] {
  if (!(from.getTime() < to.getTime())) return [];
  const days: string[] = [];
  const last = Math.floor((to.getTime() - 1) / DAY_MS);
  for (let day = Math.floor(from.getTime() / DAY_MS); day <= last; day++)
    days.push(new Date(day * DAY_MS).toISOString().slice(0, 10));
  return days;
}

/** Every prefix to list for a range: one per provider and day (`events/stripe/2026-12-02/`). */
export function rangePrefixes(providers: readonly ProviderId[], from: Date, to: Date): string[] {
  const days = utcDays(from, to);
  return providers.flatMap((provider) => days.map((day) => archiveDayPrefix(provider, day)));
}

/** Whether an archived event's `receivedAt` falls in [from, to). */
export function receivedInRange(event: Pick<EventMessage, 'receivedAt'>, from: Date, to: Date): boolean {
  const at = Date.parse(event.receivedAt);
  return !Number.isNaN(at) && at >= from.getTime() && at < to.getTime();
}

export { queueMessageOf } from '../lambdas/store/payload-archive.js';

export async function listArchiveKeys(stack: StackContext, prefix: string): Promise<string[]> {
  const bucket = stack.output('ArchiveBucketName');
  return aws(stack, `ListObjectsV2 on s3://${bucket}/${prefix}`, () =>
    allObjectKeys(stack.s3, { bucket, prefix }),
  );
}

/** The archived events in the object at `key` (one or a batch's); a CliError when it is missing or unreadable. */
export async function readArchivedEvents(stack: StackContext, key: string): Promise<ArchivedEvent[]> {
  const bucket = stack.output('ArchiveBucketName');
  let text: string;
  try {
    const object = await stack.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    text = (await object.Body?.transformToString('utf8')) ?? '';
  } catch (error) {
    if (error instanceof NoSuchKey || (error as Error).name === 'NoSuchKey')
      throw new CliError(`no archive object ${archiveUri(bucket, key)} (expired by the lifecycle rule?)`);
    throw describeAwsError(error, `${stack.label}: GetObject ${archiveUri(bucket, key)}`) ?? error;
  }
  return readable(() => parseArchive(text, archiveUri(bucket, key)));
}

/** The archived event `eventKey` in the object at `key`; a CliError when it is missing or not there. */
export async function readArchivedEvent(
  stack: StackContext,
  key: string,
  eventKey: string,
): Promise<ArchivedEvent> {
  const events = await readArchivedEvents(stack, key);
  return readable(() => eventIn(events, eventKey, archiveUri(stack.output('ArchiveBucketName'), key)));
}

function readable<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof ArchiveFormatError) throw new CliError(error.message);
    throw error;
  }
}
