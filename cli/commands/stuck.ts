/**
 * `webhooks stuck`: the claims the sweeper reported because it could not recover them (no stored
 * body to send again, or sent again too often), with why and what to do. Read from the stuck shard
 * of the unfinished-claims index: no table scan.
 */
import { type ClaimRecord, ClaimStatus } from '../../lambdas/store/claim.js';
import { SweepStore } from '../../lambdas/store/sweep-store.js';
import { countOption, expectPositionals, GLOBAL_OPTIONS_HELP, parseCommandArgs } from '../args.js';
import { type Command, output } from '../command.js';
import { plural, timeWithDistance } from '../format.js';
import { aws, openStack } from '../stack.js';
import { formatTable } from '../table.js';

const NAME = 'stuck';
const DEFAULT_MAX = 100;
const MAX = 10_000;

const HELP = `usage: webhooks stuck [--max N]

Lists the claims the sweeper reported stuck: accepted events that are not applied and that it
cannot send again by itself. For each: key, status, provider, event id, when it was reported,
and why. What to do, by status:

  RECEIVED    never queued, body not stored: only a provider retry brings it back (Stripe and
              Shopify retry on their own; GitHub: redeliver from the webhook's Recent Deliveries).
              With markEnqueued: false (the reason says "sent without an ENQUEUED mark") it may
              have been queued: do as for ENQUEUED, then as above
  ENQUEUED    queued, never processed: look in the DLQ (webhooks dlq list) and redrive it; a
              backlog older than stuckEnqueuedAfter also lands here and clears as it drains
  PROCESSING  the last attempt died (timed out) and the message is in the DLQ: redrive it
  DONE        applied, but the archived payload a Shopify redaction kept until then is still
              there: the processor's log says why ("deferred redaction"); once that is fixed,
              webhooks replay --force --key KEY, and the processor removes it after DONE

A report clears itself when the claim is taken over (a retry), replayed to DONE, or expires.

options
  --max N        list at most N (default ${DEFAULT_MAX})
${GLOBAL_OPTIONS_HELP}

exit status: 0 nothing stuck, 1 claims are stuck, 2 usage`;

export interface StuckEntry {
  readonly key: string;
  readonly status: string;
  readonly provider: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly stuckAt: string | null;
  readonly reason: string | null;
  readonly firstSeenAt: string;
  readonly deliveries: number;
}

function entryOf(claim: ClaimRecord): StuckEntry {
  return {
    key: claim.pk,
    status: claim.status,
    provider: claim.provider,
    eventId: claim.eventId,
    eventType: claim.eventType,
    stuckAt: claim.stuckAt ?? null,
    reason: claim.stuckReason ?? null,
    firstSeenAt: claim.firstSeenAt,
    deliveries: Number(claim.deliveries),
  };
}

function stuckText(entries: readonly StuckEntry[], nowMs: number): string {
  if (entries.length === 0) return 'No claim is stuck.';
  const table = formatTable(
    [
      { header: 'key', value: (e: StuckEntry) => e.key },
      { header: 'status', value: (e) => e.status },
      { header: 'event', value: (e) => `${e.eventType} ${e.eventId}` },
      {
        header: 'reported',
        value: (e) => (e.stuckAt ? timeWithDistance(Date.parse(e.stuckAt), nowMs) : null),
      },
    ],
    entries,
  );
  const reasons = entries.map((e) => `${e.key}\n  ${e.reason ?? '(no reason recorded)'}`).join('\n');
  const byStatus = Object.values(ClaimStatus)
    .map((status) => [status, entries.filter((e) => e.status === status).length] as const)
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${n} ${status}`)
    .join(', ');
  return `${plural(entries.length, 'claim')} stuck (${byStatus}):\n\n${table}\n\n${reasons}\n\nwebhooks stuck --help says what to do for each status.`;
}

export const stuckCommand: Command = {
  name: NAME,
  synopsis: {
    usage: 'webhooks stuck [--max N]',
    summary: 'list the claims the sweeper could not recover, with why and what to do',
  },
  help: HELP,
  async run(argv, io) {
    const args = parseCommandArgs(argv, { max: { type: 'string' } }, NAME);
    if (args.help) {
      io.print(HELP);
      return 0;
    }
    expectPositionals(args, 0, NAME);
    const max = countOption(args, 'max', MAX, NAME) ?? DEFAULT_MAX;
    const stack = await openStack({ stack: args.stack, env: io.env });
    try {
      const table = stack.output('ClaimsTableName');
      const store = new SweepStore(stack.doc, table);
      const now = io.now();
      const keys = await aws(stack, `Query on ${table} (index unfinished-claims)`, () =>
        store.listStuck(now, max),
      );
      const entries: StuckEntry[] = [];
      for (const { pk } of keys) {
        const claim = await aws(stack, `GetItem on ${table}`, () => store.get(pk));
        if (claim?.stuckAt !== undefined) entries.push(entryOf(claim));
      }
      entries.sort((a, b) => (a.stuckAt ?? '').localeCompare(b.stuckAt ?? ''));
      output(io, args.json, { stack: stack.name, stuck: entries }, () => stuckText(entries, now));
      return entries.length > 0 ? 1 : 0;
    } finally {
      stack.destroy();
    }
  },
};
