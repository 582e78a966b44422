/**
 * A KYC vendor configured by data (examples/providers/onfido.json, docs/configured-providers.md):
 * the latest state of each identity check in the Resources table (`onfido:<account>:check:<id>`).
 * Ordered by the check's completion time when the payload has one, else by when it was received; in
 * the same second a completed check outranks any other state, so it never goes back.
 */

import type { AppApplier } from '../../../lambdas/processor/sdk/index.js';
import { isNewer, isoSeconds, joinKey, obj, str } from '../../../lambdas/processor/sdk/index.js';
import type { ExampleApp } from '../app-types.js';

export function checkRowKey(account: string, checkId: string): string {
  return joinKey(['onfido', account, 'check', checkId]);
}

export const onfidoCheck: AppApplier<ExampleApp, 'onfido'> = {
  async plan(event, context) {
    const payload = obj(event.payload.payload);
    const check = obj(payload?.object);
    const checkId = str(check?.id);
    if (!checkId || str(payload?.resource_type) !== 'check') return { outcome: 'noop' };
    const pk = checkRowKey(event.account, checkId);
    const completedAt = isoSeconds(check?.completed_at_iso8601);
    const order = {
      at: completedAt ?? Math.floor(Date.parse(event.receivedAt) / 1000),
      rank: event.eventType === 'check.completed' ? 1 : 0,
      eventId: event.eventId,
    };
    const { row } = await context.read('resources', pk, order);
    if (!isNewer(order, row)) return { outcome: 'stale' };
    return {
      writes: [
        {
          table: 'resources',
          pk,
          order,
          attributes: {
            provider: 'onfido',
            kind: 'check',
            objectId: checkId,
            action: event.eventType,
            status: str(check?.status),
            href: str(check?.href),
          },
        },
      ],
    };
  },
};
