/**
 * GitHub `push`: the latest head commit per repository and ref, in the Resources table
 * (`github:<hook target>:ref:<repository id>:<ref>`), ordered by the repository's `pushed_at`.
 */

import type { AppApplier } from '../../../lambdas/processor/sdk/index.js';
import {
  guardAttributes,
  id,
  isNewer,
  isoSeconds,
  joinKey,
  num,
  obj,
  str,
} from '../../../lambdas/processor/sdk/index.js';
import type { ExampleApp } from '../app-types.js';

export function refRowKey(account: string, repositoryId: string, ref: string): string {
  return joinKey(['github', account, 'ref', repositoryId, ref]);
}

/**
 * GitHub's own sequence: a push whose `before` is the head the row holds follows it. In the same
 * `pushed_at` second it outranks the row's writer by one; a push that does not follow keeps rank 0
 * (so a same-second push the row already moved past stays stale). Safe to derive from the row: the
 * commit checks the row's writer is still the one read here.
 */
export function pushRank(
  row: Readonly<Record<string, unknown>> | undefined,
  pushedAt: number,
  before: unknown,
): number {
  if (row === undefined || typeof before !== 'string' || row.headSha !== before) return 0;
  const names = guardAttributes();
  const rank = row[names.rank];
  return row[names.at] === pushedAt && typeof rank === 'number' ? rank + 1 : 0;
}

export const githubPush: AppApplier<ExampleApp, 'github'> = {
  async plan(event, context) {
    const repository = obj(event.payload.repository);
    const repositoryId = id(repository?.id);
    const ref = str(event.payload.ref);
    if (!repositoryId || !ref) return { outcome: 'noop' };
    const pk = refRowKey(event.account, repositoryId, ref);
    // Epoch seconds in push payloads; an ISO string elsewhere (GitHub's types allow both).
    const pushedAt =
      num(repository?.pushed_at) ??
      isoSeconds(repository?.pushed_at) ??
      Math.floor(Date.parse(event.receivedAt) / 1000);
    const { row } = await context.read('resources', pk, { at: pushedAt, rank: 0, eventId: event.eventId });
    const eventOrder = {
      at: pushedAt,
      rank: pushRank(row, pushedAt, event.payload.before),
      eventId: event.eventId,
    };
    if (!isNewer(eventOrder, row)) return { outcome: 'stale' };
    return {
      writes: [
        {
          table: 'resources',
          pk,
          order: eventOrder,
          attributes: {
            provider: 'github',
            kind: 'ref',
            objectId: `${repositoryId}:${ref}`,
            repository: str(repository?.full_name),
            ref,
            headSha: str(event.payload.after),
            deleted: event.payload.deleted === true,
            pusher: str(obj(event.payload.pusher)?.name),
          },
        },
      ],
    };
  },
};
