/**
 * The stale-order rule and the guard attributes that record a row's last writer (pure: no AWS).
 * The processor checks the rule in the plan and again in the commit's DynamoDB condition.
 */
import type { EventOrder } from '../types.js';

export const DEFAULT_GUARD = 'lastEvent';

/**
 * Guard attribute names for a prefix: `lastEventId`, `lastEventCreated`, `lastEventRank`, and
 * `lastEventEffects`, the effects the writer planned (read back when its claim's markers are lost).
 */
export function guardAttributes(guard: string = DEFAULT_GUARD) {
  return {
    id: `${guard}Id`,
    at: `${guard}Created`,
    rank: `${guard}Rank`,
    effects: `${guard}Effects`,
  } as const;
}

/** The stale-order rule (pure): later time wins; same second, higher rank wins; otherwise the row stays. */
export function isNewer(
  order: EventOrder,
  row: Readonly<Record<string, unknown>> | undefined,
  guard?: string,
): boolean {
  if (row === undefined) return true;
  const names = guardAttributes(guard);
  const at = row[names.at];
  const rank = row[names.rank];
  if (typeof at !== 'number') return true;
  if (order.at !== at) return order.at > at;
  return order.rank > (typeof rank === 'number' ? rank : Number.NEGATIVE_INFINITY);
}
