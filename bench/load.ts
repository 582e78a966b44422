/**
 * Load through the local stack, as a user runs it: `npm start` (the synthesized stack on loopback),
 * then signed Stripe deliveries over HTTP with a share of duplicates, some resent later and some sent
 * as concurrent copies, from a bounded pool. Afterwards every event's effects are checked: exactly one
 * ledger posting and one receipt per payment, none lost, none doubled.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DynamoDBClient, ScanCommand, type ScanCommandOutput } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { devSecret } from '../local/dev-secrets.js';
import type { EffectEntry } from '../local/effects-sink.js';
import { freePort, LOCAL_CREDENTIALS, LOCAL_REGION } from '../local/emulators.js';
import { type SampleDelivery, sampleDelivery } from '../local/samples.js';
import { queueDepth } from '../local/sqs-poller.js';
import { PROJECT_ROOT } from './bundles.js';
import type { Endpoints } from './resources.js';
import { type LatencySummary, round3, seededRandom, summarize } from './stats.js';

export interface RunningStack {
  readonly outputs: Readonly<Record<string, string>>;
  readonly endpoints: Endpoints;
  readonly startSeconds: number;
  /** The last lines the stack printed, for error reports. */
  logTail(): string;
  /**
   * `latencyMs` of the functions' own log lines since the previous call: the receiver's per delivery,
   * the processor's per record. Tells handler time from waiting for a free function process.
   */
  takeHandlerLatencies(): { receiver: number[]; processor: number[] };
  stop(): Promise<void>;
}

/** `[receiver] {"message":"delivery",...,"latencyMs":12}` -> 12 */
function handlerLatency(line: string, prefix: string, message: string): number | undefined {
  if (!line.startsWith(prefix)) return undefined;
  try {
    const parsed = JSON.parse(line.slice(prefix.length)) as { message?: unknown; latencyMs?: unknown };
    return parsed.message === message && typeof parsed.latencyMs === 'number' ? parsed.latencyMs : undefined;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Spawns `npm start` in its own process group on a free port, with the given synthesized app, and
 * waits for its outputs file and "ready:". stop() sends SIGTERM to the group (npm start then stops
 * DynamoDB Local and every function process), and SIGKILL if it has not exited after 20 s.
 */
export async function startLocalStack(
  outdir: string,
  options: {
    timeoutMs?: number;
    /** Local knobs for the run (`CLAIM_LEASE_SECONDS`, ...), over the bench's own. */
    knobs?: Readonly<Record<string, string>>;
  } = {},
): Promise<RunningStack> {
  const port = await freePort();
  const directory = mkdtempSync(join(tmpdir(), 'webhooks-bench-'));
  const outputsFile = join(directory, 'cdk-outputs.local.json');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    LOCAL_OUTPUTS_FILE: outputsFile,
    // Quick redeliveries; the leases move down to it, and the effects keep their 5 s timeout.
    LOCAL_VISIBILITY_TIMEOUT_SECONDS: '10',
    LOCAL_SKIP_SYNTH: '1',
    LOCAL_CDK_OUT: outdir,
    WEBHOOK_SECRET_STRIPE: devSecret('stripe'),
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  for (const name of ['FAULT_POINTS', 'CLAIM_LEASE_SECONDS', 'MAX_RECEIVE_COUNT']) delete env[name];
  Object.assign(env, options.knobs ?? {});

  const started = Date.now();
  const child: ChildProcess = spawn('npm', ['start'], {
    cwd: PROJECT_ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tail: string[] = [];
  let ready = false;
  let latencies = { receiver: [] as number[], processor: [] as number[] };
  let partial = '';
  const onOutput = (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line) continue;
      if (line.startsWith('ready:')) ready = true;
      const receiver = handlerLatency(line, '[receiver] ', 'delivery');
      if (receiver !== undefined) latencies.receiver.push(receiver);
      const processor = handlerLatency(line, '[processor] ', 'event');
      if (processor !== undefined) latencies.processor.push(processor);
      tail.push(line);
      if (tail.length > 200) tail.shift();
    }
  };
  const takeHandlerLatencies = () => {
    const taken = latencies;
    latencies = { receiver: [], processor: [] };
    return taken;
  };
  child.stdout?.on('data', onOutput);
  child.stderr?.on('data', onOutput);
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const killGroup = (signal: NodeJS.Signals) => {
    if (child.pid === undefined || exited) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  // If the bench dies first, do not leave the stack running.
  const onExit = () => killGroup('SIGTERM');
  process.once('exit', onExit);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', onExit);
    killGroup('SIGTERM');
    const timer = setTimeout(() => killGroup('SIGKILL'), 20_000);
    await exit;
    clearTimeout(timer);
    rmSync(directory, { recursive: true, force: true });
  };
  const logTail = () => tail.join('\n');

  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  while (!(ready && existsSync(outputsFile))) {
    if (exited || Date.now() > deadline) {
      await stop();
      throw new Error(`the local stack did not start${exited ? ' (it exited)' : ''}:\n${logTail()}`);
    }
    await sleep(200);
  }
  const outputs = Object.values(
    JSON.parse(readFileSync(outputsFile, 'utf8')) as Record<string, Record<string, string>>,
  )[0] as Record<string, string>;
  const dynamoDbEndpoint = outputs.LocalDynamoDbEndpoint;
  const sqsEndpoint = outputs.LocalSqsEndpoint;
  if (!dynamoDbEndpoint || !sqsEndpoint || !outputs.StripeWebhookUrl || !outputs.LocalEffectsUrl) {
    await stop();
    throw new Error(`the outputs file lacks the local endpoints: ${JSON.stringify(outputs)}`);
  }
  return {
    outputs,
    endpoints: {
      dynamoDbEndpoint,
      sqsEndpoint,
      ...(outputs.LocalS3Endpoint ? { s3Endpoint: outputs.LocalS3Endpoint } : {}),
    },
    startSeconds: round3((Date.now() - started) / 1000),
    logTail,
    takeHandlerLatencies,
    stop,
  };
}

export interface LoadOptions {
  readonly events: number;
  /** Duplicate deliveries as a share of events (0.1: 200 extra deliveries for 2,000 events). */
  readonly duplicates: number;
  /** Share of those duplicates sent as a concurrent copy of the first delivery; the rest are resent later. */
  readonly concurrentShare: number;
  readonly concurrency: number;
  readonly seed: number;
  readonly settleTimeoutMs: number;
  readonly progress?: (line: string) => void;
}

export interface EffectsCheck {
  readonly payments: number;
  readonly ledgerPostings: number;
  /** Repeated ledger calls answered from the ledger's Idempotency-Key record (harmless). */
  readonly ledgerReplays: number;
  readonly receipts: number;
  readonly lostLedger: number;
  readonly lostReceipt: number;
  readonly doubledLedger: number;
  readonly doubledReceipt: number;
  /** Payments with no ledger posting or no receipt. */
  readonly lost: number;
  /** Payments with more than one ledger posting or more than one receipt. */
  readonly doubled: number;
  readonly examples: readonly string[];
}

export interface LoadResult {
  readonly events: number;
  readonly duplicatesResent: number;
  readonly concurrentCopies: number;
  readonly concurrency: number;
  /** HTTP requests sent, retries included. */
  readonly deliveries: number;
  readonly retries: number;
  readonly sendSeconds: number;
  readonly deliveriesPerSecond: number;
  readonly latencyMs: LatencySummary;
  readonly latencyByOutcomeMs: Readonly<Record<string, LatencySummary>>;
  /**
   * The functions' own latencyMs (their log lines) during the run: the receiver handler per delivery
   * and the processor per record, against the HTTP latency above (the rest is waiting for one of the
   * local stack's 4 processes per function, and the loopback hops).
   */
  readonly handlerLatencyMs: { readonly receiver: LatencySummary; readonly processorRecord: LatencySummary };
  readonly statuses: Readonly<Record<string, number>>;
  readonly outcomes: Readonly<Record<string, number>>;
  /** From the last answer until every claim was DONE. */
  readonly settleSeconds: number;
  /** Claim firstSeenAt -> completedAt: delivery to effects applied. */
  readonly endToEndMs: LatencySummary;
  readonly claims: {
    readonly total: number;
    readonly done: number;
    readonly deliveriesCounted: number;
    /** Claims reporting an effect in doubt (`unresumedEffects`): never doubled, left for a person. */
    readonly inDoubt: number;
  };
  readonly paymentRows: number;
  readonly effects: EffectsCheck;
  readonly deadLetterMessages: number;
  readonly queueDepthAfter: number;
  readonly exactlyOnce: boolean;
  readonly stackStartSeconds: number;
}

interface Task {
  readonly index: number;
  readonly kind: 'first' | 'resend';
  /** Copies sent at once (2 for a concurrent duplicate). */
  readonly copies: number;
  readonly order: number;
}

interface Answer {
  readonly status: number;
  readonly outcome: string;
  readonly ms: number;
}

function planTasks(options: LoadOptions): { tasks: Task[]; resends: number; concurrent: number } {
  const random = seededRandom(options.seed);
  const total = Math.round(options.events * options.duplicates);
  const concurrent = Math.min(options.events, Math.round(total * options.concurrentShare));
  const resends = total - concurrent;
  const shuffled = Array.from({ length: options.events }, (_, i) => i);
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j] as number, shuffled[i] as number];
  }
  const withCopy = new Set(shuffled.slice(0, concurrent));
  const tasks: Task[] = Array.from({ length: options.events }, (_, index) => ({
    index,
    kind: 'first' as const,
    copies: withCopy.has(index) ? 2 : 1,
    order: index,
  }));
  for (let r = 0; r < resends; r++) {
    // Resent somewhere after its first delivery (a provider retry), spread over the rest of the run.
    const index = shuffled[(concurrent + r) % options.events] as number;
    tasks.push({ index, kind: 'resend', copies: 1, order: index + 1 + random() * (options.events - index) });
  }
  tasks.sort((a, b) => a.order - b.order);
  return { tasks, resends, concurrent };
}

async function post(url: string, delivery: SampleDelivery): Promise<Answer> {
  const started = performance.now();
  try {
    const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
    const text = await response.text();
    const ms = performance.now() - started;
    let outcome = `status ${response.status}`;
    try {
      outcome = String((JSON.parse(text) as { outcome?: unknown }).outcome ?? outcome);
    } catch {
      // not JSON: keep the status
    }
    return { status: response.status, outcome, ms };
  } catch (error) {
    return { status: 0, outcome: `network: ${(error as Error).message}`, ms: performance.now() - started };
  }
}

async function scanAll(client: DynamoDBClient, tableName: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: ScanCommandOutput['LastEvaluatedKey'];
  do {
    const page = await client.send(
      new ScanCommand({ TableName: tableName, ExclusiveStartKey: startKey, ConsistentRead: true }),
    );
    for (const item of page.Items ?? []) {
      items.push(
        Object.fromEntries(
          Object.entries(item).map(([k, v]) => [k, v.S ?? v.N ?? v.BOOL ?? v.L?.map((e) => e.S) ?? null]),
        ),
      );
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

function checkEffects(entries: readonly EffectEntry[], payments: readonly string[]): EffectsCheck {
  const ledger = new Map<string, number>();
  const receipts = new Map<string, number>();
  let ledgerReplays = 0;
  for (const entry of entries) {
    const payment = String((entry.body as { payment?: unknown } | undefined)?.payment ?? '');
    if (entry.service === 'ledger') {
      if (entry.replay) ledgerReplays++;
      else ledger.set(payment, (ledger.get(payment) ?? 0) + 1);
    } else if (entry.service === 'mailer') {
      receipts.set(payment, (receipts.get(payment) ?? 0) + 1);
    }
  }
  let lostLedger = 0;
  let lostReceipt = 0;
  let doubledLedger = 0;
  let doubledReceipt = 0;
  let lost = 0;
  let doubled = 0;
  const examples: string[] = [];
  for (const payment of payments) {
    const l = ledger.get(payment) ?? 0;
    const m = receipts.get(payment) ?? 0;
    if (l === 0) lostLedger++;
    if (m === 0) lostReceipt++;
    if (l > 1) doubledLedger++;
    if (m > 1) doubledReceipt++;
    if (l === 0 || m === 0) lost++;
    if (l > 1 || m > 1) doubled++;
    if ((l !== 1 || m !== 1) && examples.length < 10) examples.push(`${payment}: ledger ${l}, receipts ${m}`);
  }
  return {
    payments: payments.length,
    ledgerPostings: [...ledger.values()].reduce((a, b) => a + b, 0),
    ledgerReplays,
    receipts: [...receipts.values()].reduce((a, b) => a + b, 0),
    lostLedger,
    lostReceipt,
    doubledLedger,
    doubledReceipt,
    lost,
    doubled,
    examples,
  };
}

const MAX_ATTEMPTS = 5;

export async function runLoad(stack: RunningStack, options: LoadOptions): Promise<LoadResult> {
  const progress = options.progress ?? (() => undefined);
  const url = stack.outputs.StripeWebhookUrl as string;
  const { tasks, resends, concurrent } = planTasks(options);
  const deliveries = new Map<number, SampleDelivery>();
  const intents = new Map<number, string>();
  const firstAnswered = new Map<number, Promise<void>>();
  const answers: Answer[] = [];
  let retries = 0;

  const deliveryFor = (index: number): SampleDelivery => {
    let delivery = deliveries.get(index);
    if (!delivery) {
      // Signed when first sent: the signature's timestamp must be within Stripe's 300 s tolerance.
      delivery = sampleDelivery('stripe', { secret: devSecret('stripe'), type: 'payment_intent.succeeded' });
      deliveries.set(index, delivery);
      const body = JSON.parse(delivery.body) as { data: { object: { id: string } } };
      intents.set(index, body.data.object.id);
    }
    return delivery;
  };

  /** Like a provider: retries on anything but 200, a few times, with a short back-off. */
  const send = async (delivery: SampleDelivery): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      const answer = await post(url, delivery);
      answers.push(answer);
      if (answer.status === 200 || attempt >= MAX_ATTEMPTS) return;
      retries++;
      await sleep(250 * attempt);
    }
  };

  const runTask = async (task: Task): Promise<void> => {
    if (task.kind === 'resend') {
      await firstAnswered.get(task.index);
      await send(deliveryFor(task.index));
      return;
    }
    const delivery = deliveryFor(task.index);
    const done = Promise.all(Array.from({ length: task.copies }, () => send(delivery))).then(() => undefined);
    firstAnswered.set(task.index, done);
    await done;
  };

  progress(
    `load: ${options.events} events + ${resends} resent + ${concurrent} concurrent copies, ${options.concurrency} in flight`,
  );
  let next = 0;
  let finished = 0;
  stack.takeHandlerLatencies();
  const started = performance.now();
  const worker = async () => {
    while (next < tasks.length) {
      const task = tasks[next++] as Task;
      await runTask(task);
      if (++finished % 500 === 0) progress(`  ${finished}/${tasks.length} tasks answered`);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const sendSeconds = (performance.now() - started) / 1000;

  const config = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const dynamo = new DynamoDBClient({ ...config, endpoint: stack.endpoints.dynamoDbEndpoint });
  const sqs = new SQSClient({ ...config, endpoint: stack.endpoints.sqsEndpoint });
  try {
    progress('load: waiting until every claim is DONE');
    const settleStarted = performance.now();
    let claims: Record<string, unknown>[] = [];
    for (;;) {
      claims = await scanAll(dynamo, stack.outputs.ClaimsTableName as string);
      const done = claims.filter((c) => c.status === 'DONE').length;
      if (done >= options.events) break;
      if (performance.now() - settleStarted > options.settleTimeoutMs) {
        progress(`  timed out with ${done}/${options.events} claims DONE`);
        break;
      }
      await sleep(500);
    }
    const settleSeconds = (performance.now() - settleStarted) / 1000;
    // Let any stray redelivery finish before counting effects.
    await sleep(1_000);
    const handlerLatencies = stack.takeHandlerLatencies();

    const entries = (await (await fetch(stack.outputs.LocalEffectsUrl as string)).json()) as EffectEntry[];
    const payments = [...intents.values()].map((id) => `stripe:platform:${id}`);
    const effects = checkEffects(entries, payments);
    const paymentRows = (await scanAll(dynamo, stack.outputs.PaymentsTableName as string)).length;
    const depth = async (queueUrl: string | undefined) => (queueUrl ? queueDepth(sqs, queueUrl) : Number.NaN);

    const byOutcome: Record<string, number[]> = {};
    const statuses: Record<string, number> = {};
    const outcomes: Record<string, number> = {};
    for (const answer of answers) {
      const samples = byOutcome[answer.outcome] ?? [];
      samples.push(answer.ms);
      byOutcome[answer.outcome] = samples;
      statuses[String(answer.status)] = (statuses[String(answer.status)] ?? 0) + 1;
      outcomes[answer.outcome] = (outcomes[answer.outcome] ?? 0) + 1;
    }
    const endToEnd = claims
      .filter(
        (c) => c.status === 'DONE' && typeof c.completedAt === 'string' && typeof c.firstSeenAt === 'string',
      )
      .map((c) => Date.parse(c.completedAt as string) - Date.parse(c.firstSeenAt as string));
    const done = claims.filter((c) => c.status === 'DONE').length;
    const deadLetterMessages = await depth(stack.outputs.DeadLetterQueueUrl);
    const queueDepthAfter = await depth(stack.outputs.EventQueueUrl);
    return {
      events: options.events,
      duplicatesResent: resends,
      concurrentCopies: concurrent,
      concurrency: options.concurrency,
      deliveries: answers.length,
      retries,
      sendSeconds: round3(sendSeconds),
      deliveriesPerSecond: round3(answers.length / sendSeconds),
      latencyMs: summarize(answers.map((a) => a.ms)),
      latencyByOutcomeMs: Object.fromEntries(Object.entries(byOutcome).map(([k, v]) => [k, summarize(v)])),
      handlerLatencyMs: {
        receiver: summarize(handlerLatencies.receiver),
        processorRecord: summarize(handlerLatencies.processor),
      },
      statuses,
      outcomes,
      settleSeconds: round3(settleSeconds),
      endToEndMs: summarize(endToEnd),
      claims: {
        total: claims.length,
        done,
        deliveriesCounted: claims.reduce((sum, c) => sum + Number(c.deliveries ?? 0), 0),
        inDoubt: claims.filter((c) => Array.isArray(c.unresumedEffects) && c.unresumedEffects.length > 0)
          .length,
      },
      paymentRows,
      effects,
      deadLetterMessages,
      queueDepthAfter,
      exactlyOnce: effects.lost === 0 && effects.doubled === 0 && done === options.events,
      stackStartSeconds: stack.startSeconds,
    };
  } finally {
    dynamo.destroy();
    sqs.destroy();
  }
}
