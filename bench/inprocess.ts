/**
 * The in-process measurements: receiver latency (ours against the two baselines, interleaved),
 * DynamoDB capacity per event, processor durations and log volume. Everything talks to the DynamoDB
 * Local and SQS emulator at the endpoints given, so the smoke test can run it against the test
 * suite's servers with tiny counts.
 */
import { performance } from 'node:perf_hooks';
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { APIGatewayProxyStructuredResultV2, SQSEvent } from 'aws-lambda';
import { EXAMPLE_EFFECTS } from '../examples/payments/appliers/index.js';
import { stripeProvider } from '../lambdas/providers/stripe.js';
import { type EffectsSink, startEffectsSink } from '../local/effects-sink.js';
import { toSqsRecord } from '../local/sqs-poller.js';
import { CapacityMeter, type CapacityTally, RequestCounter } from './capacity.js';
import { apiGatewayEvent, lambdaContext, type SignedDelivery, signedStripeEvent } from './events.js';
import { bucketObjects, type Endpoints, maxItemBytes } from './resources.js';
import { type LatencySummary, mean, round3, summarize } from './stats.js';
import {
  createOurProcessor,
  createPowertoolsProcessor,
  createReceiverVariant,
  type ProcessorSetup,
  type ReceiverVariant,
  type SqsBatchHandler,
  VARIANTS,
  type VariantName,
} from './variants.js';

/** The secret the in-process variants verify with (the local stack's development default). */
export const BENCH_SECRET = 'whsec_local_development_secret';

export interface InProcessCounts {
  /** Measured deliveries per variant and kind (new, duplicate). */
  readonly latency: number;
  /** Unmeasured rounds first (JIT, connection pools, DynamoDB Local's own warm-up). */
  readonly warmup: number;
  /** Events per variant whose capacity is metered. */
  readonly capacity: number;
  /** Queued messages run through each processor for its durations. */
  readonly processor: number;
  /** Events whose log output is measured. */
  readonly logs: number;
}

export interface InProcessOptions {
  readonly counts: InProcessCounts;
  /** Memory size the handlers are told they have (the Lambda context's memoryLimitInMB). */
  readonly receiverMemoryMb?: number;
  readonly processorMemoryMb?: number;
  readonly progress?: (line: string) => void;
}

export interface KindSummary {
  readonly new: LatencySummary;
  readonly duplicate: LatencySummary;
}

export interface Ratios {
  readonly oursOverBare: number;
  readonly oursOverPowertools: number;
  /** Ours against the floor with the same three requests: what our code costs beyond its I/O. */
  readonly oursOverBareOurIo: number;
  /** Ours with the duplicate counter off (`countDuplicates: false`) against the two baselines. */
  readonly uncountedOverBare: number;
  readonly uncountedOverPowertools: number;
  /** Ours with the counter off and no ENQUEUED mark (`markEnqueued: false`) against the baselines. */
  readonly leanOverBare: number;
  readonly leanOverPowertools: number;
}

export interface ReceiverLatencyResult {
  readonly ours: KindSummary;
  /** Ours with `countDuplicates: false`. */
  readonly oursUncounted: KindSummary;
  /** Ours with `countDuplicates: false` and `markEnqueued: false`; its duplicates each send a copy. */
  readonly oursLean: KindSummary;
  readonly bare: KindSummary;
  readonly bareOurIo: KindSummary;
  readonly powertools: KindSummary;
  readonly ratios: {
    readonly newP50: Ratios;
    readonly newP99: Ratios;
    readonly duplicateP50: Ratios;
    readonly duplicateP99: Ratios;
  };
  /** Mean of the per-invocation durations rounded up to whole ms, as Lambda bills them. */
  readonly billedMeanMs: Record<VariantName, { readonly new: number; readonly duplicate: number }>;
  /** Signature check + identity extraction alone (what `bare` skips), microseconds per delivery. */
  readonly verifyAndExtractUs: number;
  readonly n: number;
  readonly warmup: number;
  readonly method: string;
}

export interface UnitsPerEvent {
  readonly write: number;
  readonly read: number;
  /** The requests behind the figure, from one sample: `PutItem 1 WRU (reported)`. */
  readonly operations: readonly string[];
}

export interface PipelineCapacity {
  readonly receiverNew: UnitsPerEvent;
  readonly receiverDuplicate: UnitsPerEvent;
  readonly processorPerEvent?: UnitsPerEvent;
  readonly pipelineNew?: { readonly write: number; readonly read: number };
}

export interface ArchiveResult {
  /** Whether our processor archived payloads (it does as deployed; needs an S3 endpoint here). */
  readonly enabled: boolean;
  /** S3 requests our processor made per event, by command. */
  readonly requestsPerEvent: Readonly<Record<string, number>>;
  readonly meanObjectBytes: number;
  /** Bytes stored per event (all objects' bytes over the events): what the archive's storage costs. */
  readonly storedBytesPerEvent: number;
}

export interface CapacityResult {
  readonly ours: PipelineCapacity;
  /** Our receiver with `countDuplicates: false` (the processor is the same as ours). */
  readonly oursUncounted: PipelineCapacity;
  /**
   * Our receiver with `countDuplicates: false` and `markEnqueued: false`, each event delivered twice
   * before any processor ran: `receiverDuplicate` is a copy's receiver side, `processorPerEvent` our
   * processor draining the event and its copy, `copyInProcessor` what absorbing the copy added.
   */
  readonly oursLean: PipelineCapacity & { readonly copyInProcessor: UnitsPerEvent };
  readonly powertools: PipelineCapacity;
  readonly bare: PipelineCapacity;
  /** Largest item written, per table kind: checks that "<= 1 KB" holds for transaction items. */
  readonly maxItemBytes: Record<string, number>;
  /** Our processor's payload archive (S3): requests per event and object size. */
  readonly archive: ArchiveResult;
  readonly n: number;
}

export interface ProcessorDurations {
  /** Handler time per batch divided by its records. */
  readonly perMessage: LatencySummary;
  readonly batch: LatencySummary;
  readonly meanBatchSize: number;
  /** Mean billed ms per batch (rounded up per invocation). */
  readonly billedMeanBatchMs: number;
}

export interface LogBytesResult {
  /** Bytes our functions write to stdout/stderr (JSON log lines + EMF metrics), per delivery / message. */
  readonly receiverNew: number;
  readonly receiverDuplicate: number;
  readonly processorPerMessage: number;
  readonly n: number;
}

export interface InProcessResult {
  readonly receiverLatencyMs: ReceiverLatencyResult;
  readonly processorMs: { readonly ours: ProcessorDurations; readonly powertools: ProcessorDurations };
  readonly capacity: CapacityResult;
  readonly logBytes: LogBytesResult;
}

type Outcome = 'accepted' | 'duplicate';

function outcomeOf(response: APIGatewayProxyStructuredResultV2): string {
  try {
    return String((JSON.parse(response.body ?? '{}') as { outcome?: unknown }).outcome);
  } catch {
    return `status ${response.statusCode}`;
  }
}

async function deliver(
  variant: ReceiverVariant,
  delivery: SignedDelivery,
  expected: Outcome,
  memoryMb: number,
): Promise<number> {
  const event = apiGatewayEvent('stripe', delivery);
  const context = lambdaContext(`${variant.name}-receiver`, memoryMb);
  const started = performance.now();
  const response = await variant.handler(event, context);
  const elapsed = performance.now() - started;
  const outcome = outcomeOf(response);
  if (response.statusCode !== 200 || outcome !== expected) {
    throw new Error(`${variant.name}: expected 200 ${expected}, got ${response.statusCode} ${outcome}`);
  }
  return elapsed;
}

/**
 * Every rotation of the variants and of their reverse, cycled round by round: each variant takes
 * each position equally often and follows each other variant equally often.
 */
function orders(names: readonly VariantName[]): VariantName[][] {
  const rotations = (list: readonly VariantName[]) =>
    list.map((_, i) => [...list.slice(i), ...list.slice(0, i)]);
  return [...rotations(names), ...rotations([...names].reverse())];
}

const ratio = (a: number, b: number): number => round3(a / b);
const billedMean = (values: readonly number[]): number => round3(mean(values.map((v) => Math.ceil(v))));

export async function measureReceiverLatency(
  variants: Readonly<Record<VariantName, ReceiverVariant>>,
  counts: Pick<InProcessCounts, 'latency' | 'warmup'>,
  memoryMb: number,
  progress?: (line: string) => void,
): Promise<ReceiverLatencyResult> {
  const samples = Object.fromEntries(
    VARIANTS.map((name) => [name, { new: [] as number[], duplicate: [] as number[] }]),
  ) as Record<VariantName, { new: number[]; duplicate: number[] }>;
  const cycle = orders(VARIANTS);
  const rounds = counts.warmup + counts.latency;
  for (let round = 0; round < rounds; round++) {
    const order = cycle[round % cycle.length] ?? [...VARIANTS];
    const measured = round >= counts.warmup;
    const deliveries = new Map<VariantName, SignedDelivery>();
    for (const name of order) {
      const delivery = signedStripeEvent(BENCH_SECRET);
      deliveries.set(name, delivery);
      const ms = await deliver(variants[name], delivery, 'accepted', memoryMb);
      if (measured) samples[name].new.push(ms);
    }
    // The same bytes again: a provider retry of an event already queued.
    for (const name of order) {
      const ms = await deliver(variants[name], deliveries.get(name) as SignedDelivery, 'duplicate', memoryMb);
      if (measured) samples[name].duplicate.push(ms);
    }
    if (progress && (round + 1) % 100 === 0) progress(`  receiver latency: ${round + 1}/${rounds} rounds`);
  }

  const summary = (name: VariantName): KindSummary => ({
    new: summarize(samples[name].new),
    duplicate: summarize(samples[name].duplicate),
  });
  const ours = summary('ours');
  const oursUncounted = summary('oursUncounted');
  const oursLean = summary('oursLean');
  const bare = summary('bare');
  const bareOurIo = summary('bareOurIo');
  const powertools = summary('powertools');
  const ratios = (pick: (s: KindSummary) => number): Ratios => ({
    oursOverBare: ratio(pick(ours), pick(bare)),
    oursOverPowertools: ratio(pick(ours), pick(powertools)),
    oursOverBareOurIo: ratio(pick(ours), pick(bareOurIo)),
    uncountedOverBare: ratio(pick(oursUncounted), pick(bare)),
    uncountedOverPowertools: ratio(pick(oursUncounted), pick(powertools)),
    leanOverBare: ratio(pick(oursLean), pick(bare)),
    leanOverPowertools: ratio(pick(oursLean), pick(powertools)),
  });
  const billed = (name: VariantName) => ({
    new: billedMean(samples[name].new),
    duplicate: billedMean(samples[name].duplicate),
  });
  return {
    ours,
    oursUncounted,
    oursLean,
    bare,
    bareOurIo,
    powertools,
    ratios: {
      newP50: ratios((s) => s.new.p50),
      newP99: ratios((s) => s.new.p99),
      duplicateP50: ratios((s) => s.duplicate.p50),
      duplicateP99: ratios((s) => s.duplicate.p99),
    },
    billedMeanMs: Object.fromEntries(VARIANTS.map((name) => [name, billed(name)])) as Record<
      VariantName,
      { new: number; duplicate: number }
    >,
    verifyAndExtractUs: measureVerifyAndExtract(),
    n: counts.latency,
    warmup: counts.warmup,
    method:
      'handler invoked in-process with API Gateway v2 events of signed Stripe payment_intent.succeeded; ' +
      'each round: one new event per variant, then the same bytes again per variant; variant order ' +
      'cycled through every rotation of the variants and of their reverse; warm-up rounds discarded',
  };
}

/** CPU cost of what `bare` leaves out: our Stripe signature check and identity extraction. */
function measureVerifyAndExtract(iterations = 2_000): number {
  const delivery = signedStripeEvent(BENCH_SECRET);
  const request = { headers: delivery.headers, rawBody: Buffer.from(delivery.body) };
  const options = { secrets: [BENCH_SECRET], nowSeconds: Math.floor(Date.now() / 1000) };
  for (let i = 0; i < 200; i++) stripeProvider.verify(request, options);
  const started = performance.now();
  for (let i = 0; i < iterations; i++) {
    if (!stripeProvider.verify(request, options).ok) throw new Error('verify failed in the micro-benchmark');
    stripeProvider.extract(request);
  }
  return round3(((performance.now() - started) * 1000) / iterations);
}

const QUEUE_ARN = 'arn:aws:sqs:us-east-1:000000000000:bench';

function closeVariant(variant: ReceiverVariant): void {
  variant.dynamo.destroy();
  variant.sqs.destroy();
}

async function receiveBatch(sqs: SQSClient, queueUrl: string, max: number): Promise<Message[]> {
  const result = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: Math.min(10, max),
      WaitTimeSeconds: 0,
      VisibilityTimeout: 300,
      AttributeNames: ['All'],
      MessageSystemAttributeNames: ['All'],
    }),
  );
  return result.Messages ?? [];
}

interface DrainResult {
  readonly batchMs: number[];
  readonly perMessageMs: number[];
  readonly records: number;
}

/** Feeds queued messages to a processor in batches of up to 10, as the event source mapping does. */
async function drainThroughProcessor(
  sqs: SQSClient,
  queueUrl: string,
  handler: SqsBatchHandler,
  maxMessages: number,
  memoryMb: number,
  options: { afterBatch?: (records: number) => void; batchSize?: number } = {},
): Promise<DrainResult> {
  const batchMs: number[] = [];
  const perMessageMs: number[] = [];
  let records = 0;
  let emptyPolls = 0;
  while (records < maxMessages && emptyPolls < 3) {
    const messages = await receiveBatch(
      sqs,
      queueUrl,
      Math.min(options.batchSize ?? Number.POSITIVE_INFINITY, maxMessages - records),
    );
    if (messages.length === 0) {
      emptyPolls++;
      await new Promise((resolve) => setTimeout(resolve, 50));
      continue;
    }
    const event: SQSEvent = { Records: messages.map((m) => toSqsRecord(m, QUEUE_ARN, 'us-east-1')) };
    const started = performance.now();
    const response = await handler(event, lambdaContext('processor', memoryMb, 30_000));
    const elapsed = performance.now() - started;
    if ((response.batchItemFailures ?? []).length > 0) {
      throw new Error(`processor reported failures: ${JSON.stringify(response.batchItemFailures)}`);
    }
    options.afterBatch?.(messages.length);
    batchMs.push(elapsed);
    perMessageMs.push(elapsed / messages.length);
    records += messages.length;
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
      }),
    );
  }
  if (records < maxMessages)
    throw new Error(`only ${records} of ${maxMessages} messages reached the processor`);
  return { batchMs, perMessageMs, records };
}

const emptyDrain = (): DrainResult => ({ batchMs: [], perMessageMs: [], records: 0 });
const mergeDrains = (a: DrainResult, b: DrainResult): DrainResult => ({
  batchMs: [...a.batchMs, ...b.batchMs],
  perMessageMs: [...a.perMessageMs, ...b.perMessageMs],
  records: a.records + b.records,
});

function durations(result: DrainResult): ProcessorDurations {
  return {
    perMessage: summarize(result.perMessageMs),
    batch: summarize(result.batchMs),
    meanBatchSize: round3(result.records / result.batchMs.length),
    billedMeanBatchMs: billedMean(result.batchMs),
  };
}

/** Requests per event, grouped: `UpdateItem x3 = 3 WRU (reported)`, in order of first use. */
function describe(tallies: readonly CapacityTally[], events: number): string[] {
  const groups = new Map<string, { count: number; write: number; read: number }>();
  for (const operation of tallies.flatMap((t) => t.operations)) {
    const name = `${operation.command.replace(/Command$/, '')}|${operation.basis}`;
    const group = groups.get(name) ?? { count: 0, write: 0, read: 0 };
    group.count++;
    group.write += operation.writeUnits;
    group.read += operation.readUnits;
    groups.set(name, group);
  }
  return [...groups].map(([name, g]) => {
    const [command, basis] = name.split('|');
    const units = g.write > 0 ? `${round3(g.write / events)} WRU` : `${round3(g.read / events)} RRU`;
    return `${command} x${round3(g.count / events)} = ${units} (${basis})`;
  });
}

function perEvent(tallies: readonly CapacityTally[], events = tallies.length): UnitsPerEvent {
  return {
    write: round3(tallies.reduce((sum, t) => sum + t.writeUnits, 0) / events),
    read: round3(tallies.reduce((sum, t) => sum + t.readUnits, 0) / events),
    operations: describe(tallies, events),
  };
}

async function meterReceiver(
  name: VariantName,
  endpoints: Endpoints,
  events: number,
  memoryMb: number,
): Promise<{
  variant: ReceiverVariant;
  meter: CapacityMeter;
  newTallies: CapacityTally[];
  dupTallies: CapacityTally[];
}> {
  const meter = new CapacityMeter();
  const variant = await createReceiverVariant(name, endpoints, { secret: BENCH_SECRET, meter });
  meter.take(); // table and queue creation are not the receiver's
  const newTallies: CapacityTally[] = [];
  const dupTallies: CapacityTally[] = [];
  for (let i = 0; i < events; i++) {
    const delivery = signedStripeEvent(BENCH_SECRET);
    await deliver(variant, delivery, 'accepted', memoryMb);
    newTallies.push(meter.take());
    await deliver(variant, delivery, 'duplicate', memoryMb);
    dupTallies.push(meter.take());
  }
  return { variant, meter, newTallies, dupTallies };
}

async function meterProcessor(
  setup: (meter: CapacityMeter) => Promise<ProcessorSetup>,
  receiver: ReceiverVariant,
  events: number,
  memoryMb: number,
  /**
   * Messages on the queue (more than `events` when copies are queued too); copies are drained one
   * message per batch, so a copy meets its event DONE rather than busy in the same batch.
   */
  messages = events,
): Promise<{ perEvent: UnitsPerEvent; setup: ProcessorSetup; meter: CapacityMeter }> {
  const meter = new CapacityMeter();
  const processor = await setup(meter);
  meter.take();
  const tallies: CapacityTally[] = [];
  await drainThroughProcessor(receiver.sqs, receiver.queueUrl, processor.handler, messages, memoryMb, {
    afterBatch: () => tallies.push(meter.take()),
    ...(messages > events ? { batchSize: 1 } : {}),
  });
  return { perEvent: perEvent(tallies, events), setup: processor, meter };
}

const sum = (a: UnitsPerEvent, b: UnitsPerEvent) => ({
  write: round3(a.write + b.write),
  read: round3(a.read + b.read),
});

export async function measureCapacity(
  endpoints: Endpoints,
  sink: EffectsSink,
  events: number,
  memory: { receiver: number; processor: number },
): Promise<CapacityResult> {
  const effects = { ledgerUrl: sink.urlOf('ledger'), mailerUrl: sink.urlOf('mailer') };
  const ours = await meterReceiver('ours', endpoints, events, memory.receiver);
  const s3Counter = new RequestCounter();
  const oursProcessor = await meterProcessor(
    (meter) => createOurProcessor(ours.variant, endpoints, { ...effects, meter, s3Counter }),
    ours.variant,
    events,
    memory.processor,
  );
  const s3Requests = s3Counter.take();
  const archived = oursProcessor.setup.archive;
  const objects = archived ? await bucketObjects(archived.s3, archived.bucket) : { count: 0, meanBytes: 0 };
  const powertools = await meterReceiver('powertools', endpoints, events, memory.receiver);
  const powertoolsProcessor = await meterProcessor(
    (meter) => createPowertoolsProcessor(endpoints, { ...effects, meter }),
    powertools.variant,
    events,
    memory.processor,
  );
  const bare = await meterReceiver('bare', endpoints, events, memory.receiver);
  const uncounted = await meterReceiver('oursUncounted', endpoints, events, memory.receiver);
  // Each event and its copy on the lean receiver's queue: our processor applies one, absorbs the other.
  const lean = await meterReceiver('oursLean', endpoints, events, memory.receiver);
  const leanProcessor = await meterProcessor(
    (meter) => createOurProcessor(lean.variant, endpoints, { ...effects, meter }),
    lean.variant,
    events,
    memory.processor,
    2 * events,
  );

  const oursNew = perEvent(ours.newTallies);
  const powertoolsNew = perEvent(powertools.newTallies);
  const [claims, payments, ptReceiver, ptPayments, ptProcessor] = await Promise.all([
    maxItemBytes(ours.variant.dynamo, ours.variant.tableName),
    maxItemBytes(ours.variant.dynamo, oursProcessor.setup.tables[0] ?? ''),
    maxItemBytes(powertools.variant.dynamo, powertools.variant.tableName),
    maxItemBytes(powertools.variant.dynamo, powertoolsProcessor.setup.tables[0] ?? ''),
    maxItemBytes(powertools.variant.dynamo, powertoolsProcessor.setup.tables[1] ?? ''),
  ]);
  for (const variant of [ours.variant, powertools.variant, bare.variant, uncounted.variant, lean.variant])
    closeVariant(variant);
  oursProcessor.setup.close();
  leanProcessor.setup.close();
  const leanNew = perEvent(lean.newTallies);
  powertoolsProcessor.setup.close();
  return {
    ours: {
      receiverNew: oursNew,
      receiverDuplicate: perEvent(ours.dupTallies),
      processorPerEvent: oursProcessor.perEvent,
      pipelineNew: sum(oursNew, oursProcessor.perEvent),
    },
    powertools: {
      receiverNew: powertoolsNew,
      receiverDuplicate: perEvent(powertools.dupTallies),
      processorPerEvent: powertoolsProcessor.perEvent,
      pipelineNew: sum(powertoolsNew, powertoolsProcessor.perEvent),
    },
    oursUncounted: {
      receiverNew: perEvent(uncounted.newTallies),
      receiverDuplicate: perEvent(uncounted.dupTallies),
    },
    oursLean: {
      receiverNew: leanNew,
      receiverDuplicate: perEvent(lean.dupTallies),
      processorPerEvent: leanProcessor.perEvent,
      pipelineNew: sum(leanNew, oursProcessor.perEvent),
      copyInProcessor: {
        write: round3(Math.max(0, leanProcessor.perEvent.write - oursProcessor.perEvent.write)),
        read: round3(Math.max(0, leanProcessor.perEvent.read - oursProcessor.perEvent.read)),
        operations: leanProcessor.perEvent.operations,
      },
    },
    bare: { receiverNew: perEvent(bare.newTallies), receiverDuplicate: perEvent(bare.dupTallies) },
    maxItemBytes: {
      oursClaim: claims,
      oursPayment: payments,
      powertoolsReceiverRecord: ptReceiver,
      powertoolsPayment: ptPayments,
      powertoolsProcessorRecord: ptProcessor,
    },
    archive: {
      enabled: archived !== undefined,
      requestsPerEvent: Object.fromEntries(
        Object.entries(s3Requests)
          .filter(([command]) => command !== 'CreateBucket')
          .map(([command, count]) => [command, round3(count / events)]),
      ),
      meanObjectBytes: objects.meanBytes,
      storedBytesPerEvent: Math.round((objects.count * objects.meanBytes) / events),
    },
    n: events,
  };
}

/** Runs fn with stdout/stderr swallowed and counted: what a function would ship to CloudWatch Logs. */
async function countOutputBytes(fn: () => Promise<void>): Promise<number> {
  let bytes = 0;
  const streams = [process.stdout, process.stderr];
  const originals = streams.map((s) => s.write);
  for (const stream of streams) {
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
      const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }) as typeof stream.write;
  }
  try {
    await fn();
  } finally {
    streams.forEach((s, i) => {
      s.write = originals[i] as typeof s.write;
    });
  }
  return bytes;
}

/** Log volume of our functions with their production log level (INFO) and EMF metrics on. */
export async function measureLogBytes(
  endpoints: Endpoints,
  sink: EffectsSink,
  events: number,
  memory: { receiver: number; processor: number },
): Promise<LogBytesResult> {
  const previous = process.env.POWERTOOLS_METRICS_DISABLED;
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  try {
    const variant = await createReceiverVariant('ours', endpoints, {
      secret: BENCH_SECRET,
      logLevel: 'INFO',
    });
    const processor = await createOurProcessor(variant, endpoints, {
      ledgerUrl: sink.urlOf('ledger'),
      mailerUrl: sink.urlOf('mailer'),
      logLevel: 'INFO',
    });
    const deliveries = Array.from({ length: events }, () => signedStripeEvent(BENCH_SECRET));
    const newBytes = await countOutputBytes(async () => {
      for (const d of deliveries) await deliver(variant, d, 'accepted', memory.receiver);
    });
    const dupBytes = await countOutputBytes(async () => {
      for (const d of deliveries) await deliver(variant, d, 'duplicate', memory.receiver);
    });
    const processorBytes = await countOutputBytes(async () => {
      await drainThroughProcessor(variant.sqs, variant.queueUrl, processor.handler, events, memory.processor);
    });
    closeVariant(variant);
    processor.close();
    return {
      receiverNew: Math.round(newBytes / events),
      receiverDuplicate: Math.round(dupBytes / events),
      processorPerMessage: Math.round(processorBytes / events),
      n: events,
    };
  } finally {
    if (previous === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
    else process.env.POWERTOOLS_METRICS_DISABLED = previous;
  }
}

/** All in-process measurements, in an order that keeps the latency run on a quiet machine. */
export async function runInProcess(
  endpoints: Endpoints,
  options: InProcessOptions,
): Promise<InProcessResult> {
  const progress = options.progress ?? (() => undefined);
  const memory = { receiver: options.receiverMemoryMb ?? 512, processor: options.processorMemoryMb ?? 512 };
  const { counts } = options;
  // Latency runs with metrics off and logs silent (their I/O is not the receiver's work to compare).
  const previous = process.env.POWERTOOLS_METRICS_DISABLED;
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  const sink = await startEffectsSink({ effects: EXAMPLE_EFFECTS });
  try {
    progress(`receiver latency: ${VARIANTS.join(', ')} (interleaved)`);
    const variants = {} as Record<VariantName, ReceiverVariant>;
    for (const name of VARIANTS)
      variants[name] = await createReceiverVariant(name, endpoints, { secret: BENCH_SECRET });
    const receiverLatencyMs = await measureReceiverLatency(variants, counts, memory.receiver, progress);

    progress('processor durations: ours and powertools, batches of up to 10');
    const effects = { ledgerUrl: sink.urlOf('ledger'), mailerUrl: sink.urlOf('mailer') };
    const ourProcessor = await createOurProcessor(variants.ours, endpoints, effects);
    const powertoolsProcessor = await createPowertoolsProcessor(endpoints, effects);
    // Batches of the two processors alternate, so machine noise hits both alike.
    const queued = Math.min(counts.processor, counts.latency + counts.warmup);
    const warmupRounds = queued >= 50 ? 2 : 0;
    const drains = { ours: emptyDrain(), powertools: emptyDrain() };
    const setups = { ours: ourProcessor, powertools: powertoolsProcessor };
    for (let round = 0, done = 0; done < queued; round++) {
      const batch = Math.min(10, queued - done);
      for (const name of ['ours', 'powertools'] as const) {
        const result = await drainThroughProcessor(
          variants[name].sqs,
          variants[name].queueUrl,
          setups[name].handler,
          batch,
          memory.processor,
        );
        if (round >= warmupRounds) drains[name] = mergeDrains(drains[name], result);
      }
      done += batch;
    }

    progress('DynamoDB capacity per event');
    const capacity = await measureCapacity(endpoints, sink, counts.capacity, memory);
    progress('log volume per event');
    const logBytes = await measureLogBytes(endpoints, sink, counts.logs, memory);
    for (const variant of Object.values(variants)) closeVariant(variant);
    ourProcessor.close();
    powertoolsProcessor.close();
    return {
      receiverLatencyMs,
      processorMs: { ours: durations(drains.ours), powertools: durations(drains.powertools) },
      capacity,
      logBytes,
    };
  } finally {
    await sink.stop();
    if (previous === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
    else process.env.POWERTOOLS_METRICS_DISABLED = previous;
  }
}
