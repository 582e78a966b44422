/**
 * `webhooks inspect <provider> <event-id>` / `--key <key>`: everything about one event's claim, so
 * "was I charged twice?" is one command: how many deliveries one claim absorbed, how far processing
 * got, which business rows it wrote (read back from their tables), and where its payload is archived.
 */
import { requireProvider } from '../../lambdas/providers/index.js';
import type { ProviderId } from '../../lambdas/providers/types.js';
import type { ClaimRecord } from '../../lambdas/store/claim.js';
import { archiveUri } from '../archive.js';
import {
  docsPath,
  expectPositionals,
  GLOBAL_OPTIONS_HELP,
  type ParsedArgs,
  parseCommandArgs,
  providerArgument,
  stringOption,
} from '../args.js';
import {
  type ClaimLookup,
  defaultAccountHelp,
  findClaimByKey,
  findClaimsByEvent,
  getBusinessRow,
  parseWrittenRow,
} from '../claims.js';
import { type Command, type CommandIO, output } from '../command.js';
import { ClaimNotFoundError, UsageError } from '../errors.js';
import { formatValue, plural, timeWithDistance } from '../format.js';
import { openStack, type StackContext } from '../stack.js';
import { formatFields, indent } from '../table.js';

const NAME = 'inspect';

const HELP = `usage: webhooks inspect <provider> <event-id> [--account ID]
       webhooks inspect --key <key>

Shows an event's claim: status, deliveries (how many times it was delivered, all absorbed by
one claim), first and last seen, the processor's step marker, the lease, the TTL, the business
rows it wrote (read back from their tables now: every attribute as stored, your application's
sorted by name, then the processor's guard attributes lastEvent* and updatedAt; long values cut,
--json prints each whole item), the archived payload's location, and whether a Shopify redaction
removed the payload (redacted) or waits for the event to be DONE (redaction).

From an event id, the claim is looked up by the event-id rule's key
<provider>:<account>:<event-id> first; if there is none (Stripe payment_intent.* events are
keyed by payment intent and type), the claims table is scanned for the provider and event id.

options
  --key KEY      the idempotency key, as the receiver answered it or as the logs show it
  --account ID   account scope of the event-id key (default: ${defaultAccountHelp()})
${GLOBAL_OPTIONS_HELP}

exit status: 0 found, 1 no claim, 2 usage
runbook: ${docsPath('operations.md')} ("Was I charged twice?")`;

export interface RowView {
  readonly table: string;
  readonly pk: string;
  readonly found: boolean;
  readonly item: Record<string, unknown> | null;
}

export interface ClaimView {
  readonly key: string;
  readonly provider: string;
  readonly account: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly objectId: string | null;
  /** As stored. */
  readonly status: string;
  /**
   * As the receiver and the processor act on it: the stored status while the claim is live, `null`
   * once its TTL has passed (an expired claim is absent to them, whether or not DynamoDB has deleted it).
   */
  readonly effectiveStatus: string | null;
  readonly outcome: string | null;
  readonly deliveries: number;
  readonly processingAttempts: number;
  readonly firstSeenAt: string;
  readonly lastSeenAt: string;
  readonly step: string | null;
  readonly plannedEffects: readonly string[];
  /** Set by a forced replay until the processor plans the event again. */
  readonly replan: boolean;
  /** `business-row` when the processor recovered the progress from the row this event wrote. */
  readonly recoveredFrom: string | null;
  /** Effects not run again because they might act twice (in doubt): check them by hand. */
  readonly unresumedEffects: readonly string[];
  /** Why the last of them was left in doubt (a timeout, a 5xx, an attempt that stopped mid-call). */
  readonly unresumedReason: string | null;
  /** An effect that may act twice being called now (recorded before the call), and since when. */
  readonly effectAttempt: { readonly effect: string; readonly at: string | null } | null;
  /** Times the sweeper sent the event again, and its report when it could not (docs/rules.md, "The sweeper"). */
  readonly sweeps: number;
  readonly stuck: { readonly at: string; readonly reason: string | null } | null;
  readonly lease: {
    readonly owner: string | null;
    readonly token: string | null;
    readonly expiresAt: string | null;
    readonly live: boolean;
  } | null;
  readonly ttl: { readonly expiresAt: number; readonly at: string; readonly expired: boolean };
  readonly lastError: string | null;
  readonly archive: { readonly bucket: string; readonly key: string; readonly uri: string } | null;
  /** A Shopify compliance request removed the archived payload: which request, and when. */
  readonly redacted: { readonly by: string; readonly at: string | null } | null;
  /**
   * A compliance request matched the event before it was DONE: its payload is kept until then, and
   * removed right after. Which request, when it began, and the archive objects it kept.
   */
  readonly redactionPending: {
    readonly by: string;
    readonly since: string | null;
    readonly objects: readonly string[];
  } | null;
  readonly rows: readonly RowView[];
  /** The claim item as stored. */
  readonly item: ClaimRecord;
}

export interface InspectResult {
  readonly stack: string;
  readonly query: InspectQuery;
  readonly lookup: Omit<ClaimLookup, 'claims'>;
  readonly claims: readonly ClaimView[];
}

async function rowsOf(stack: StackContext, claim: ClaimRecord): Promise<RowView[]> {
  const rows: RowView[] = [];
  for (const ref of claim.writtenRows ?? []) {
    const parsed = parseWrittenRow(ref);
    if (!parsed) {
      rows.push({ table: ref, pk: '', found: false, item: null });
      continue;
    }
    const item = await getBusinessRow(stack, parsed.table, parsed.pk);
    rows.push({ table: parsed.table, pk: parsed.pk, found: item !== undefined, item: item ?? null });
  }
  return rows;
}

export async function viewClaim(stack: StackContext, claim: ClaimRecord, nowMs: number): Promise<ClaimView> {
  const bucket = stack.outputs.ArchiveBucketName;
  const leaseAt = typeof claim.leaseExpiresAt === 'number' ? claim.leaseExpiresAt : undefined;
  return {
    key: claim.pk,
    provider: claim.provider,
    account: claim.account,
    eventId: claim.eventId,
    eventType: claim.eventType,
    objectId: claim.objectId ?? null,
    status: claim.status,
    effectiveStatus: claim.expiresAt * 1000 <= nowMs ? null : claim.status,
    outcome: claim.outcome ?? null,
    deliveries: Number(claim.deliveries ?? 0),
    processingAttempts: Number(claim.processingAttempts ?? 0),
    firstSeenAt: claim.firstSeenAt,
    lastSeenAt: claim.lastSeenAt,
    step: claim.lastCompletedStep ?? null,
    plannedEffects: claim.plannedEffects ?? [],
    replan: claim.replan === true,
    recoveredFrom: claim.recoveredFrom ?? null,
    unresumedEffects: claim.unresumedEffects ?? [],
    unresumedReason: claim.unresumedReason ?? null,
    effectAttempt:
      claim.effectAttempt === undefined
        ? null
        : { effect: claim.effectAttempt, at: claim.effectAttemptAt ?? null },
    sweeps: Number(claim.sweeps ?? 0),
    stuck: claim.stuckAt === undefined ? null : { at: claim.stuckAt, reason: claim.stuckReason ?? null },
    lease:
      claim.leaseToken === undefined && leaseAt === undefined
        ? null
        : {
            owner: claim.leaseOwner ?? null,
            token: claim.leaseToken ?? null,
            expiresAt: leaseAt === undefined ? null : new Date(leaseAt).toISOString(),
            live: leaseAt !== undefined && leaseAt > nowMs,
          },
    ttl: {
      expiresAt: claim.expiresAt,
      at: new Date(claim.expiresAt * 1000).toISOString(),
      expired: claim.expiresAt * 1000 <= nowMs,
    },
    lastError: claim.lastError ?? null,
    archive:
      claim.archiveKey === undefined
        ? null
        : {
            bucket: bucket ?? '',
            key: claim.archiveKey,
            uri: archiveUri(bucket ?? '<ArchiveBucketName>', claim.archiveKey),
          },
    redacted: claim.redactedBy === undefined ? null : { by: claim.redactedBy, at: claim.redactedAt ?? null },
    redactionPending:
      claim.redactionPendingBy === undefined
        ? null
        : {
            by: claim.redactionPendingBy,
            since: claim.redactionPendingAt ?? null,
            objects: [...(claim.redactionObjects ?? [])].sort(),
          },
    rows: await rowsOf(stack, claim),
    item: claim,
  };
}

/** One sentence answering "was it claimed once or twice?". */
export function verdict(claims: readonly Pick<ClaimView, 'deliveries' | 'key'>[]): string {
  if (claims.length > 1)
    return `${claims.length} claims match: this event was claimed ${claims.length} times, under different keys (${claims.map((c) => c.key).join(', ')})`;
  const deliveries = claims[0]?.deliveries ?? 0;
  if (deliveries <= 1) return 'claimed once, from 1 delivery';
  return `claimed once: ${deliveries} deliveries of one key, ${plural(deliveries - 1, 'duplicate')} absorbed by the claim`;
}

function describeLookup(lookup: Omit<ClaimLookup, 'claims'>, found: number): string {
  if (lookup.method === 'get') return `lookup: GetItem ${lookup.key}: found`;
  return [
    `lookup: GetItem ${lookup.key}: no claim; scanned the claims table instead (${plural(lookup.scannedCount ?? 0, 'item')} read in ${plural(lookup.pages ?? 0, 'page')}, ${plural(found, 'match', 'matches')})`,
    `  why: ${lookup.reason ?? ''}`,
  ].join('\n');
}

/** The guard attributes the processor writes with each guarded write: `<guard>Id`, `...Created`, `...Rank`, `...Effects`. */
const GUARD_SUFFIXES = ['Id', 'Created', 'Rank', 'Effects'] as const;

/**
 * The guards of a row: each prefix P with `PId`, `PCreated` and `PRank` (the default `lastEvent`, or
 * an applier's own, such as the example's `refundEvent`).
 */
function guardsOf(item: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(item)
    .filter((name) => name.endsWith('Created') && name.length > 'Created'.length)
    .map((name) => name.slice(0, -'Created'.length))
    .filter((guard) => `${guard}Id` in item && `${guard}Rank` in item)
    .sort((a, b) => (a === 'lastEvent' ? -1 : b === 'lastEvent' ? 1 : a.localeCompare(b)));
}

/** Epoch seconds shown with their time: `1796229066 (2026-12-02T16:31:06.000Z)`. */
const withTime = (value: unknown): string | undefined =>
  typeof value === 'number' && value > 1e9 && value < 1e11
    ? `${value} (${new Date(value * 1000).toISOString()})`
    : undefined;

/**
 * One written row, as stored: its table and key, then every attribute of the item (the
 * application's own, sorted by name), then what the processor keeps on it (each guard's
 * `<guard>Id/Created/Rank/Effects`, `updatedAt`). Long values are cut (`--json` prints them whole).
 */
export function rowText(row: RowView, maxValue = 100): string {
  if (!row.pk) return `${row.table}  (not a <table>:<pk> reference: nothing to read)`;
  const head = `${row.table}  ${row.pk}`;
  if (row.item === null) return `${head}  (missing: no such row in the table now)`;
  const item = row.item;
  const guards = guardsOf(item);
  const bookkeeping = new Set<string>(['pk']);
  const processor: Array<[string, string]> = [];
  for (const guard of guards) {
    for (const suffix of GUARD_SUFFIXES) {
      const name = `${guard}${suffix}`;
      if (!(name in item)) continue;
      bookkeeping.add(name);
      processor.push([
        name,
        (suffix === 'Created' ? withTime(item[name]) : undefined) ?? formatValue(item[name], maxValue),
      ]);
    }
  }
  if ('updatedAt' in item && guards.length > 0) {
    bookkeeping.add('updatedAt');
    processor.push(['updatedAt', formatValue(item.updatedAt, maxValue)]);
  }
  const own: Array<[string, string]> = Object.keys(item)
    .filter((name) => !bookkeeping.has(name))
    .sort((a, b) => a.localeCompare(b))
    .map((name) => [name, formatValue(item[name], maxValue)]);
  const fields = [...own, ...processor];
  return fields.length === 0 ? `${head}  (no attributes)` : `${head}\n${indent(formatFields(fields))}`;
}

/** The rows an event wrote, each with its attributes as stored. */
export function rowsText(rows: readonly RowView[]): string {
  if (rows.length === 0) return 'rows: none written';
  return `rows: ${rows.length} written (attributes as stored; --json for whole values)\n${indent(rows.map((row) => rowText(row)).join('\n'))}`;
}

function claimText(view: ClaimView, nowMs: number): string {
  const outcome = view.outcome ? ` (${view.outcome})` : '';
  const lease = view.lease
    ? `${view.lease.owner ?? '?'}${view.lease.expiresAt ? `, until ${timeWithDistance(Date.parse(view.lease.expiresAt), nowMs)}` : ''}${view.lease.live ? '' : ', ended'}`
    : 'none';
  const status =
    view.effectiveStatus === null
      ? `none (expired; stored as ${view.status}${outcome}): the receiver and the processor treat it as absent, and the next delivery or redrive creates it again, keeping its step markers`
      : `${view.status}${outcome}${view.replan ? ', replan (forced replay pending)' : ''}`;
  const fields = formatFields([
    ['status', status],
    ['deliveries', view.deliveries],
    ['event', `${view.provider} ${view.eventType} ${view.eventId}`],
    ['account', view.account],
    ['object', view.objectId],
    ['first seen', view.firstSeenAt],
    ['last seen', view.lastSeenAt],
    [
      'step',
      view.step === null
        ? 'none yet'
        : `${view.step}${view.plannedEffects.length ? ` (planned effects: ${view.plannedEffects.join(', ')})` : ''}`,
    ],
    [
      'recovered',
      view.recoveredFrom === null ? null : `from the ${view.recoveredFrom} (the claim's markers were lost)`,
    ],
    [
      'in doubt',
      view.unresumedEffects.length === 0
        ? null
        : `${view.unresumedEffects.join(', ')}: may have acted, not run again (it might act twice); check by hand${view.unresumedReason ? `. Why: ${view.unresumedReason}` : ''}`,
    ],
    [
      'calling',
      view.effectAttempt === null
        ? null
        : `${view.effectAttempt.effect} since ${view.effectAttempt.at ?? '?'} (no outcome recorded yet: if this attempt stopped, the next one reports it in doubt instead of calling it again)`,
    ],
    ['attempts', view.processingAttempts],
    ['swept', view.sweeps === 0 ? null : `sent again ${plural(view.sweeps, 'time')} by the sweeper`],
    ['stuck', view.stuck === null ? null : `reported ${view.stuck.at}: ${view.stuck.reason ?? ''}`],
    ['lease', lease],
    ['ttl', `${timeWithDistance(view.ttl.expiresAt * 1000, nowMs)}${view.ttl.expired ? ' EXPIRED' : ''}`],
    ['last error', view.lastError],
    ['archive', view.archive?.uri ?? null],
    [
      'redacted',
      view.redacted === null
        ? null
        : `payload removed from the archive ${view.redacted.at ?? ''} by ${view.redacted.by}`.replace(
            '  ',
            ' ',
          ),
    ],
    [
      'redaction',
      view.redactionPending === null
        ? null
        : `pending: the payload is kept until the event is DONE, then removed; requested by ${view.redactionPending.by}${view.redactionPending.since ? ` at ${view.redactionPending.since}` : ''}`,
    ],
  ]);
  const rows = rowsText(view.rows);
  return `claim ${view.key}\n${indent(fields)}\n${indent(rows)}`;
}

export function inspectText(result: InspectResult, nowMs: number): string {
  return [
    describeLookup(result.lookup, result.claims.length),
    `verdict: ${verdict(result.claims)}`,
    ...result.claims.map((claim) => claimText(claim, nowMs)),
  ].join('\n\n');
}

type InspectQuery =
  | { readonly kind: 'key'; readonly key: string }
  | {
      readonly kind: 'event';
      readonly provider: ProviderId;
      readonly eventId: string;
      readonly account?: string;
    };

function query(args: ParsedArgs): InspectQuery {
  const key = stringOption(args, 'key');
  const account = stringOption(args, 'account');
  if (key !== undefined) {
    if (args.positionals.length > 0 || account !== undefined)
      throw new UsageError('--key names the claim by itself: give no provider, event id or --account', NAME);
    if (key.trim() === '') throw new UsageError('--key needs a key', NAME);
    return { kind: 'key', key };
  }
  const provider = providerArgument(args.positionals[0], NAME);
  const eventId = args.positionals[1];
  if (!eventId) throw new UsageError('name the event id (or pass --key)', NAME);
  expectPositionals(args, 2, NAME);
  return { kind: 'event', provider, eventId, ...(account === undefined ? {} : { account }) };
}

/**
 * For providers with composite key rules: a later event id for the same object and type is a
 * duplicate of the first, and only the first event id is on the claim. The key finds it.
 */
function composite(provider: ProviderId): string | undefined {
  const patterns = Object.entries(requireProvider(provider).defaults.keyRules.byEventType ?? {})
    .filter(([, rule]) => rule.kind === 'composite')
    .map(([pattern]) => pattern);
  return patterns.length === 0
    ? undefined
    : `a claim records the first event id of its key only: for ${patterns.join(', ')} events try --key ${provider}:<account>:<object id>:<event type>`;
}

export const inspectCommand: Command = {
  name: NAME,
  synopsis: {
    usage: 'inspect <provider> <event-id> | --key <key>',
    summary: 'was it claimed once or twice? the claim, the rows it wrote, its archive',
  },
  help: HELP,
  async run(argv: readonly string[], io: CommandIO): Promise<number> {
    const args = parseCommandArgs(argv, { key: { type: 'string' }, account: { type: 'string' } }, NAME);
    if (args.help) {
      io.print(HELP);
      return 0;
    }
    const q = query(args);
    const stack = await openStack({ stack: args.stack, env: io.env });
    try {
      const lookup =
        q.kind === 'key'
          ? await findClaimByKey(stack, q.key)
          : await findClaimsByEvent(stack, q.provider, q.eventId, q.account);
      if (lookup.claims.length === 0) {
        const what = q.kind === 'key' ? `key ${q.key}` : `${q.provider} event ${q.eventId}`;
        const how =
          lookup.method === 'scan'
            ? ` (no claim at ${lookup.key}; a scan of ${plural(lookup.scannedCount ?? 0, 'claim')} found none: never received, or its TTL ended)`
            : ' (never received, or its TTL ended)';
        const hint = q.kind === 'event' && composite(q.provider) ? `; ${composite(q.provider)}` : '';
        throw new ClaimNotFoundError(`no claim for ${what}${how}${hint}`);
      }
      const nowMs = io.now();
      const claims: ClaimView[] = [];
      for (const claim of lookup.claims) claims.push(await viewClaim(stack, claim, nowMs));
      const { claims: _claims, ...lookupInfo } = lookup;
      const result: InspectResult = { stack: stack.name, query: q, lookup: lookupInfo, claims };
      output(io, args.json, result, () => inspectText(result, nowMs));
      return 0;
    } finally {
      stack.destroy();
    }
  },
};
