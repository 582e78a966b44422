/**
 * GitHub `push`: the latest head commit per repository and ref, in the Resources table
 * (`github:<hook target>:ref:<repository id>:<ref>`), ordered by the repository's `pushed_at`.
 */
import { joinKey } from '../../shared/keys';
import type { BusinessHandler } from '../types';
import { id, num, obj, str } from './payload';
import { planRowWrite } from './plan';

export function refRowKey(account: string, repositoryId: string, ref: string): string {
  return joinKey(['github', account, 'ref', repositoryId, ref]);
}

export const githubPush: BusinessHandler = {
  async plan(event, context) {
    const repository = obj(event.payload.repository);
    const repositoryId = id(repository?.id);
    const ref = str(event.payload.ref);
    if (!repositoryId || !ref) return { outcome: 'noop' };
    const pk = refRowKey(event.account, repositoryId, ref);
    const pushedAt = num(repository?.pushed_at) ?? Math.floor(Date.parse(event.receivedAt) / 1000);
    const eventOrder = { at: pushedAt, rank: 0, eventId: event.eventId };
    return planRowWrite(context, {
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
    });
  },
};
