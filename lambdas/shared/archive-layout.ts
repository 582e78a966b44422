/**
 * Where archived payloads live in the archive bucket: shared by the processor that writes them, the
 * CLI that reads them and the stack's lifecycle rule and IAM policy. Every object of a provider and
 * UTC day is under one prefix, so a time range is a prefix listing.
 */
export const ARCHIVE_PREFIX = 'events';

/** Shopify data-request exports (lambdas/processor/compliance.ts), with a lifecycle rule of their own. */
export const COMPLIANCE_PREFIX = 'compliance';

/** The UTC day (`yyyy-mm-dd`) of an ISO-8601 time, as the archive's prefixes name it. */
export function archiveDay(isoTime: string): string {
  return /^\d{4}-\d{2}-\d{2}/.exec(isoTime)?.[0] ?? 'unknown-date';
}

/** One event's own object: `events/stripe/2026-12-02/stripe%3Aacct_1%3Aevt_1.json` */
export function archiveObjectKey(provider: string, firstSeenAt: string, key: string): string {
  return `${ARCHIVE_PREFIX}/${provider}/${archiveDay(firstSeenAt)}/${encodeURIComponent(key)}.json`;
}

/**
 * A batch object of the processor: `events/stripe/2026-12-02/batch-20261202T101500123Z-<id>.json`,
 * under the day of its events' `receivedAt`. An event's own object name always holds `%3A` (the
 * encoded `:` of its key), so the two never collide.
 */
export function archiveBatchKey(provider: string, receivedAt: string, nowMs: number, id: string): string {
  return `${ARCHIVE_PREFIX}/${provider}/${archiveDay(receivedAt)}/${batchNamePrefix(nowMs)}-${id}.json`;
}

/**
 * `batch-<stamp>` of a batch object written at `nowMs`: fixed width, so a day's batch objects sort
 * by the time they were written, and every one written after `nowMs` sorts after it.
 */
export function batchNamePrefix(nowMs: number): string {
  return `batch-${new Date(nowMs).toISOString().replace(/[-:.]/g, '')}`;
}

/** The day prefix (`events/<provider>/<day>/`) an archive object's key is under, if it is one. */
export function archiveDayPrefixOf(objectKey: string): string | undefined {
  return new RegExp(`^${ARCHIVE_PREFIX}/[^/]+/[^/]+/`).exec(objectKey)?.[0];
}

/** The day prefix for listing one provider's archived events of a date. */
export function archiveDayPrefix(provider: string, day: string): string {
  return `${ARCHIVE_PREFIX}/${provider}/${day}/`;
}
