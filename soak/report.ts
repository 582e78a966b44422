/**
 * The soak's report (pure): counts per provider, per fault and per effect, then each violation with
 * the event, its claim, the receiver's answers, the effect calls and the stack's log lines that name
 * it, and the command that runs the same soak again.
 */
import type { CheckResult, DeliveryResult, Item, Violation } from './checker.js';
import type { EffectCall } from './effects-server.js';
import type { FaultSchedule } from './faults.js';
import type { OperatorRun } from './operator.js';
import type { Workload } from './workload.js';

export interface SoakFacts {
  readonly workload: Workload;
  readonly faults: FaultSchedule;
  readonly responses: readonly DeliveryResult[];
  readonly effects: readonly EffectCall[];
  readonly outages: readonly { readonly adapter: string; readonly ms: number }[];
  readonly operator: readonly OperatorRun[];
  readonly claims: readonly Item[];
  readonly check: CheckResult;
  /** The stack's log, for the fault points that fired and the lines about each violation. */
  readonly log: string;
  readonly target: string;
  readonly drained: boolean;
  readonly elapsedMs: number;
  readonly command: string;
}

function table(rows: readonly (readonly (string | number)[])[]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => String(r[i] ?? '').length))) ?? [];
  return rows
    .map((r) =>
      r
        .map((cell, i) =>
          typeof cell === 'number'
            ? String(cell).padStart(widths[i] ?? 0)
            : String(cell).padEnd(widths[i] ?? 0),
        )
        .join('  '),
    )
    .join('\n');
}

const count = <T>(items: readonly T[], keyOf: (item: T) => string): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(keyOf(item), (counts.get(keyOf(item)) ?? 0) + 1);
  return counts;
};

/** How often each fault point fired, from the lines the functions log when one does. */
export function firedPoints(log: string): Map<string, number> {
  const fired = new Map<string, number>();
  for (const match of log.matchAll(/injected (?:fault|crash) at ([A-Za-z.]+)/g)) {
    const point = match[1] ?? '';
    fired.set(point, (fired.get(point) ?? 0) + 1);
  }
  return fired;
}

/** The counts as data (the JSON report) and as text. */
export function soakCounts(facts: SoakFacts) {
  const { workload, responses } = facts;
  const providers = [...new Set(workload.events.map((e) => e.provider))];
  const perProvider = providers.map((provider) => {
    const events = workload.events.filter((e) => e.provider === provider);
    const indexes = new Set(events.map((e) => e.index));
    const answers = responses.filter((r) => indexes.has(r.event));
    return {
      provider,
      events: events.length,
      deliveries: answers.length,
      accepted: answers.filter((r) => r.outcome === 'accepted').length,
      duplicate: answers.filter((r) => r.outcome === 'duplicate').length,
      inFlight: answers.filter((r) => r.status === 503).length,
      otherErrors: answers.filter((r) => r.status === 0 || (r.status >= 400 && r.status !== 503)).length,
    };
  });
  const scheduled = count(facts.faults.processFaults, (f) => f.point);
  const fired = firedPoints(facts.log);
  const points = [...new Set([...scheduled.keys(), ...fired.keys()])].sort();
  const perFault = points.map((point) => ({
    point,
    events: scheduled.get(point) ?? 0,
    fired: fired.get(point) ?? 0,
  }));
  const effectFaults = count(facts.effects, (c) => `${c.adapter} ${c.fault}`);
  const perEffectFault = [...effectFaults.entries()].sort().map(([key, calls]) => {
    const [adapter, fault] = key.split(' ');
    return { adapter: adapter ?? '', fault: fault ?? '', calls };
  });
  const operator = count(
    facts.operator,
    (r) => `${r.command.split(' ').slice(1, 3).join(' ')} exit ${r.code}`,
  );
  return {
    perProvider,
    perFault,
    perEffectFault,
    outages: count(facts.outages, (o) => o.adapter),
    operator,
    claims: count(facts.claims, (c) => String(c.status)),
    /** FAILED claims by their reason (its first 100 characters, numbers as N). */
    failedBy: count(
      facts.claims.filter((c) => c.status === 'FAILED'),
      // Numbers out, so one reason with different counts in it is one line.
      (c) =>
        String(c.lastError ?? '(no reason)')
          .replace(/\d+/g, 'N')
          .slice(0, 100),
    ),
  };
}

const CLAIM_FIELDS = [
  'pk',
  'status',
  'deliveries',
  'processingAttempts',
  'lastCompletedStep',
  'plannedEffects',
  'unresumedEffects',
  'unresumedReason',
  'effectAttempt',
  'lastError',
  'sweeps',
  'stuckReason',
  'recoveredFrom',
  'failedAt',
  'completedAt',
];

function describe(violation: Violation, facts: SoakFacts): string {
  const event = violation.event === undefined ? undefined : facts.workload.events[violation.event];
  const lines = [`- ${violation.kind}: ${violation.message}`];
  if (event)
    lines.push(
      `    event   ${event.provider} ${event.type} ${event.eventId} (#${event.index}, object ${event.object ?? '-'})`,
    );
  if (violation.claim) {
    const claim = Object.fromEntries(
      CLAIM_FIELDS.filter((f) => violation.claim?.[f] !== undefined).map((f) => [f, violation.claim?.[f]]),
    );
    lines.push(`    claim   ${JSON.stringify(claim)}`);
  }
  if (event) {
    const answers = facts.responses
      .filter((r) => r.event === event.index)
      .map((r) => `${r.status}${r.outcome ? ` ${r.outcome}` : ''}${r.error ? ` (${r.error})` : ''}`);
    lines.push(`    answers ${answers.join(', ') || 'none'}`);
    const faults = facts.faults.processFaults.filter((f) => f.event === event.index);
    if (faults.length > 0)
      lines.push(`    faults  ${faults.map((f) => `${f.point} x${f.count}`).join(', ')}`);
  }
  for (const call of violation.calls ?? []) {
    lines.push(
      `    call    ${new Date(call.at).toISOString()} ${call.adapter} ${call.acted ? 'acted' : 'did not act'}${call.replay ? ' (replay)' : ''} fault=${call.fault} key=${call.idempotencyKey ?? '-'}`,
    );
  }
  const needles = [
    event?.eventId,
    typeof violation.claim?.pk === 'string' ? violation.claim.pk : undefined,
  ].filter((n): n is string => n !== undefined);
  if (needles.length > 0) {
    const logLines = facts.log.split('\n').filter((line) => needles.some((n) => line.includes(n)));
    for (const line of logLines.slice(0, 12)) lines.push(`    log     ${line.slice(0, 400)}`);
    if (logLines.length > 12) lines.push(`    log     ... ${logLines.length - 12} more lines`);
  }
  return lines.join('\n');
}

export function soakReport(facts: SoakFacts): string {
  const counts = soakCounts(facts);
  const { summary, violations } = facts.check;
  const out: string[] = [];
  out.push(
    `soak of ${facts.target}: ${facts.workload.events.length} events, ${facts.responses.length} deliveries, seed ${facts.workload.seed}, ${Math.round(facts.elapsedMs / 1000)} s${facts.drained ? '' : ' (did NOT drain before the deadline)'}`,
    '',
    table([
      ['provider', 'events', 'deliveries', 'accepted', 'duplicate', '503 in flight', 'other 5xx, no answer'],
      ...counts.perProvider.map((p) => [
        p.provider,
        p.events,
        p.deliveries,
        p.accepted,
        p.duplicate,
        p.inFlight,
        p.otherErrors,
      ]),
    ]),
    '',
    table([['fault point', 'events', 'fired'], ...counts.perFault.map((f) => [f.point, f.events, f.fired])]),
    '',
    table([
      ['effect', 'events', 'acted', 'replays', 'in doubt (reported)'],
      ...Object.entries(summary.effects).map(([name, e]) => [name, e.events, e.acted, e.replays, e.inDoubt]),
    ]),
    '',
    table([
      ['adapter', 'fault', 'calls'],
      ...counts.perEffectFault.map((f) => [f.adapter, f.fault, f.calls]),
    ]),
    '',
    `outages (connection refused): ${[...counts.outages].map(([a, n]) => `${a} ${n}`).join(', ') || 'none'}`,
    `operator: ${[...counts.operator].map(([c, n]) => `${c}: ${n}`).join(', ') || 'nothing run'}`,
    `claims: ${[...counts.claims].map(([s, n]) => `${s} ${n}`).join(', ')}`,
    ...[...counts.failedBy].map(([reason, n]) => `  FAILED ${n}: ${reason}`),
    `events: ${summary.accepted} accepted (${summary.done} DONE, ${summary.failedInDlq} FAILED in the DLQ, ${summary.stuckReported} reported stuck), ${summary.neverAccepted} never accepted; ${summary.rowsFromFailed} rows from an event that failed after its state`,
    '',
  );
  if (violations.length === 0) out.push('violations: none');
  else {
    const kinds = count(violations, (v) => v.kind);
    out.push(`violations: ${violations.length} (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')})`);
    for (const violation of violations.slice(0, 50)) out.push(describe(violation, facts));
    if (violations.length > 50) out.push(`... ${violations.length - 50} more in the JSON report`);
  }
  out.push('', `again: ${facts.command}`);
  return out.join('\n');
}
