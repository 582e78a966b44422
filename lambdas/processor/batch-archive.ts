/**
 * The payload archive of one SQS batch: before its records run, the processor writes one archive
 * object per provider and `receivedAt` day for the events that came with their body (claim checks
 * are archived already, by the receiver). Ten events of a full batch cost one S3 PUT instead of
 * ten; each record then records the object's key on its claim (`archiveKey`), as it recorded its
 * own object's before.
 *
 * Each record waits for the write before its lease write, which names the object on the claim
 * (`archiveKey`): a worker that dies holding the lease leaves a claim whose body the sweeper can
 * find. The records of a batch wait for the same PUT, then run in parallel. When it fails, every
 * record that needed it fails its attempt (the claim records why) and SQS delivers it again, as a
 * failed PUT of its own would have done.
 */
import type { EventMessage } from '../queue/event-message.js';
import { isClaimCheck } from '../queue/event-message.js';
import { archiveGroups, type PayloadArchive } from '../store/payload-archive.js';
import { parseEventMessage } from './core.js';

/** Where each event of the batch (by idempotency key) is being archived. */
export type BatchArchives = ReadonlyMap<string, Promise<string>>;

export function archiveBatch(
  bodies: readonly string[],
  archive: PayloadArchive,
  nowMs: number,
): BatchArchives {
  const messages: EventMessage[] = [];
  for (const body of bodies) {
    try {
      const message = parseEventMessage(body);
      if (!isClaimCheck(message)) messages.push(message);
    } catch {
      // Poison: its record fails on its own and has nothing to archive.
    }
  }
  const archives = new Map<string, Promise<string>>();
  for (const group of archiveGroups(messages)) {
    const written = archive.putBatch(group, nowMs);
    // A record that never gets to its archive step (already DONE, busy) does not await it.
    written.catch(() => undefined);
    for (const message of group) archives.set(message.key, written);
  }
  return archives;
}
