/**
 * Where archived payloads live in the archive bucket: shared by the processor that writes them, the
 * CLI that reads them and the stack's lifecycle rule and IAM policy.
 */
export const ARCHIVE_PREFIX = 'events';

/** `events/stripe/2026-12-02/stripe%3Aacct_1%3Aevt_1.json` */
export function archiveObjectKey(provider: string, firstSeenAt: string, key: string): string {
  const day = /^\d{4}-\d{2}-\d{2}/.exec(firstSeenAt)?.[0] ?? 'unknown-date';
  return `${ARCHIVE_PREFIX}/${provider}/${day}/${encodeURIComponent(key)}.json`;
}

/** The day prefix for listing one provider's archived events of a date. */
export function archiveDayPrefix(provider: string, day: string): string {
  return `${ARCHIVE_PREFIX}/${provider}/${day}/`;
}
