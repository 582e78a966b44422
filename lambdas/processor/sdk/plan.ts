import type { GuardedWrite, Plan, PlanContext } from '../types.js';

/**
 * The common plan: one absolute write to one row, applied only if the event is newer than the row's
 * last writer (otherwise the event is `stale` and nothing is written).
 */
export async function planRowWrite<Table extends string>(
  context: PlanContext<Table, string>,
  write: GuardedWrite<NoInfer<Table>>,
): Promise<Plan<Table>> {
  const { newer } = await context.read(write.table, write.pk, write.order, write.guard);
  return newer ? { writes: [write] } : { outcome: 'stale' };
}
