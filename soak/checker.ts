/**
 * What must hold after a soak (pure): given the workload, what the receiver answered, and what the
 * stack holds at the end (claims, business rows, the DLQ) and what the effect services saw, every
 * violation of exactly-once, each with the event, its claim and the effect calls behind it.
 *
 * - Nothing accepted is lost: an event answered 2xx has a claim that is `DONE`, or `FAILED` with its
 *   reason and a message in the DLQ.
 * - No claim is left unfinished without a report (the sweeper's `stuckAt`).
 * - The business state is the latest: each object's row was written by the latest of its `DONE`
 *   events by the provider's order (or by a later event that applied its state and then `FAILED`),
 *   and holds what that event says.
 * - Effects: an effect whose adapter honours `Idempotency-Key` acted once for each event that runs
 *   it; one whose adapter does not acted at most once, and where it did not act the claim reports it
 *   in doubt (`unresumedEffects`); no effect acted for an event that runs none.
 * - A valid signed delivery is never refused (4xx).
 */
import type { EffectCall } from './effects-server.js';
import type { SoakEvent, Workload } from './workload.js';

export type Item = Readonly<Record<string, unknown>>;

export interface DeliveryResult {
  readonly event: number;
  readonly status: number;
  readonly outcome?: string;
  readonly error?: string;
}

export interface Observation {
  readonly responses: readonly DeliveryResult[];
  readonly claims: readonly Item[];
  readonly rows: Readonly<Record<string, readonly Item[]>>;
  /** The idempotency keys of the messages in the DLQ. */
  readonly dlqKeys: readonly string[];
  readonly effects: readonly EffectCall[];
}

export type ViolationKind =
  | 'refused'
  | 'lost'
  | 'unfinished'
  | 'state'
  | 'effect-repeated'
  | 'effect-missing'
  | 'effect-dropped'
  | 'effect-unexpected';

export interface Violation {
  readonly kind: ViolationKind;
  readonly message: string;
  readonly event?: number;
  readonly object?: string;
  readonly claim?: Item;
  readonly calls?: readonly EffectCall[];
}

export interface CheckSummary {
  readonly accepted: number;
  readonly neverAccepted: number;
  readonly done: number;
  readonly failedInDlq: number;
  readonly stuckReported: number;
  /** Objects whose row came from an event that applied its state and then failed. */
  readonly rowsFromFailed: number;
  /** Per effect: events that ran it, calls that acted, replays, and events reporting it in doubt. */
  readonly effects: Readonly<
    Record<string, { events: number; acted: number; replays: number; inDoubt: number }>
  >;
}

export interface CheckResult {
  readonly violations: readonly Violation[];
  readonly summary: CheckSummary;
}

const FINAL = new Set(['DONE', 'FAILED']);

/** The claim an event is filed under: Stripe intents by intent and type (composite keys), the rest by event id. */
export function claimOf(event: SoakEvent, claims: readonly Item[]): Item | undefined {
  if (event.provider === 'stripe') {
    const intent = String(event.fields.intent);
    return claims.find((c) => c.provider === 'stripe' && c.objectId === intent && c.eventType === event.type);
  }
  return claims.find((c) => c.provider === event.provider && c.eventId === event.eventId);
}

/** The row of an object: every example row carries `provider` and `objectId`. */
function rowOf(table: readonly Item[] | undefined, provider: string, objectId: string): Item | undefined {
  return table?.find((row) => row.provider === provider && row.objectId === objectId);
}

const unresumed = (claim: Item | undefined): string[] =>
  Array.isArray(claim?.unresumedEffects) ? (claim.unresumedEffects as string[]) : [];

/** The example's receipt runs on the `mailer` adapter; every other effect on the adapter of its name. */
export const EFFECT_ADAPTERS: Readonly<Record<string, string>> = { ledger: 'ledger', receipt: 'mailer' };

export function check(workload: Workload, observation: Observation): CheckResult {
  const violations: Violation[] = [];
  const byEvent = new Map<number, DeliveryResult[]>();
  for (const r of observation.responses) byEvent.set(r.event, [...(byEvent.get(r.event) ?? []), r]);
  const claimByEvent = new Map<number, Item | undefined>();
  const dlq = new Set(observation.dlqKeys);
  let accepted = 0;
  let neverAccepted = 0;
  let done = 0;
  let failedInDlq = 0;
  let stuckReported = 0;

  for (const event of workload.events) {
    const results = byEvent.get(event.index) ?? [];
    const claim = claimOf(event, observation.claims);
    claimByEvent.set(event.index, claim);
    for (const r of results) {
      if (r.status >= 400 && r.status < 500) {
        violations.push({
          kind: 'refused',
          event: event.index,
          message: `a valid signed delivery was answered ${r.status} ${r.outcome ?? ''}`.trim(),
          ...(claim ? { claim } : {}),
        });
        break;
      }
    }
    if (!results.some((r) => r.status >= 200 && r.status < 300)) {
      if (results.length > 0) neverAccepted++;
      continue;
    }
    accepted++;
    if (claim === undefined) {
      violations.push({ kind: 'lost', event: event.index, message: 'answered 2xx, but no claim holds it' });
      continue;
    }
    const status = String(claim.status);
    if (status === 'DONE') done++;
    else if (status === 'FAILED') {
      if (typeof claim.lastError === 'string' && dlq.has(String(claim.pk))) failedInDlq++;
      else
        violations.push({
          kind: 'lost',
          event: event.index,
          claim,
          message: dlq.has(String(claim.pk))
            ? 'FAILED without a reason (lastError)'
            : 'FAILED, and no message of its key is in the DLQ',
        });
    } else if (!FINAL.has(status)) {
      if (claim.stuckAt !== undefined) stuckReported++;
      else
        violations.push({
          kind: 'unfinished',
          event: event.index,
          claim,
          message: `claim still ${status} after the run drained, and nothing reports it stuck`,
        });
    }
  }

  // The business state: each object's row against its latest DONE event.
  let rowsFromFailed = 0;
  const eventsOf = new Map<string, SoakEvent[]>();
  for (const event of workload.events) {
    if (event.object !== undefined)
      eventsOf.set(event.object, [...(eventsOf.get(event.object) ?? []), event]);
  }
  for (const object of workload.objects) {
    const events = eventsOf.get(object.id) ?? [];
    const statusOf = (e: SoakEvent) => String(claimByEvent.get(e.index)?.status ?? '');
    const doneEvents = events.filter((e) => statusOf(e) === 'DONE');
    const row = rowOf(observation.rows[object.table], object.provider, object.objectId);
    if (doneEvents.length === 0) continue;
    const latest = doneEvents.reduce((a, b) => (b.version > a.version ? b : a));
    if (row === undefined) {
      violations.push({
        kind: 'state',
        object: object.id,
        event: latest.index,
        message: `no ${object.table} row, though event ${latest.eventId} is DONE`,
      });
      continue;
    }
    const writerId = String(row.lastEventId ?? '');
    const writer = events.find((e) => writerId === e.eventId || writerId === `${e.eventId}r`);
    if (writer !== undefined && writer.version > latest.version && statusOf(writer) === 'FAILED') {
      rowsFromFailed++;
      continue;
    }
    const wrong = Object.entries(latest.expect).filter(([name, value]) => row[name] !== value);
    if (writer?.index !== latest.index || wrong.length > 0) {
      violations.push({
        kind: 'state',
        object: object.id,
        event: latest.index,
        message:
          `${object.table} row written by ${writerId || 'nobody'} (${writer ? `version ${writer.version}` : 'not an event of this object'}), ` +
          `expected the latest DONE event ${latest.eventId} (version ${latest.version})` +
          (wrong.length > 0
            ? `; ${wrong.map(([n, v]) => `${n} is ${JSON.stringify(row[n])}, expected ${JSON.stringify(v)}`).join(', ')}`
            : ''),
      });
    }
  }

  // Effects, per object that has an event running them.
  const effects: Record<string, { events: number; acted: number; replays: number; inDoubt: number }> = {};
  const runners = new Map<string, SoakEvent>();
  for (const event of workload.events) {
    if (event.effects.length > 0 && event.object !== undefined) runners.set(event.object, event);
  }
  const callsOf = (object: string, adapter: string) => {
    const intent = object.slice(object.indexOf(':') + 1);
    return observation.effects.filter(
      (c) => c.adapter === adapter && c.subject !== undefined && c.subject.split(':').at(-1) === intent,
    );
  };
  for (const object of workload.objects) {
    const runner = runners.get(object.id);
    for (const [effect, adapter] of Object.entries(EFFECT_ADAPTERS)) {
      const calls = callsOf(object.id, adapter);
      const acted = calls.filter((c) => c.acted && !c.replay);
      const tally = effects[effect] ?? { events: 0, acted: 0, replays: 0, inDoubt: 0 };
      effects[effect] = tally;
      tally.acted += acted.length;
      tally.replays += calls.filter((c) => c.replay).length;
      if (runner === undefined || !runner.effects.includes(effect)) {
        if (acted.length > 0)
          violations.push({
            kind: 'effect-unexpected',
            object: object.id,
            message: `${effect} acted ${acted.length} time(s) for an object whose events run none`,
            calls,
          });
        continue;
      }
      tally.events++;
      const claim = claimByEvent.get(runner.index);
      const reported = unresumed(claim).some((name) => name === effect || name === 'unknown');
      if (reported) tally.inDoubt++;
      if (acted.length > 1) {
        violations.push({
          kind: 'effect-repeated',
          object: object.id,
          event: runner.index,
          message: `${effect} acted ${acted.length} times for one event`,
          ...(claim ? { claim } : {}),
          calls,
        });
        continue;
      }
      if (claim?.status !== 'DONE' || acted.length === 1) continue;
      const honours = adapter === 'ledger';
      if (honours && !reported)
        violations.push({
          kind: 'effect-missing',
          object: object.id,
          event: runner.index,
          message: `${effect} never acted, though the event is DONE and its adapter honours the key`,
          claim,
          calls,
        });
      else if (!reported)
        violations.push({
          kind: 'effect-dropped',
          object: object.id,
          event: runner.index,
          message: `${effect} never acted and the DONE claim does not report it in doubt`,
          claim,
          calls,
        });
    }
  }

  return {
    violations,
    summary: { accepted, neverAccepted, done, failedInDlq, stuckReported, rowsFromFailed, effects },
  };
}
