/**
 * The soak's fault schedule, drawn from the seed (pure): which events meet which fault point, and how
 * many times (as the stack's `FAULT_POINTS`, one `point@token:count` rule per event, matched on the
 * event id's unique token), when an effect adapter has an outage, and when the simulated operator
 * redrives the DLQ or force-replays an event.
 */
import type { Random } from './random.js';
import type { SoakEvent, Workload } from './workload.js';

export interface ProcessFault {
  readonly event: number;
  readonly point: string;
  readonly token: string;
  readonly count: number;
}

export interface TimedAction {
  readonly atMs: number;
  readonly action:
    | { readonly kind: 'outage'; readonly adapter: string; readonly ms: number }
    | { readonly kind: 'redrive' }
    | { readonly kind: 'replay'; readonly event: number };
}

export interface FaultSchedule {
  readonly processFaults: readonly ProcessFault[];
  /** `FAULT_POINTS` for the stack. */
  readonly faultPoints: string;
  readonly actions: readonly TimedAction[];
}

export interface FaultOptions {
  /** The fault points the stack under test knows (an older checkout may know fewer). */
  readonly knownPoints: ReadonlySet<string>;
  /** The stack's `MAX_RECEIVE_COUNT`: a fault that fires this many times sends the event to the DLQ. */
  readonly maxReceiveCount: number;
  /** Share of events that meet a fault point. @default 0.15 */
  readonly faultRate?: number;
  /** The adapters that get outage windows. */
  readonly adapters: readonly string[];
}

/** The points an event can meet, by what it is (each point's place: docs/rules.md, section 10). */
export function pointsFor(event: SoakEvent, redactedCustomers: ReadonlySet<number> = new Set()): string[] {
  const points = [
    'receiver.afterClaim',
    'processor.beforeClaim',
    'processor.afterClaim',
    'processor.crashAfterClaim',
  ];
  // Between the state transaction and the first effect: only an event with effects gets there.
  if (event.effects.length > 0) points.push('processor.afterState');
  if (event.bytes !== undefined) points.push('receiver.afterPayloadStored');
  for (const effect of event.effects) {
    const pascal = effect.charAt(0).toUpperCase() + effect.slice(1);
    points.push(`processor.before${pascal}`, `processor.before${pascal}Marker`, `processor.after${pascal}`);
  }
  if (event.type === 'customers/redact') points.push('compliance.afterObject');
  // A redaction deferred until an order is DONE: only the redacted customers' orders can meet it.
  if (
    event.type !== 'customers/redact' &&
    event.customer !== undefined &&
    redactedCustomers.has(event.customer)
  )
    points.push('compliance.afterDone');
  return points;
}

/** The points every event reaches. */
const GENERAL_POINTS: ReadonlySet<string> = new Set([
  'receiver.afterClaim',
  'processor.beforeClaim',
  'processor.afterClaim',
  'processor.crashAfterClaim',
]);

/** An effect point exists in a checkout when its base name is known there (effect points came later). */
function known(point: string, knownPoints: ReadonlySet<string>): boolean {
  if (knownPoints.has(point)) return true;
  return /^processor\.(before|after)[A-Z]/.test(point) && knownPoints.has('processor.before<Effect>');
}

export function planFaults(random: Random, workload: Workload, options: FaultOptions): FaultSchedule {
  const rate = options.faultRate ?? 0.15;
  const processFaults: ProcessFault[] = [];
  const redacted = new Set(
    workload.events.flatMap((e) =>
      e.type === 'customers/redact' && e.customer !== undefined ? [e.customer] : [],
    ),
  );
  for (const event of workload.events) {
    if (event.token === undefined || !random.chance(rate)) continue;
    const candidates = pointsFor(event, redacted).filter((p) => known(p, options.knownPoints));
    if (candidates.length === 0) continue;
    // The points only some events reach (around effects, a claim check, a redaction) are where
    // exactly-once is most at stake: they get more than their share.
    const special = candidates.filter((p) => !GENERAL_POINTS.has(p));
    const point = random.pick(special.length > 0 && random.chance(0.6) ? special : candidates);
    // A crash costs a visibility timeout per firing: once. Otherwise mostly once, sometimes twice,
    // and now and then on every receive, so the event goes to the DLQ and the operator's redrive.
    const count =
      point === 'processor.crashAfterClaim'
        ? 1
        : random.chance(0.1)
          ? options.maxReceiveCount
          : random.chance(0.25)
            ? 2
            : 1;
    processFaults.push({ event: event.index, point, token: event.token, count });
  }
  const actions: TimedAction[] = [];
  const span = workload.durationMs + 20_000;
  for (const adapter of options.adapters) {
    for (let at = random.int(2_000, 8_000); at < span; at += random.int(6_000, 15_000)) {
      actions.push({ atMs: at, action: { kind: 'outage', adapter, ms: random.int(300, 2_000) } });
    }
  }
  for (let at = random.int(8_000, 15_000); at < span; at += random.int(10_000, 20_000)) {
    actions.push({ atMs: at, action: { kind: 'redrive' } });
  }
  const replayable = workload.events.filter((e) => e.type !== 'customers/redact');
  for (
    let at = random.int(5_000, 10_000);
    at < span && replayable.length > 0;
    at += random.int(4_000, 10_000)
  ) {
    actions.push({ atMs: at, action: { kind: 'replay', event: random.pick(replayable).index } });
  }
  return {
    processFaults,
    faultPoints: processFaults.map((f) => `${f.point}@${f.token}:${f.count}`).join(','),
    actions: actions.sort((a, b) => a.atMs - b.atMs),
  };
}
