/**
 * `webhooks replay`: sends archived events back through the processor, as the queue message the
 * receiver first sent (the archived object without `archivedAt`). Events whose claim is DONE are
 * skipped unless `--force`, which first reopens the claim (DONE -> ENQUEUED with `replan`, step
 * markers kept) so the processor plans the event again: it re-writes state lost from a business
 * table (absolute writes, guarded by the order of the row's last writer) and runs no effect its
 * markers say is done (docs/operations.md). A claim past its TTL is treated as absent, as the
 * processor treats it. Then the sent events' claims are followed and what could not be resumed is
 * reported (./follow.ts).
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { PROVIDER_IDS, type ProviderId } from '../../lambdas/providers/types.js';
import { ClaimStatus, isExpired } from '../../lambdas/store/claim.js';
import type { ArchivedEvent } from '../../lambdas/store/payload-archive.js';
import {
  archiveUri,
  listArchiveKeys,
  queueMessageOf,
  rangePrefixes,
  readArchivedEvent,
  readArchivedEvents,
  receivedInRange,
  utcDays,
} from '../archive.js';
import {
  booleanOption,
  expectPositionals,
  GLOBAL_OPTIONS_HELP,
  instantOption,
  type ParsedArgs,
  parseCommandArgs,
  providerArgument,
  secondsOption,
  stringOption,
} from '../args.js';
import {
  defaultAccountHelp,
  findClaimByKey,
  findClaimsByEvent,
  getClaim,
  reopenDoneClaim,
} from '../claims.js';
import { type Command, type CommandIO, output } from '../command.js';
import { ClaimNotFoundError, CliError, UsageError } from '../errors.js';
import {
  type ClaimBaseline,
  claimBaseline,
  DEFAULT_WAIT_SECONDS,
  EXIT_PENDING,
  type FollowReport,
  followClaims,
  followExitCode,
  followText,
} from '../follow.js';
import { plural } from '../format.js';
import { progressBar } from '../progress.js';
import { aws, openStack, type StackContext } from '../stack.js';
import { formatTable } from '../table.js';

const NAME = 'replay';
/** A longer range is almost certainly a typo; it would list 5 prefixes a day. */
const MAX_RANGE_DAYS = 400;

const HELP = `usage: webhooks replay <provider> <event-id> [--account ID] [--force]
       webhooks replay --key <key> [--force]
       webhooks replay <provider|all> --from <ISO> --to <ISO> [--force]

Re-drives archived events through the processor: reads the archived message from the archive
bucket and sends it (without archivedAt) to the event queue.

  - claim DONE: skipped, unless --force
  - claim FAILED, RECEIVED, ENQUEUED, PROCESSING, or none (expired): sent; the processor takes a
    FAILED claim again, creates a missing one, and absorbs a copy of one still in flight

A claim past its TTL counts as none, as the processor counts it: the event is sent and the
processor creates the claim again, keeping the step markers the expired item still holds.

--force reopens a DONE claim first (conditional UpdateItem: status DONE -> ENQUEUED, replan set,
step markers kept), so the processor plans the event again: it re-writes rows this event is
still the newest writer of (say, after a table restore) and runs no effect its markers say is
done.

Then the claims of the events sent are followed for up to --wait seconds and each is reported:
resumed (DONE), not fully resumed (effects that might act twice were not run again: they are
named, check them by hand), failed again (the processor took its claim since the send, by the
claim's attempt count, and it is FAILED), or still pending.

A time range lists events/<provider>/<day>/ for every UTC day from --from to --to (for one
provider, or all) and replays the events whose receivedAt is in [--from, --to).

options
  --key KEY      the claim's idempotency key
  --account ID   account scope of the event-id key (default: ${defaultAccountHelp()})
  --from ISO     start of a time range, inclusive (2026-12-02 or 2026-12-02T10:00:00Z; UTC)
  --to ISO       end of the time range, exclusive
  --force        replay events whose claim is DONE too (see above)
  --wait SECONDS how long to follow the sent events' claims (default ${DEFAULT_WAIT_SECONDS}; 0: do not follow)
${GLOBAL_OPTIONS_HELP}

exit status: 0 every event sent resumed, or skipped (with --wait 0: sent or skipped), 1 a claim
or archive object was missing, or an event failed again or was not fully resumed, 2 usage,
${EXIT_PENDING} none failed but one is still pending (or was not followed) when the wait ends`;

export type ReplayAction = 'sent' | 'forced' | 'skipped' | 'failed';

export interface ReplayEntry {
  readonly key: string;
  readonly provider: string | null;
  readonly eventId: string | null;
  readonly eventType: string | null;
  readonly receivedAt: string | null;
  readonly archive: string | null;
  /** The claim's status before the replay; null when there was none. */
  readonly claimStatus: string | null;
  readonly action: ReplayAction;
  readonly reason: string;
  readonly messageId: string | null;
}

/** What a time range listed: day prefixes, archived objects, and those received in the range. */
interface Scanned {
  readonly prefixes: number;
  readonly objects: number;
  readonly inRange: number;
}

interface Candidate {
  readonly key: string;
  readonly archiveKey: string | undefined;
  /** Already read (time range). */
  readonly archived?: ArchivedEvent;
}

type ReplayQuery =
  | {
      readonly kind: 'event';
      readonly provider: ProviderId;
      readonly eventId: string;
      readonly account?: string;
    }
  | { readonly kind: 'key'; readonly key: string }
  | {
      readonly kind: 'range';
      readonly providers: readonly ProviderId[];
      readonly from: Date;
      readonly to: Date;
    };

export function replayQuery(args: ParsedArgs): ReplayQuery {
  const key = stringOption(args, 'key');
  const account = stringOption(args, 'account');
  const from = instantOption(args, 'from', NAME);
  const to = instantOption(args, 'to', NAME);
  if (from !== undefined || to !== undefined) {
    if (from === undefined || to === undefined)
      throw new UsageError('a time range needs both --from and --to', NAME);
    if (key !== undefined || account !== undefined)
      throw new UsageError('a time range takes no --key or --account', NAME);
    if (from.getTime() >= to.getTime()) throw new UsageError('--from must be before --to', NAME);
    if (utcDays(from, to).length > MAX_RANGE_DAYS)
      throw new UsageError(`a time range spans at most ${MAX_RANGE_DAYS} days`, NAME);
    const which = args.positionals[0];
    if (which === undefined) throw new UsageError('name a provider for the time range, or all', NAME);
    expectPositionals(args, 1, NAME);
    return {
      kind: 'range',
      providers: which === 'all' ? PROVIDER_IDS : [providerArgument(which, NAME)],
      from,
      to,
    };
  }
  if (key !== undefined) {
    if (args.positionals.length > 0 || account !== undefined)
      throw new UsageError('--key names the claim by itself: give no provider, event id or --account', NAME);
    return { kind: 'key', key };
  }
  const provider = providerArgument(args.positionals[0], NAME);
  const eventId = args.positionals[1];
  if (!eventId) throw new UsageError('name the event id (or pass --key, or --from and --to)', NAME);
  expectPositionals(args, 2, NAME);
  return { kind: 'event', provider, eventId, ...(account === undefined ? {} : { account }) };
}

async function candidatesFor(
  stack: StackContext,
  query: ReplayQuery,
  io: CommandIO,
  json: boolean,
): Promise<{
  candidates: Candidate[];
  unreadable?: ReplayEntry[];
  scanned?: Scanned;
}> {
  if (query.kind !== 'range') {
    const lookup =
      query.kind === 'key'
        ? await findClaimByKey(stack, query.key)
        : await findClaimsByEvent(stack, query.provider, query.eventId, query.account);
    if (lookup.claims.length === 0) {
      const what = query.kind === 'key' ? `key ${query.key}` : `${query.provider} event ${query.eventId}`;
      throw new ClaimNotFoundError(
        `no claim for ${what}: nothing says where its archive object is (replay a time range with --from and --to)`,
      );
    }
    return { candidates: lookup.claims.map((claim) => ({ key: claim.pk, archiveKey: claim.archiveKey })) };
  }
  const prefixes = rangePrefixes(query.providers, query.from, query.to);
  const keys: string[] = [];
  for (const prefix of prefixes) keys.push(...(await listArchiveKeys(stack, prefix)));
  const bar = progressBar({
    label: 'reading',
    stream: io.stderr,
    enabled: !json || io.stderr.isTTY === true,
  });
  bar.update(0, keys.length);
  const candidates: Candidate[] = [];
  const unreadable: ReplayEntry[] = [];
  const seen = new Set<string>();
  for (const [index, objectKey] of keys.entries()) {
    try {
      // An event's own object holds it alone; a batch object holds up to a batch of events. An event
      // found in two objects (a redelivered message archived twice) is replayed once.
      for (const archived of await readArchivedEvents(stack, objectKey)) {
        if (!receivedInRange(archived, query.from, query.to) || seen.has(archived.key)) continue;
        seen.add(archived.key);
        candidates.push({ key: archived.key, archiveKey: objectKey, archived });
      }
    } catch (error) {
      // One bad object (not JSON, expired between list and get) must not stop the others.
      if (!(error instanceof CliError)) throw error;
      unreadable.push({
        key: objectKey,
        provider: null,
        eventId: null,
        eventType: null,
        receivedAt: null,
        archive: archiveUri(stack.outputs.ArchiveBucketName ?? '<ArchiveBucketName>', objectKey),
        claimStatus: null,
        action: 'failed',
        reason: error.message,
        messageId: null,
      });
    }
    bar.update(index + 1);
  }
  bar.finish();
  return {
    candidates,
    unreadable,
    scanned: { prefixes: prefixes.length, objects: keys.length, inRange: candidates.length },
  };
}

async function replayOne(
  stack: StackContext,
  candidate: Candidate,
  force: boolean,
  nowMs: number,
  /** Each sent key's claim as it was before the send (a key's first), for the follow. */
  baselines: Map<string, ClaimBaseline>,
): Promise<ReplayEntry> {
  const bucket = stack.outputs.ArchiveBucketName ?? '<ArchiveBucketName>';
  const stored = await getClaim(stack, candidate.key);
  // Past its TTL, a claim is absent to the processor and the receiver: so it is here.
  const expired = stored !== undefined && isExpired(stored, nowMs);
  const claim = expired ? undefined : stored;
  const base = {
    key: candidate.key,
    provider: candidate.archived?.provider ?? claim?.provider ?? null,
    eventId: candidate.archived?.eventId ?? claim?.eventId ?? null,
    eventType: candidate.archived?.eventType ?? claim?.eventType ?? null,
    receivedAt: candidate.archived?.receivedAt ?? null,
    archive: candidate.archiveKey === undefined ? null : archiveUri(bucket, candidate.archiveKey),
    claimStatus: claim?.status ?? null,
    messageId: null,
  };
  if (candidate.archiveKey === undefined)
    return {
      ...base,
      action: 'failed',
      reason: 'the claim records no archive object (archiving off, or the processor never took the event)',
    };
  if (claim?.status === ClaimStatus.Done && !force)
    return { ...base, action: 'skipped', reason: 'claim is DONE (pass --force to replay it anyway)' };

  const objectKey = candidate.archiveKey;
  let archived: ArchivedEvent;
  try {
    archived = candidate.archived ?? (await readArchivedEvent(stack, objectKey, candidate.key));
  } catch (error) {
    if (error instanceof CliError) return { ...base, action: 'failed', reason: error.message };
    throw error;
  }
  const withEvent = {
    ...base,
    provider: archived.provider,
    eventId: archived.eventId,
    eventType: archived.eventType,
    receivedAt: archived.receivedAt,
  };
  let action: ReplayAction = 'sent';
  let reason =
    claim === undefined
      ? expired
        ? `claim expired (stored as ${stored.status}): the processor creates it again, keeping its step markers`
        : 'no claim (expired): the processor creates one'
      : `claim was ${claim.status}`;
  if (claim?.status === ClaimStatus.Done) {
    if (!(await reopenDoneClaim(stack, candidate.key)))
      return { ...withEvent, action: 'skipped', reason: 'the claim changed while replaying: run again' };
    action = 'forced';
    reason =
      'claim reopened (DONE -> ENQUEUED, replan); its step markers keep done effects from running again';
  }
  if (!baselines.has(candidate.key)) baselines.set(candidate.key, claimBaseline(stored, nowMs));
  const queueUrl = stack.output('EventQueueUrl');
  const sent = await aws(stack, `SendMessage to ${queueUrl}`, () =>
    stack.sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: JSON.stringify(queueMessageOf(archived, objectKey)),
      }),
    ),
  );
  return { ...withEvent, action, reason, messageId: sent.MessageId ?? null };
}

export function summarize(entries: readonly Pick<ReplayEntry, 'action'>[]): Record<ReplayAction, number> {
  const counts: Record<ReplayAction, number> = { sent: 0, forced: 0, skipped: 0, failed: 0 };
  for (const entry of entries) counts[entry.action] += 1;
  return counts;
}

function replayText(
  entries: readonly ReplayEntry[],
  scanned: Scanned | undefined,
  follow: FollowReport | undefined,
): string {
  const text = replayTableText(entries, scanned);
  return follow ? `${text}\n${followText(follow)}` : text;
}

function replayTableText(entries: readonly ReplayEntry[], scanned: Scanned | undefined): string {
  const counts = summarize(entries);
  const head = scanned
    ? `listed ${plural(scanned.prefixes, 'day prefix', 'day prefixes')}: ${plural(scanned.objects, 'archive object')}, ${plural(scanned.inRange, 'event')} in range\n`
    : '';
  if (entries.length === 0) return `${head}nothing to replay`;
  const table = formatTable(
    [
      { header: 'key', value: (e: ReplayEntry) => e.key },
      { header: 'event id', value: (e: ReplayEntry) => e.eventId },
      { header: 'claim', value: (e: ReplayEntry) => e.claimStatus ?? 'none' },
      { header: 'action', value: (e: ReplayEntry) => e.action },
      { header: 'why', value: (e: ReplayEntry) => e.reason },
    ],
    entries,
  );
  return `${head}${table}\n${counts.sent} sent, ${counts.forced} forced, ${counts.skipped} skipped, ${counts.failed} failed`;
}

export const replayCommand: Command = {
  name: NAME,
  synopsis: {
    usage: 'replay <provider> <event-id> | --key <key> | <provider|all> --from <ISO> --to <ISO> [--force]',
    summary: 're-drive archived events through the processor (DONE ones skipped unless --force)',
  },
  help: HELP,
  async run(argv, io) {
    const args = parseCommandArgs(
      argv,
      {
        key: { type: 'string' },
        account: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        force: { type: 'boolean' },
        wait: { type: 'string' },
      },
      NAME,
    );
    if (args.help) {
      io.print(HELP);
      return 0;
    }
    const query = replayQuery(args);
    const force = booleanOption(args, 'force');
    const waitSeconds = secondsOption(args, 'wait', 3600, DEFAULT_WAIT_SECONDS, NAME);
    const stack = await openStack({ stack: args.stack, env: io.env });
    try {
      const { candidates, unreadable, scanned } = await candidatesFor(stack, query, io, args.json);
      const entries: ReplayEntry[] = [...(unreadable ?? [])];
      const bar = progressBar({
        label: 'replaying',
        stream: io.stderr,
        enabled: query.kind === 'range' && (!args.json || io.stderr.isTTY === true),
      });
      bar.update(0, candidates.length);
      const baselines = new Map<string, ClaimBaseline>();
      for (const [index, candidate] of candidates.entries()) {
        entries.push(await replayOne(stack, candidate, force, io.now(), baselines));
        bar.update(index + 1);
      }
      bar.finish();
      const summary = summarize(entries);
      const follow =
        waitSeconds > 0 && baselines.size > 0
          ? await followClaims(stack, baselines, { waitMs: waitSeconds * 1000, now: () => io.now() })
          : undefined;
      output(
        io,
        args.json,
        {
          stack: stack.name,
          query:
            query.kind === 'range'
              ? { ...query, from: query.from.toISOString(), to: query.to.toISOString() }
              : query,
          force,
          ...(scanned ? { scanned } : {}),
          results: entries,
          summary,
          ...(follow ? { follow } : {}),
        },
        () => replayText(entries, scanned, follow),
      );
      return summary.failed > 0 ? 1 : followExitCode(follow);
    } finally {
      stack.destroy();
    }
  },
};
