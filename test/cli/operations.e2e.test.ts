/**
 * The operator CLI end to end: `npm start` in a child process (its own port, outputs file and
 * cdk.out), events posted over HTTP signed with the official `stripe` library, and every command run
 * as an operator runs it, `node cli/webhooks.mjs ... --json`, asserting on its JSON. State is
 * cross-checked through the endpoints in the outputs file.
 *
 * Two poison events fail `processor.afterClaim` three times each (MAX_RECEIVE_COUNT=3), land in the
 * DLQ, and then their faults are used up: that is the "fix" before the redrive.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventIn, parseArchive } from '../../lambdas/store/payload-archive.js';
import type { EffectEntry } from '../../local/effects-sink.js';
import { LOCAL_CREDENTIALS } from '../../local/emulators.js';
import { sampleDelivery } from '../../local/samples.js';
import { stripePaymentIntentEvent } from '../helpers/events.js';
import { type LocalStackProcess, REPO_ROOT, startLocalStackProcess } from '../helpers/local-stack-process.js';
import { githubHeaders, stripeHeaders, TEST_SECRETS } from '../helpers/signing.js';

const startedAt = new Date();

let stack: LocalStackProcess;
let env: NodeJS.ProcessEnv;
let outputs: Readonly<Record<string, string>>;
let doc: DynamoDBDocumentClient;
let sqs: SQSClient;
let s3: S3Client;

const waitFor = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs?: number) =>
  stack.waitFor(what, probe, timeoutMs);

interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const webhooks = (...args: string[]): Promise<CliRun> => webhooksWith({}, ...args);

async function webhooksWith(extraEnv: Record<string, string>, ...args: string[]): Promise<CliRun> {
  try {
    const { stdout, stderr } = await promisify(execFile)('node', ['cli/webhooks.mjs', ...args], {
      cwd: REPO_ROOT,
      env: { ...env, ...extraEnv },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Runs a command with --json, expects exit 0 and returns the parsed output. */
async function json<T = Record<string, unknown>>(...args: string[]): Promise<T> {
  const run = await webhooks(...args, '--json');
  if (run.code !== 0)
    throw new Error(
      `webhooks ${args.join(' ')} exited ${run.code}: ${run.stderr}\n--- stack log ---\n${stack.log().slice(-3000)}`,
    );
  return JSON.parse(run.stdout) as T;
}

const effects = async (): Promise<EffectEntry[]> =>
  (await (await fetch(outputs.LocalEffectsUrl ?? '')).json()) as EffectEntry[];
const effectsFor = async (intentId: string) =>
  (await effects())
    .filter((e) => JSON.stringify(e.body).includes(intentId))
    .map((e) => [e.service, e.replay]);
const get = async (table: string | undefined, pk: string) =>
  (await doc.send(new GetCommand({ TableName: table, Key: { pk }, ConsistentRead: true }))).Item;
const claim = (key: string) => get(outputs.ClaimsTableName, key);
const payment = (intentId: string) => get(outputs.PaymentsTableName, `stripe:platform:${intentId}`);
const claimIn = (key: string, status: string, timeoutMs = 20_000) =>
  waitFor(
    `claim ${key} ${status}`,
    async () => {
      const item = await claim(key);
      return item?.status === status ? item : undefined;
    },
    timeoutMs,
  );

interface Posted {
  readonly intentId: string;
  readonly eventId: string;
  readonly key: string;
  readonly body: string;
  readonly headers: Record<string, string>;
}
const posted = new Map<string, Posted>();

function delivery(name: string): Posted {
  const intentId = `pi_${name}`;
  const eventId = `evt_${name}`;
  const body = JSON.stringify(stripePaymentIntentEvent({ intentId, eventId }));
  const event: Posted = {
    intentId,
    eventId,
    key: `stripe:platform:${intentId}:payment_intent.succeeded`,
    body,
    headers: stripeHeaders(body),
  };
  posted.set(name, event);
  return event;
}

const post = (event: Posted) =>
  fetch(outputs.StripeWebhookUrl ?? '', { method: 'POST', headers: event.headers, body: event.body });

beforeAll(async () => {
  stack = await startLocalStackProcess(
    {
      // Short for the test; the leases move with it (6 s, the functions' timeouts to 5 s), so an
      // attempt can never outlive its lease however slow the machine (docs/rules.md, "Leases and timeouts").
      LOCAL_VISIBILITY_TIMEOUT_SECONDS: '6',
      MAX_RECEIVE_COUNT: '3',
      // Three failures each: the third one marks the claim FAILED and SQS dead-letters the message;
      // after that the fault is used up, as if the handler bug had been fixed.
      // The ledger "down" for two more events on all three attempts: their state commits, their
      // claims end FAILED at `state`, their messages in the DLQ.
      FAULT_POINTS: [
        'processor.afterClaim@poisoncli:3',
        'processor.afterClaim@poisonmax:3',
        'processor.beforeLedger@lateredrive:3',
        'processor.beforeLedger@lostclaim:3',
        // Six failures: three to the DLQ, three more after the first redrive (the cause not fixed).
        'processor.afterClaim@failagain:6',
        // Seven: three to the DLQ, three more after a redrive, and the first attempt after the
        // next one (its retry succeeds).
        'processor.afterClaim@slowredrive:7',
      ].join(','),
    },
    'webhooks-cli-e2e',
  );
  env = stack.env;
  outputs = stack.outputs;
  const config = { region: 'us-east-1', credentials: LOCAL_CREDENTIALS };
  doc = DynamoDBDocumentClient.from(
    new DynamoDBClient({ ...config, endpoint: outputs.LocalDynamoDbEndpoint }),
  );
  sqs = new SQSClient({ ...config, endpoint: outputs.LocalSqsEndpoint });
  s3 = new S3Client({ ...config, endpoint: outputs.LocalS3Endpoint, forcePathStyle: true });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  doc?.destroy();
  sqs?.destroy();
  s3?.destroy();
}, 30_000);

/** The environment of an operator whose clock is 30 s ahead of the stack's (a laptop running fast). */
const CLOCK_AHEAD = {
  NODE_OPTIONS: `--import ${JSON.stringify(join(REPO_ROOT, 'test/helpers/clock-ahead.mjs'))}`,
  CLOCK_AHEAD_MS: '30000',
};

/** Posts an event that fails processing MAX_RECEIVE_COUNT times and waits for its message in the DLQ. */
async function postToDlq(event: Posted): Promise<void> {
  expect((await post(event)).status).toBe(200);
  await claimIn(event.key, 'FAILED', 40_000);
  await inDlq(event);
}

const inDlq = (event: Posted) =>
  waitFor(
    `${event.key} in the DLQ`,
    async () =>
      (await json<DlqList>('dlq', 'list')).messages.some((m) => m.key === event.key) ? true : undefined,
    40_000,
  );

interface RedriveReport {
  readonly status: string;
  readonly follow: {
    readonly results: Array<Record<string, unknown>>;
    readonly summary: Record<string, number>;
  };
}

interface DlqList {
  messages: Array<{
    key: string;
    provider: string;
    eventType: string;
    eventId: string;
    receiveCount: number;
    sentAt: string;
    claimStatus: string;
  }>;
}

describe('webhooks CLI on the local stack', () => {
  it('inspect: a delivery posted twice is one DONE claim with deliveries = 2, its Payments row and its archive', async () => {
    const event = delivery('cli_dup');
    const first = await post(event);
    const second = await post(event);
    expect([first.status, second.status]).toEqual([200, 200]);
    await claimIn(event.key, 'DONE');

    const byEvent = await json<{
      lookup: { method: string; reason: string };
      claims: Array<
        Record<string, unknown> & { rows: Array<Record<string, unknown>>; archive: { uri: string } }
      >;
    }>('inspect', 'stripe', event.eventId);
    // payment_intent.* is keyed by intent and type: the event-id key misses, the scan finds it.
    expect(byEvent.lookup.method).toBe('scan');
    expect(byEvent.lookup.reason).toContain('composite');
    expect(byEvent.claims).toHaveLength(1);
    const [view] = byEvent.claims;
    expect(view).toMatchObject({
      key: event.key,
      status: 'DONE',
      outcome: 'applied',
      deliveries: 2,
      processingAttempts: 1,
      step: 'receipt',
      plannedEffects: ['ledger', 'receipt'],
      lease: null,
      ttl: { expired: false },
    });
    expect(view?.rows).toEqual([
      expect.objectContaining({
        table: 'payments',
        pk: `stripe:platform:${event.intentId}`,
        found: true,
        item: expect.objectContaining({ status: 'succeeded', amount: 2000, lastEventId: event.eventId }),
      }),
    ]);
    const day = new Date().toISOString().slice(0, 10);
    // The processor's object for the batch the event came in (docs/processor.md, step 3).
    expect(view?.archive.uri).toMatch(
      new RegExp(`^s3://${outputs.ArchiveBucketName}/events/stripe/${day}/batch-[0-9TZ]+-[0-9a-f-]+\\.json$`),
    );

    const byKey = await json<{ lookup: { method: string }; claims: unknown[] }>(
      'inspect',
      '--key',
      event.key,
    );
    expect(byKey.lookup.method).toBe('get');
    expect(byKey.claims).toHaveLength(1);

    const text = await webhooks('inspect', 'stripe', event.eventId);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('scanned the claims table');
    expect(text.stdout).toContain(
      'verdict: claimed once: 2 deliveries of one key, 1 duplicate absorbed by the claim',
    );
    expect(text.stdout).toMatch(/deliveries +2/);
    // The row as stored: the application's attributes by name, then the processor's guard.
    expect(text.stdout).toMatch(/\n {4}payments {2}stripe:platform:pi_cli_dup\n {6}account +platform\n/);
    expect(text.stdout).toMatch(/\n {6}amount +2000\n/);
    expect(text.stdout).toMatch(
      /\n {6}status +succeeded\n {6}lastEventId +evt_cli_dup\n {6}lastEventCreated +\d+ \(\d{4}-/,
    );

    const missing = await webhooks('inspect', 'stripe', 'evt_cli_never', '--json');
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/^webhooks: no claim for stripe event evt_cli_never/);
    // Five CLI runs and the functions' first start: past the 20 s default on a loaded machine.
  }, 60_000);

  it('dlq list shows the poison events with FAILED claims, without consuming them; redrive completes them once', async () => {
    // Posted while nothing else runs: with a 1 s visibility timeout, an attempt slowed down by other
    // work lets SQS hand the message out again mid-attempt, and a receive spent on "busy" would
    // leave the claim short of FAILED when the message is dead-lettered.
    const poison = delivery('poisoncli');
    const poisonMax = delivery('poisonmax');
    expect((await post(poison)).status).toBe(200);
    expect((await post(poisonMax)).status).toBe(200);
    await claimIn(poison.key, 'FAILED', 40_000);
    await claimIn(poisonMax.key, 'FAILED', 40_000);
    await waitFor(
      'both messages in the DLQ',
      async () => {
        const { Attributes } = await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: outputs.DeadLetterQueueUrl,
            AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
          }),
        );
        const count =
          Number(Attributes?.ApproximateNumberOfMessages) +
          Number(Attributes?.ApproximateNumberOfMessagesNotVisible);
        return count >= 2 ? true : undefined;
      },
      40_000,
    );

    const listed = await json<DlqList>('dlq', 'list');
    for (const event of [poison, poisonMax]) {
      expect(listed.messages).toContainEqual(
        expect.objectContaining({
          key: event.key,
          provider: 'stripe',
          eventType: 'payment_intent.succeeded',
          eventId: event.eventId,
          claimStatus: 'FAILED',
          receiveCount: expect.any(Number),
          sentAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        }),
      );
    }
    // Listing left them in place.
    const again = await json<DlqList>('dlq', 'list');
    expect(again.messages.map((m) => m.key).sort()).toEqual([poison.key, poisonMax.key].sort());
    expect(await effectsFor(poison.intentId)).toEqual([]);

    // The faults are used up (the "fix"). One message by hand, the rest with a move task.
    const byHand = await json<{
      mode: string;
      moved: number;
      messages: Array<{ key: string }>;
      follow: unknown;
    }>('dlq', 'redrive', '--max', '1');
    expect(byHand).toMatchObject({
      mode: 'by-hand',
      moved: 1,
      follow: { followed: 1, summary: { resumed: 1, 'not-resumed': 0, failed: 0, pending: 0 } },
    });
    const task = await json<{
      mode: string;
      status: string;
      moved: number;
      sourceArn: string;
      destinationArn: string;
      follow: unknown;
    }>('dlq', 'redrive');
    expect(task).toMatchObject({
      mode: 'move-task',
      status: 'COMPLETED',
      moved: 1,
      follow: { followed: 1, summary: { resumed: 1 } },
    });
    expect(task.sourceArn).toMatch(/DeadLetterQueue/);
    expect(task.destinationArn).toMatch(/EventQueue/);

    for (const event of [poison, poisonMax]) {
      const done = await claimIn(event.key, 'DONE');
      expect(done).toMatchObject({ outcome: 'applied', lastCompletedStep: 'receipt' });
    }
    await new Promise((r) => setTimeout(r, 1_500)); // any stray redelivery would show up by now
    for (const event of [poison, poisonMax]) {
      expect(await effectsFor(event.intentId)).toEqual([
        ['ledger', false],
        ['mailer', false],
      ]);
    }
    expect((await json<DlqList>('dlq', 'list')).messages).toEqual([]);
  }, 90_000);

  it('redrive after the provider window: a retained claim resumes its effects, a lost one resumes from its row, and what could not be resumed is reported', async () => {
    const late = delivery('lateredrive');
    const lost = delivery('lostclaim');
    // Not archived-checked below: `lost` loses its claim (and so its archive pointer) on purpose.
    posted.delete('lateredrive');
    posted.delete('lostclaim');
    expect((await post(late)).status).toBe(200);
    expect((await post(lost)).status).toBe(200);
    for (const event of [late, lost]) {
      const failed = await claimIn(event.key, 'FAILED', 40_000);
      expect(failed).toMatchObject({ lastCompletedStep: 'state' });
      expect(String(failed.lastError)).toContain('injected fault at processor.beforeLedger');
      expect(await payment(event.intentId)).toMatchObject({
        status: 'succeeded',
        lastEventId: event.eventId,
      });
    }
    await waitFor(
      'both messages in the DLQ',
      async () => {
        const listed = await json<DlqList>('dlq', 'list');
        return listed.messages.length >= 2 ? listed : undefined;
      },
      40_000,
    );
    expect(await effectsFor(late.intentId)).toEqual([]);

    // Both claims outlive the DLQ's 14 days and a redrive margin, whatever Stripe's 7-day window.
    const retained = Math.floor(Date.now() / 1000) + 15 * 24 * 3600 - 120;
    expect(Number((await claim(late.key))?.expiresAt)).toBeGreaterThanOrEqual(retained);
    // The worst case: `lost`'s claim is gone anyway (deleted by hand, a table restore). DynamoDB
    // Local deletes expired items within seconds, so "expired but still stored" is covered by
    // test/processor/recovery.integration.test.ts and the CLI views' unit tests.
    await doc.send(new DeleteCommand({ TableName: outputs.ClaimsTableName, Key: { pk: lost.key } }));

    // What the operator sees is what the processor will do.
    const listed = await json<{ messages: Array<DlqList['messages'][number] & { claimExpired: boolean }> }>(
      'dlq',
      'list',
    );
    expect(listed.messages).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ key: late.key, claimStatus: 'FAILED', claimExpired: false }),
        expect.objectContaining({ key: lost.key, claimStatus: null, claimExpired: false }),
      ]),
    );

    const redrive = await webhooks('dlq', 'redrive', '--json');
    // Exit 1: one event could not be fully resumed, and the report says which effect and why.
    expect(redrive.code).toBe(1);
    const report = JSON.parse(redrive.stdout) as {
      status: string;
      follow: { results: Array<Record<string, unknown>>; summary: Record<string, number> };
    };
    expect(report.status).toBe('COMPLETED');
    expect(report.follow.summary).toEqual({ resumed: 1, 'not-resumed': 1, failed: 0, pending: 0 });
    expect(report.follow.results).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ key: late.key, result: 'resumed', status: 'DONE', step: 'receipt' }),
        expect.objectContaining({ key: lost.key, result: 'not-resumed', unresumedEffects: ['receipt'] }),
      ]),
    );

    // The retained claim kept its markers: the redrive resumed at the ledger, then the receipt, once each.
    expect(await claim(late.key)).toMatchObject({
      status: 'DONE',
      outcome: 'applied',
      lastCompletedStep: 'receipt',
    });
    // The deleted one resumed from the row this event wrote: the ledger (it honours
    // Idempotency-Key) ran, the receipt (a plain mailer) was not sent blind.
    expect(await claim(lost.key)).toMatchObject({
      status: 'DONE',
      recoveredFrom: 'business-row',
      unresumedEffects: ['receipt'],
    });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await effectsFor(late.intentId)).toEqual([
      ['ledger', false],
      ['mailer', false],
    ]);
    expect(await effectsFor(lost.intentId)).toEqual([['ledger', false]]);
    expect((await json<DlqList>('dlq', 'list')).messages).toEqual([]);
  }, 120_000);

  it("redrive reports an event that fails again as failed again (exit 1), from an operator's clock 30 s ahead of the stack's", async () => {
    const again = delivery('failagain');
    await postToDlq(again);

    // The cause is not fixed: the processor takes the claim again and fails it three more times.
    const redrive = await webhooksWith(CLOCK_AHEAD, 'dlq', 'redrive', '--wait', '40', '--json');
    expect(redrive.code, redrive.stderr).toBe(1);
    const report = JSON.parse(redrive.stdout) as RedriveReport;
    expect(report.status).toBe('COMPLETED');
    expect(report.follow.summary).toEqual({ resumed: 0, 'not-resumed': 0, failed: 1, pending: 0 });
    expect(report.follow.results).toEqual([
      expect.objectContaining({
        key: again.key,
        result: 'failed',
        status: 'FAILED',
        detail: expect.stringContaining('injected fault at processor.afterClaim'),
      }),
    ]);

    // Back in the DLQ; now the faults are used up (the fix), and the next redrive resumes it.
    await inDlq(again);
    const fixed = await webhooksWith(CLOCK_AHEAD, 'dlq', 'redrive', '--json');
    expect(fixed.code, fixed.stderr).toBe(0);
    expect((JSON.parse(fixed.stdout) as RedriveReport).follow.summary).toMatchObject({ resumed: 1 });
    expect(await effectsFor(again.intentId)).toEqual([
      ['ledger', false],
      ['mailer', false],
    ]);
  }, 150_000);

  it('redrive exits 3 while an event is still pending when --wait ends, and 0 with --wait 0', async () => {
    const slow = delivery('slowredrive');
    await postToDlq(slow);

    // Its first attempt after the redrive fails; the retry waits out the 6 s visibility timeout.
    const redrive = await webhooks('dlq', 'redrive', '--wait', '1');
    expect(redrive.code, redrive.stderr).toBe(3);
    expect(redrive.stdout).toContain('0 resumed, 0 not fully resumed, 0 failed again, 1 still pending');
    expect(redrive.stdout).toContain(`pending     ${slow.key}`);

    // Not fixed yet: two more failures, back to the DLQ. Not waiting is asked for this time: the
    // completed move is all the command reports, and it says so.
    await inDlq(slow);
    const unfollowed = await webhooks('dlq', 'redrive', '--wait', '0');
    expect(unfollowed.code, unfollowed.stderr).toBe(0);
    expect(unfollowed.stdout).toMatch(/^COMPLETED: moved 1 of 1 message/m);
    expect(unfollowed.stdout).toContain('Not followed (--wait 0)');
    const done = await claimIn(slow.key, 'DONE', 40_000);
    expect(done).toMatchObject({ outcome: 'applied', lastCompletedStep: 'receipt' });
    expect(await effectsFor(slow.intentId)).toEqual([
      ['ledger', false],
      ['mailer', false],
    ]);
  }, 150_000);

  it('replay skips a DONE event; replay --force leaves the row identical and runs no effect again', async () => {
    const event = posted.get('cli_dup');
    if (!event) throw new Error('cli_dup not posted');
    const rowBefore = await payment(event.intentId);
    const claimBefore = await claim(event.key);
    const effectsBefore = await effectsFor(event.intentId);
    expect(effectsBefore).toEqual([
      ['ledger', false],
      ['mailer', false],
    ]);

    const skipped = await json<{ results: Array<Record<string, unknown>>; summary: Record<string, number> }>(
      'replay',
      'stripe',
      event.eventId,
    );
    expect(skipped.results).toEqual([
      expect.objectContaining({ key: event.key, claimStatus: 'DONE', action: 'skipped', messageId: null }),
    ]);
    expect(skipped.summary).toEqual({ sent: 0, forced: 0, skipped: 1, failed: 0 });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await claim(event.key)).toEqual(claimBefore);
    expect(await payment(event.intentId)).toEqual(rowBefore);
    expect(await effectsFor(event.intentId)).toEqual(effectsBefore);

    const forced = await json<{
      results: Array<Record<string, unknown>>;
      follow: { summary: Record<string, number> };
    }>('replay', '--key', event.key, '--force');
    expect(forced.follow.summary).toEqual({ resumed: 1, 'not-resumed': 0, failed: 0, pending: 0 });
    expect(forced.results).toEqual([
      expect.objectContaining({
        key: event.key,
        claimStatus: 'DONE',
        action: 'forced',
        messageId: expect.any(String),
      }),
    ]);
    // The processor took the claim again (one more attempt), planned again, found the row written by
    // this very event and its effects marked done, and finished it: nothing written, nothing run.
    const after = await waitFor('the forced replay to be processed', async () => {
      const item = await claim(event.key);
      return item?.status === 'DONE' &&
        Number(item.processingAttempts) === Number(claimBefore?.processingAttempts) + 1
        ? item
        : undefined;
    });
    expect(after).toMatchObject({
      outcome: 'applied',
      deliveries: 2,
      archiveKey: claimBefore?.archiveKey,
      lastCompletedStep: 'receipt',
      plannedEffects: ['ledger', 'receipt'],
    });
    expect(after.replan).toBeUndefined();
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await payment(event.intentId)).toEqual(rowBefore);
    expect(await effectsFor(event.intentId)).toEqual(effectsBefore);
  }, 60_000);

  it('inspect and replay --force work for a claim-checked 2 MB GitHub push (too large for one SQS message)', async () => {
    const delivery = 'cli-large-push-0001';
    const body = sampleDelivery('github', {
      secret: TEST_SECRETS.github,
      bytes: 2_000_000,
      eventId: delivery,
    }).body;
    const response = await fetch(outputs.GithubWebhookUrl ?? '', {
      method: 'POST',
      headers: await githubHeaders(body, { event: 'push', delivery }),
      body,
    });
    expect(response.status).toBe(200);
    const { key } = (await response.json()) as { key: string };
    const done = await claimIn(key, 'DONE');
    expect(done.archiveKey).toEqual(expect.stringMatching(/^events\/github\//));

    const inspected = await json<{ claims: Array<{ archive: { uri: string }; status: string }> }>(
      'inspect',
      '--key',
      key,
    );
    expect(inspected.claims[0]).toMatchObject({
      status: 'DONE',
      archive: { uri: `s3://${outputs.ArchiveBucketName}/${done.archiveKey}` },
    });

    // The archived event with its body is 2 MB: replay sends a claim check on the same object.
    const forced = await json<{
      results: Array<Record<string, unknown>>;
      follow: { summary: Record<string, number> };
    }>('replay', '--key', key, '--force');
    expect(forced.results).toEqual([
      expect.objectContaining({ key, action: 'forced', messageId: expect.any(String) }),
    ]);
    expect(forced.follow.summary).toEqual({ resumed: 1, 'not-resumed': 0, failed: 0, pending: 0 });
    expect(await claim(key)).toMatchObject({
      status: 'DONE',
      processingAttempts: Number(done.processingAttempts) + 1,
      archiveKey: done.archiveKey,
    });
    const listed = await s3.send(
      new ListObjectsV2Command({
        Bucket: outputs.ArchiveBucketName,
        Prefix: String(done.archiveKey).replace(/[^/]+$/, ''),
      }),
    );
    expect((listed.Contents ?? []).filter((o) => o.Key === done.archiveKey)).toHaveLength(1);
  }, 60_000);

  it('replay of a time range lists the archive by day and skips the DONE events in it', async () => {
    const to = new Date(Date.now() + 60_000).toISOString();
    const range = await json<{
      scanned: { prefixes: number; objects: number };
      results: Array<{ key: string; action: string }>;
      summary: { sent: number; forced: number; skipped: number; failed: number };
    }>('replay', 'stripe', '--from', startedAt.toISOString(), '--to', to);
    const keys = ['cli_dup', 'poisoncli', 'poisonmax'].map((name) => posted.get(name)?.key);
    expect(range.results.map((r) => r.key)).toEqual(expect.arrayContaining(keys));
    expect(range.results.every((r) => r.action === 'skipped')).toBe(true);
    expect(range.summary.sent + range.summary.forced + range.summary.failed).toBe(0);
    expect(range.scanned.objects).toBeGreaterThanOrEqual(3);
  });

  it('archives every processed event without signature values or secrets', async () => {
    for (const event of posted.values()) {
      const item = await claim(event.key);
      expect(item?.archiveKey).toEqual(expect.any(String));
      const object = await s3.send(
        new GetObjectCommand({ Bucket: outputs.ArchiveBucketName, Key: String(item?.archiveKey) }),
      );
      const text = (await object.Body?.transformToString('utf8')) ?? '';
      const archived = eventIn(parseArchive(text, 'the object'), event.key, 'the object');
      expect(archived).toMatchObject({ key: event.key, eventId: event.eventId, body: event.body });
      expect(archived.archivedAt).toEqual(expect.any(String));
      expect(Object.keys(archived.headers)).not.toContain('stripe-signature');
      const signature = event.headers['stripe-signature'] ?? '';
      const v1 = /v1=([0-9a-f]+)/.exec(signature)?.[1] ?? '';
      expect(v1).toMatch(/^[0-9a-f]{64}$/);
      expect(text).not.toContain(v1);
      expect(text).not.toContain('stripe-signature');
      expect(text).not.toContain(TEST_SECRETS.stripe);
    }
  });

  it('send posts a signed sample through the CLI and reports its effects', async () => {
    const report = await json<{
      ok: boolean;
      deliveries: Array<{ status: number; outcome: string }>;
      effects: { entries: Array<{ service: string; replay: boolean }> };
    }>('send', 'stripe', '--dup', '2');
    expect(report.ok).toBe(true);
    expect(report.deliveries.map((d) => [d.status, d.outcome])).toEqual([
      [200, 'accepted'],
      [200, 'duplicate'],
    ]);
    expect(report.effects.entries.map((e) => [e.service, e.replay])).toEqual([
      ['ledger', false],
      ['mailer', false],
    ]);
  });

  it('send --file posts your own event byte for byte (--dup 2: accepted, then duplicate), and inspect shows the row it wrote', async () => {
    // Pretty-printed with CRLF ends and non-ASCII text: bytes a re-serialisation would change.
    const body =
      '{\r\n  "id": "evt_cli_file",\r\n  "object": "event",\r\n  "type": "payment_intent.succeeded",\r\n' +
      `  "created": ${Math.floor(Date.now() / 1000)},\r\n` +
      '  "data": {"object": {"id": "pi_cli_file", "object": "payment_intent", "amount": 4200,\r\n' +
      '    "amount_received": 4200, "currency": "eur", "status": "succeeded", "description": "Café ☕"}}\r\n}\r\n';
    const file = join(mkdtempSync(join(tmpdir(), 'webhooks-send-file-')), 'event.json');
    writeFileSync(file, body);
    const report = await json<{
      ok: boolean;
      summary: string;
      event: Record<string, unknown>;
      body: { bytes: number };
      deliveries: Array<{ status: number; outcome: string; key: string }>;
      effects: { entries: Array<{ service: string; replay: boolean }> };
    }>('send', 'stripe', '--file', file, '--dup', '2');
    const key = 'stripe:platform:pi_cli_file:payment_intent.succeeded';
    expect(report).toMatchObject({
      ok: true,
      event: { eventId: 'evt_cli_file', eventType: 'payment_intent.succeeded', objectId: 'pi_cli_file' },
      body: { bytes: Buffer.byteLength(body) },
    });
    expect(report.deliveries.map((d) => [d.status, d.outcome, d.key])).toEqual([
      [200, 'accepted', key],
      [200, 'duplicate', key],
    ]);
    expect(report.effects.entries.map((e) => [e.service, e.replay])).toEqual([
      ['ledger', false],
      ['mailer', false],
    ]);
    const done = await claimIn(key, 'DONE');
    expect(done).toMatchObject({ outcome: 'applied', deliveries: 2 });
    // The archive holds the body the receiver verified: the file's bytes.
    const object = await s3.send(
      new GetObjectCommand({ Bucket: outputs.ArchiveBucketName, Key: String(done.archiveKey) }),
    );
    const archived = eventIn(
      parseArchive((await object.Body?.transformToString('utf8')) ?? '', 'the object'),
      key,
      'the object',
    );
    expect(archived.body).toBe(body);

    const inspected = await webhooks('inspect', '--key', key);
    expect(inspected.code, inspected.stderr).toBe(0);
    expect(inspected.stdout).toContain('rows: 1 written');
    expect(inspected.stdout).toMatch(/\n {6}amount +4200\n/);
    expect(inspected.stdout).toMatch(/\n {6}currency +eur\n/);
    expect(inspected.stdout).toMatch(/\n {6}lastEventId +evt_cli_file\n/);
  }, 60_000);

  it('send stripe invoice.paid: the billing sample is keyed by its event id; a body without an id is refused, nothing posted', async () => {
    const report = await json<{
      ok: boolean;
      deliveries: Array<{ status: number; outcome: string; key: string }>;
    }>('send', 'stripe', 'invoice.paid', '--id', 'evt_cli_invoice');
    expect(report.ok).toBe(true);
    expect(report.deliveries.map((d) => [d.status, d.outcome, d.key])).toEqual([
      [200, 'accepted', 'stripe:platform:evt_cli_invoice'],
    ]);
    // The example app has no applier for invoices: acknowledged, completed as unhandled.
    expect(await claimIn('stripe:platform:evt_cli_invoice', 'DONE')).toMatchObject({ outcome: 'unhandled' });

    const refused = await webhooks(
      'send',
      'stripe',
      '--body',
      '{"type":"invoice.paid","data":{"object":{}}}',
    );
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^webhooks: --body has no event id: Stripe reads it from payload `id`/);
  }, 60_000);
});
