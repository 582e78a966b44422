import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Fault points, for testing recovery: active only when FAULT_POINTS is set (a deployed stack never
 * sets it). `FAULT_POINTS=point[@match][:count],...` throws at the named point, only for events whose
 * provider event id contains `match` when given, `count` times (default 1, `*` for always).
 */

export const FAULT_POINT_NAMES = [
  'receiver.afterClaim',
  'receiver.afterPayloadStored',
  'processor.beforeClaim',
  'processor.afterClaim',
  'processor.crashAfterClaim',
  'processor.afterState',
  // An event failing now (lambdas/processor/failures.ts): its claim is FAILED, its message not yet
  // moved to the DLQ.
  'processor.failNow',
  // After each archive object a Shopify compliance request has scanned (lambdas/processor/compliance.ts).
  'compliance.afterObject',
  // A deferred redaction's event is DONE and back in the sweeper's index, its body not yet removed
  // (lambdas/processor/deferred-redaction.ts).
  'compliance.afterDone',
] as const;

/**
 * Each effect step has three points, named after the effect (PascalCase): before the call, between
 * the call and its step marker, and after the marker. An effect named `notify` gives
 * `processor.beforeNotify`, `processor.beforeNotifyMarker` and `processor.afterNotify`.
 */
export type EffectFaultPointName = `processor.${'before' | 'after'}${string}`;
export type FaultPointName = (typeof FAULT_POINT_NAMES)[number] | EffectFaultPointName;

export type EffectFaultPoint = 'before' | 'beforeMarker' | 'after';

/** The name of an effect step's fault point (`effectFaultPoint('before', 'notify')` = `processor.beforeNotify`). */
export function effectFaultPoint(point: EffectFaultPoint, effect: string): EffectFaultPointName {
  return EFFECT_POINT_NAMES[point](effect.charAt(0).toUpperCase() + effect.slice(1));
}

/** One entry per point, so no point name falls through to another's. */
const EFFECT_POINT_NAMES: Readonly<Record<EffectFaultPoint, (pascal: string) => EffectFaultPointName>> = {
  before: (pascal) => `processor.before${pascal}`,
  beforeMarker: (pascal) => `processor.before${pascal}Marker`,
  after: (pascal) => `processor.after${pascal}`,
};

const EFFECT_FAULT_POINT = /^processor\.(?:before|after)[A-Z][A-Za-z0-9]*$/;

function isFaultPointName(name: string): boolean {
  return (FAULT_POINT_NAMES as readonly string[]).includes(name) || EFFECT_FAULT_POINT.test(name);
}

/**
 * Points that end the process instead of throwing: the worker dies holding its lease, as on a
 * Lambda timeout or crash (no release, no failure mark; the invocation fails, SQS redelivers).
 */
const CRASH_POINTS: ReadonlySet<string> = new Set<FaultPointName>(['processor.crashAfterClaim']);

export class InjectedFaultError extends Error {
  override readonly name = 'InjectedFaultError';
  constructor(readonly point: string) {
    super(`injected fault at ${point}`);
  }
}

interface FaultRule {
  readonly point: string;
  readonly match: string | undefined;
  remaining: number; // Infinity for '*'
}

export type FaultInjector = (point: FaultPointName, eventId: string) => void;

export function parseFaultPoints(spec: string | undefined): FaultRule[] {
  return (spec ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const m = /^([A-Za-z0-9.]+)(?:@([^:]*))?(?::(\*|\d+))?$/.exec(part);
      if (!m?.[1] || !isFaultPointName(m[1])) {
        throw new Error(
          `FAULT_POINTS entry ${JSON.stringify(part)} is not point[@match][:count] with a point among ${FAULT_POINT_NAMES.join(', ')}, or an effect's processor.before<Effect>, processor.before<Effect>Marker, processor.after<Effect>`,
        );
      }
      const count = m[3] === undefined ? 1 : m[3] === '*' ? Number.POSITIVE_INFINITY : Number(m[3]);
      return { point: m[1], match: m[2] || undefined, remaining: count };
    });
}

/**
 * An injector for the spec, or undefined when no fault is configured (the normal case).
 *
 * Counts are per process unless `stateDirectory` is given: then every process sharing the directory
 * shares the counts (each firing claims a numbered directory, and mkdir is atomic), so "once" means
 * once across all the execution environments of a local stack.
 */
export function faultInjector(spec: string | undefined, stateDirectory?: string): FaultInjector | undefined {
  const rules = parseFaultPoints(spec);
  if (rules.length === 0) return undefined;
  const claimFiring = (index: number, rule: FaultRule): boolean => {
    if (rule.remaining === Number.POSITIVE_INFINITY) return true;
    if (stateDirectory === undefined) {
      if (rule.remaining <= 0) return false;
      rule.remaining -= 1;
      return true;
    }
    for (let firing = 1; firing <= rule.remaining; firing++) {
      try {
        mkdirSync(join(stateDirectory, `rule-${index}-${firing}`));
        return true;
      } catch {
        // taken by an earlier firing (here or in another process)
      }
    }
    return false;
  };
  return (point, eventId) => {
    rules.forEach((rule, index) => {
      if (rule.point !== point) return;
      if (rule.match !== undefined && !eventId.includes(rule.match)) return;
      if (!claimFiring(index, rule)) return;
      if (CRASH_POINTS.has(point)) {
        console.error(`injected crash at ${point}: the process exits`);
        process.exit(137);
      }
      throw new InjectedFaultError(point);
    });
  };
}
