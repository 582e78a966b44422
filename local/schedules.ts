/**
 * Stands in for EventBridge scheduled rules: each enabled `AWS::Events::Rule` with a
 * `ScheduleExpression` that targets a local function invokes it with a "Scheduled Event" on a timer.
 * The template decides what runs; locally the period is short (LOCAL_SWEEP_INTERVAL_SECONDS,
 * default 10 s) so the sweeper's work shows without waiting for its deployed 5 minutes. A run still
 * going when the next is due is not overlapped: the next tick is skipped, as one sweep at a time
 * is enough.
 */
import { randomUUID } from 'node:crypto';
import { LOCAL_DEFAULTS } from './settings.js';
import {
  type CfnTemplate,
  type IntrinsicResolver,
  LOCAL_ACCOUNT,
  LOCAL_REGION,
  resourcesOfType,
} from './template.js';

/** LOCAL_SWEEP_INTERVAL_SECONDS's default (./settings.ts). */
export const LOCAL_SCHEDULE_DEFAULT_SECONDS = LOCAL_DEFAULTS.sweepIntervalSeconds;

export interface ScheduledTarget {
  /** The rule's logical id. */
  readonly rule: string;
  readonly expression: string;
  /** The target function's logical id. */
  readonly functionId: string;
}

/** The scheduled rules of the template and the functions they target (by logical id). */
export function scheduledTargets(
  template: CfnTemplate,
  resolver: IntrinsicResolver,
  functionIdOfArn: (arn: string) => string | undefined,
): ScheduledTarget[] {
  const found: ScheduledTarget[] = [];
  for (const [rule, resource] of resourcesOfType(template, 'AWS::Events::Rule')) {
    const props = resource.Properties ?? {};
    if (typeof props.ScheduleExpression !== 'string' || (props.State ?? 'ENABLED') !== 'ENABLED') continue;
    for (const target of (props.Targets as Array<{ Arn?: unknown }> | undefined) ?? []) {
      const functionId = functionIdOfArn(String(resolver.resolve(target.Arn)));
      if (functionId) found.push({ rule, expression: props.ScheduleExpression, functionId });
    }
  }
  return found;
}

/** The event EventBridge sends a scheduled rule's target. */
export function scheduledEvent(rule: string, nowMs: number): Record<string, unknown> {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: LOCAL_ACCOUNT,
    time: new Date(nowMs).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: LOCAL_REGION,
    resources: [`arn:aws:events:${LOCAL_REGION}:${LOCAL_ACCOUNT}:rule/${rule}`],
    detail: {},
  };
}

/** Starts a timer per target; the returned function stops them and waits for a run in progress. */
export function startSchedules(
  targets: readonly ScheduledTarget[],
  invoke: (functionId: string, event: unknown) => Promise<unknown>,
  options: { periodSeconds: number; log: (line: string) => void },
): () => Promise<void> {
  const running = new Set<Promise<unknown>>();
  const timers = targets.map((target) => {
    let busy = false;
    return setInterval(() => {
      if (busy) return;
      busy = true;
      const run = invoke(target.functionId, scheduledEvent(target.rule, Date.now()))
        .catch((error) =>
          options.log(`[schedule] ${target.rule} -> ${target.functionId} failed: ${String(error)}`),
        )
        .finally(() => {
          busy = false;
          running.delete(run);
        });
      running.add(run);
    }, options.periodSeconds * 1000);
  });
  for (const target of targets)
    options.log(
      `[schedule] ${target.functionId}: every ${options.periodSeconds} s locally (deployed: ${target.expression})`,
    );
  return async () => {
    for (const timer of timers) clearInterval(timer);
    await Promise.allSettled([...running]);
  };
}
