/**
 * `webhooks dlq list` and `webhooks dlq redrive`: what failed processing `maxReceiveCount` times,
 * and sending it back to the event queue once the cause is fixed. The processor takes the FAILED
 * claims of redriven messages again and resumes at their step marker, so nothing is applied twice.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  type ListMessageMoveTasksResultEntry,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import type { ProviderId } from '../../lambdas/providers/types.js';
import { isExpired } from '../../lambdas/store/claim.js';
import {
  countOption,
  expectPositionals,
  GLOBAL_OPTIONS_HELP,
  parseCommandArgs,
  secondsOption,
} from '../args.js';
import { getClaim } from '../claims.js';
import { type Command, type CommandIO, output } from '../command.js';
import { CliError } from '../errors.js';
import {
  type ClaimBaseline,
  claimBaseline,
  DEFAULT_WAIT_SECONDS,
  EXIT_PENDING,
  type FollowReport,
  followClaims,
  followExitCode,
  followText,
  MAX_FOLLOWED,
} from '../follow.js';
import { formatDuration, plural } from '../format.js';
import { progressBar } from '../progress.js';
import { aws, openStack, type StackContext } from '../stack.js';
import { formatTable } from '../table.js';

/** How long listed messages stay hidden while the listing runs; set back to 0 at the end. */
const HOLD_SECONDS = 30;
const DEFAULT_LIST_MAX = 100;
const MAX_MESSAGES = 10_000;
const POLL_MS = 1000;

const LIST_HELP = `usage: webhooks dlq list [--max N]

Lists the dead-letter queue's messages without consuming them: each is received with a
${HOLD_SECONDS} s visibility timeout (so one listing does not see it twice), then made visible
again at once (ChangeMessageVisibility 0). Receiving counts as a receive: a message's receive
count in the DLQ goes up by one per listing. Shows each message's key, provider, event type,
event id, receive count, sent time and its claim's current status. A claim past its TTL shows
as "none (expired)": the processor treats it as absent and creates the claim again when the
message is redriven, keeping the step markers the expired item still holds.

options
  --max N        list at most N messages (default ${DEFAULT_LIST_MAX})
${GLOBAL_OPTIONS_HELP}`;

const REDRIVE_HELP = `usage: webhooks dlq redrive [--max N] [--wait SECONDS]

Moves dead-letter messages back to the event queue, where the processor takes their FAILED
claims again. Fix the cause first (webhooks dlq list; the processor log), or they come back.

Then it follows the moved events' claims (at most ${MAX_FOLLOWED}) for up to --wait seconds and
reports each: resumed (DONE), not fully resumed (state applied, but effects that might act twice
were not run again: they are named, check them by hand), failed again (the processor took its
claim since the move, by the claim's attempt count, and it is FAILED), or still pending. A retry
after a failed attempt waits out the event queue's visibility timeout (181 s deployed): --wait
longer to see it end.

  without --max  an SQS message move task (StartMessageMoveTask, DLQ -> event queue), polled
                 with ListMessageMoveTasks until it ends
  --max N        move N messages one by one: receive from the DLQ, send to the event queue,
                 delete from the DLQ

options
  --max N        move at most N messages, by hand (1 to ${MAX_MESSAGES})
  --wait SECONDS how long to follow the moved events' claims (default ${DEFAULT_WAIT_SECONDS}; 0: do not follow)
${GLOBAL_OPTIONS_HELP}

exit status: 0 every moved event resumed (with --wait 0: the move completed), 1 the move failed
or was cancelled, or an event failed again or was not fully resumed, 2 usage, ${EXIT_PENDING} none failed
but one is still pending (or was not followed) when the wait ends`;

interface EventSummary {
  readonly key: string | null;
  readonly provider: string | null;
  readonly eventType: string | null;
  readonly eventId: string | null;
}

/** The fields of a queue message the listing shows; nulls for a body that is not an event message. */
export function summarizeBody(body: string | undefined): EventSummary {
  try {
    const parsed = JSON.parse(body ?? '') as Record<string, unknown>;
    const text = (name: string) => (typeof parsed[name] === 'string' ? (parsed[name] as string) : null);
    return {
      key: text('key'),
      provider: text('provider'),
      eventType: text('eventType'),
      eventId: text('eventId'),
    };
  } catch {
    return { key: null, provider: null, eventType: null, eventId: null };
  }
}

async function queueAttributes(
  stack: StackContext,
  queueUrl: string,
  names: Array<'QueueArn' | 'ApproximateNumberOfMessages' | 'ApproximateNumberOfMessagesNotVisible'>,
): Promise<Record<string, string>> {
  const result = await aws(stack, `GetQueueAttributes on ${queueUrl}`, () =>
    stack.sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: names })),
  );
  return result.Attributes ?? {};
}

function receive(stack: StackContext, queueUrl: string, max: number, visibility: number) {
  return aws(stack, `ReceiveMessage on ${queueUrl}`, () =>
    stack.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(10, max),
        VisibilityTimeout: visibility,
        WaitTimeSeconds: 1,
        // The emulator reads the older AttributeNames; SQS itself the newer name. Send both.
        AttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    ),
  );
}

export interface DlqEntry extends EventSummary {
  readonly messageId: string;
  readonly receiveCount: number | null;
  readonly sentAt: string | null;
  /**
   * The claim's status as the pipeline acts on it: `null` when there is no claim (or no key), and
   * when its TTL has passed (the processor treats an expired claim as absent).
   */
  readonly claimStatus: string | null;
  /** True when a claim item is still stored but past its TTL (`claimStatus` is then null). */
  readonly claimExpired: boolean;
  readonly claimAttempts: number | null;
  readonly lastError: string | null;
}

interface DlqListing {
  readonly entries: DlqEntry[];
  readonly approximate: number;
  /** Each listed key's claim as it is now: what a redrive that follows them compares with. */
  readonly baselines: Map<string, ClaimBaseline>;
}

async function listDlq(stack: StackContext, max: number, nowMs: number): Promise<DlqListing> {
  const dlq = stack.output('DeadLetterQueueUrl');
  const attributes = await queueAttributes(stack, dlq, ['ApproximateNumberOfMessages']);
  const held = new Map<string, Message>();
  try {
    while (held.size < max) {
      const result = await receive(stack, dlq, max - held.size, HOLD_SECONDS);
      const messages = result.Messages ?? [];
      if (messages.length === 0) break;
      for (const message of messages) if (message.MessageId) held.set(message.MessageId, message);
    }
  } finally {
    await releaseMessages(stack, dlq, [...held.values()]);
  }
  const claims = new Map<string, Awaited<ReturnType<typeof getClaim>>>();
  const entries: DlqEntry[] = [];
  for (const message of held.values()) {
    const summary = summarizeBody(message.Body);
    if (summary.key !== null && !claims.has(summary.key))
      claims.set(summary.key, await getClaim(stack, summary.key));
    const stored = summary.key === null ? undefined : claims.get(summary.key);
    const expired = stored !== undefined && isExpired(stored, nowMs);
    const claim = expired ? undefined : stored;
    const attrs = message.Attributes ?? {};
    const sent = Number(attrs.SentTimestamp);
    entries.push({
      ...summary,
      messageId: message.MessageId ?? '',
      receiveCount:
        attrs.ApproximateReceiveCount === undefined ? null : Number(attrs.ApproximateReceiveCount),
      sentAt: Number.isFinite(sent) && sent > 0 ? new Date(sent).toISOString() : null,
      claimStatus: claim?.status ?? null,
      claimExpired: expired,
      claimAttempts: claim?.processingAttempts === undefined ? null : Number(claim.processingAttempts),
      lastError: claim?.lastError ?? null,
    });
  }
  entries.sort((a, b) => (a.sentAt ?? '').localeCompare(b.sentAt ?? ''));
  const baselines = new Map([...claims].map(([key, stored]) => [key, claimBaseline(stored, nowMs)]));
  return { entries, approximate: Number(attributes.ApproximateNumberOfMessages ?? 0), baselines };
}

/** Makes held messages visible again at once. */
async function releaseMessages(
  stack: StackContext,
  queueUrl: string,
  messages: readonly Message[],
): Promise<void> {
  for (let i = 0; i < messages.length; i += 10) {
    const batch = messages.slice(i, i + 10);
    await aws(stack, `ChangeMessageVisibilityBatch on ${queueUrl}`, () =>
      stack.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((m, index) => ({
            Id: String(index),
            ReceiptHandle: m.ReceiptHandle ?? '',
            VisibilityTimeout: 0,
          })),
        }),
      ),
    );
  }
}

function listText(result: DlqListing, max: number): string {
  if (result.entries.length === 0) return 'the dead-letter queue is empty';
  const table = formatTable(
    [
      { header: 'key', value: (e: DlqEntry) => e.key ?? '(not an event message)' },
      { header: 'provider', value: (e: DlqEntry) => e.provider },
      { header: 'event type', value: (e: DlqEntry) => e.eventType },
      { header: 'event id', value: (e: DlqEntry) => e.eventId },
      { header: 'receives', value: (e: DlqEntry) => e.receiveCount ?? undefined },
      { header: 'sent', value: (e: DlqEntry) => e.sentAt },
      {
        header: 'claim',
        value: (e: DlqEntry) =>
          e.claimStatus ?? (e.claimExpired ? 'none (expired)' : e.key ? 'none' : undefined),
      },
      { header: 'attempts', value: (e: DlqEntry) => e.claimAttempts ?? undefined },
    ],
    result.entries,
  );
  const more =
    result.entries.length >= max && result.approximate > result.entries.length
      ? `\n(${result.entries.length} shown of about ${result.approximate}; --max to see more)`
      : '';
  const errors = [...new Set(result.entries.map((e) => e.lastError).filter((e): e is string => e !== null))];
  const causes = errors.length
    ? `\n\nlast errors on their claims:\n${errors.map((e) => `  ${e}`).join('\n')}`
    : '';
  return `${plural(result.entries.length, 'message')} in the dead-letter queue:\n${table}${more}${causes}`;
}

export const dlqListCommand: Command = {
  name: 'dlq list',
  synopsis: { usage: 'dlq list [--max N]', summary: "the DLQ's messages, left in place, with their claims" },
  help: LIST_HELP,
  async run(argv, io) {
    const args = parseCommandArgs(argv, { max: { type: 'string' } }, 'dlq list');
    if (args.help) {
      io.print(LIST_HELP);
      return 0;
    }
    expectPositionals(args, 0, 'dlq list');
    const max = countOption(args, 'max', MAX_MESSAGES, 'dlq list') ?? DEFAULT_LIST_MAX;
    const stack = await openStack({ stack: args.stack, env: io.env });
    try {
      const result = await listDlq(stack, max, io.now());
      output(
        io,
        args.json,
        { stack: stack.name, approximateNumberOfMessages: result.approximate, messages: result.entries },
        () => listText(result, max),
      );
      return 0;
    } finally {
      stack.destroy();
    }
  },
};

export interface RedriveResult {
  readonly mode: 'move-task' | 'by-hand';
  readonly sourceArn: string;
  readonly destinationArn: string;
  readonly status: string;
  readonly moved: number;
  readonly toMove: number | null;
  readonly failureReason: string | null;
  readonly durationMs: number;
  /** By hand only: what was moved. */
  readonly messages?: ReadonlyArray<{
    readonly key: string | null;
    readonly provider: ProviderId | null;
    readonly messageId: string;
  }>;
  /** What became of the moved events (absent with --wait 0). */
  readonly follow?: FollowReport;
}

async function moveTask(
  stack: StackContext,
  sourceArn: string,
  destinationArn: string,
  approximate: number,
  io: CommandIO,
  json: boolean,
): Promise<RedriveResult> {
  const started = io.now();
  // DestinationArn explicitly: SQS (and the emulator) infer the source queue only for messages they
  // dead-lettered themselves; a message put in the DLQ any other way fails the whole task with
  // CouldNotDetermineMessageSource.
  const task = await aws(stack, 'StartMessageMoveTask', () =>
    stack.sqs.send(new StartMessageMoveTaskCommand({ SourceArn: sourceArn, DestinationArn: destinationArn })),
  );
  const bar = progressBar({ label: 'moving', stream: io.stderr, enabled: !json || io.stderr.isTTY === true });
  bar.update(0, approximate);
  let state: ListMessageMoveTasksResultEntry | undefined;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const listed = await aws(stack, 'ListMessageMoveTasks', () =>
      stack.sqs.send(new ListMessageMoveTasksCommand({ SourceArn: sourceArn, MaxResults: 10 })),
    );
    const results = listed.Results ?? [];
    // Only a running task shows its handle; the most recent task comes first.
    state = results.find((r) => r.TaskHandle === task.TaskHandle) ?? results[0];
    const total = state?.ApproximateNumberOfMessagesToMove;
    bar.update(
      state?.ApproximateNumberOfMessagesMoved ?? 0,
      total === undefined ? undefined : Math.max(total, 0),
    );
    if (state?.Status !== 'RUNNING' && state?.Status !== 'CANCELLING') break;
  }
  bar.finish();
  return {
    mode: 'move-task',
    sourceArn,
    destinationArn,
    status: state?.Status ?? 'UNKNOWN',
    moved: Number(state?.ApproximateNumberOfMessagesMoved ?? 0),
    toMove:
      state?.ApproximateNumberOfMessagesToMove === undefined
        ? null
        : Number(state.ApproximateNumberOfMessagesToMove),
    failureReason: state?.FailureReason ?? null,
    durationMs: io.now() - started,
  };
}

async function moveByHand(
  stack: StackContext,
  source: { url: string; arn: string },
  destination: { url: string; arn: string },
  max: number,
  approximate: number,
  io: CommandIO,
  json: boolean,
  /** When following: each moved key's claim, read just before its message is sent. */
  baselines: Map<string, ClaimBaseline> | undefined,
): Promise<RedriveResult> {
  const started = io.now();
  const bar = progressBar({ label: 'moving', stream: io.stderr, enabled: !json || io.stderr.isTTY === true });
  const total = Math.min(max, Math.max(approximate, 0));
  bar.update(0, total);
  const moved: Array<{ key: string | null; provider: ProviderId | null; messageId: string }> = [];
  while (moved.length < max) {
    const result = await receive(stack, source.url, max - moved.length, HOLD_SECONDS);
    const messages = result.Messages ?? [];
    if (messages.length === 0) break;
    for (const message of messages) {
      const summary = summarizeBody(message.Body);
      if (baselines && summary.key !== null && !baselines.has(summary.key))
        baselines.set(summary.key, claimBaseline(await getClaim(stack, summary.key), io.now()));
      // Send first, then delete: a crash in between leaves a copy in both queues, which the
      // processor's claim absorbs; the other order could lose the event.
      const sent = await aws(stack, `SendMessage to ${destination.url}`, () =>
        stack.sqs.send(
          new SendMessageCommand({
            QueueUrl: destination.url,
            MessageBody: message.Body ?? '',
            ...(message.MessageAttributes ? { MessageAttributes: message.MessageAttributes } : {}),
          }),
        ),
      );
      await aws(stack, `DeleteMessage on ${source.url}`, () =>
        stack.sqs.send(
          new DeleteMessageCommand({ QueueUrl: source.url, ReceiptHandle: message.ReceiptHandle ?? '' }),
        ),
      );
      moved.push({
        key: summary.key,
        provider: summary.provider as ProviderId | null,
        messageId: sent.MessageId ?? '',
      });
      bar.update(moved.length, Math.max(total, moved.length));
    }
  }
  bar.finish();
  return {
    mode: 'by-hand',
    sourceArn: source.arn,
    destinationArn: destination.arn,
    status: 'COMPLETED',
    moved: moved.length,
    toMove: total,
    failureReason: null,
    durationMs: io.now() - started,
    messages: moved,
  };
}

function redriveText(result: RedriveResult): string {
  const moved = redriveMoveText(result);
  return result.follow ? `${moved}\n${followText(result.follow)}` : moved;
}

function redriveMoveText(result: RedriveResult): string {
  const how =
    result.mode === 'move-task'
      ? 'message move task'
      : 'by hand (receive, send to the event queue, delete from the DLQ)';
  const lines = [
    `redrive ${how}`,
    `  from ${result.sourceArn}`,
    `  to   ${result.destinationArn}`,
    `${result.status}: moved ${result.moved}${result.toMove === null ? '' : ` of ${result.toMove}`} ${(result.toMove ?? result.moved) === 1 ? 'message' : 'messages'} in ${formatDuration(result.durationMs)}${result.failureReason ? ` (${result.failureReason})` : ''}`,
  ];
  if (result.messages?.length)
    lines.push(...result.messages.map((m) => `  ${m.key ?? '(not an event message)'}`));
  if (result.moved > 0 && result.follow === undefined)
    lines.push(
      'Not followed (--wait 0): the processor takes their FAILED claims again; follow one with webhooks inspect --key <key>.',
    );
  return lines.join('\n');
}

/**
 * Follows what was moved. `unfollowed` counts the moved messages it cannot follow (a move task's
 * beyond those listed, messages without a key): not known to be finished, they count as such.
 */
async function followMoved(
  stack: StackContext,
  baselines: ReadonlyMap<string, ClaimBaseline>,
  unfollowed: number,
  waitSeconds: number,
  io: CommandIO,
): Promise<FollowReport> {
  const report = await followClaims(stack, baselines, {
    waitMs: waitSeconds * 1000,
    now: () => io.now(),
  });
  return { ...report, notFollowed: report.notFollowed + unfollowed };
}

export const dlqRedriveCommand: Command = {
  name: 'dlq redrive',
  synopsis: { usage: 'dlq redrive [--max N]', summary: 'move DLQ messages back to the event queue' },
  help: REDRIVE_HELP,
  async run(argv, io) {
    const args = parseCommandArgs(argv, { max: { type: 'string' }, wait: { type: 'string' } }, 'dlq redrive');
    if (args.help) {
      io.print(REDRIVE_HELP);
      return 0;
    }
    expectPositionals(args, 0, 'dlq redrive');
    const max = countOption(args, 'max', MAX_MESSAGES, 'dlq redrive');
    const waitSeconds = secondsOption(args, 'wait', 3600, DEFAULT_WAIT_SECONDS, 'dlq redrive');
    const stack = await openStack({ stack: args.stack, env: io.env });
    try {
      const dlqUrl = stack.output('DeadLetterQueueUrl');
      const queueUrl = stack.output('EventQueueUrl');
      const dlq = await queueAttributes(stack, dlqUrl, ['QueueArn', 'ApproximateNumberOfMessages']);
      const queue = await queueAttributes(stack, queueUrl, ['QueueArn']);
      const sourceArn = dlq.QueueArn ?? '';
      const destinationArn = queue.QueueArn ?? '';
      const approximate = Number(dlq.ApproximateNumberOfMessages ?? 0);
      // What to follow, and each claim before its message goes back. A move task does not say what
      // it moved: the DLQ is listed first; by hand, each claim is read before its message is sent.
      const listing =
        waitSeconds > 0 && max === undefined ? await listDlq(stack, MAX_FOLLOWED, io.now()) : undefined;
      const baselines =
        waitSeconds === 0 ? undefined : (listing?.baselines ?? new Map<string, ClaimBaseline>());
      const moved =
        max === undefined
          ? await moveTask(stack, sourceArn, destinationArn, approximate, io, args.json)
          : await moveByHand(
              stack,
              { url: dlqUrl, arn: sourceArn },
              { url: queueUrl, arn: destinationArn },
              max,
              approximate,
              io,
              args.json,
              baselines,
            );
      const keyless = (listing?.entries ?? moved.messages ?? []).filter((m) => m.key === null).length;
      const unlisted = listing ? Math.max(moved.moved - listing.entries.length, 0) : 0;
      const result: RedriveResult =
        baselines !== undefined && moved.moved > 0
          ? {
              ...moved,
              follow: await followMoved(stack, baselines, keyless + unlisted, waitSeconds, io),
            }
          : moved;
      output(io, args.json, { stack: stack.name, ...result }, () => redriveText(result));
      if (result.status === 'FAILED')
        throw new CliError(`the message move task failed: ${result.failureReason ?? 'no reason given'}`);
      return result.status === 'COMPLETED' ? followExitCode(result.follow) : 1;
    } finally {
      stack.destroy();
    }
  },
};
