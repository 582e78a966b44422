/**
 * Cost per million events in AWS from what the bench measured: request counts from the design,
 * Lambda durations measured in-process at the configured memory, DynamoDB units from the capacity
 * meter, SQS requests from the configured batching. Pure: the smoke test runs it on its own figures.
 */
import { PRICES, PRICES_AS_OF, PRICES_REGION } from './prices.js';
import { round3 } from './stats.js';

export interface PipelineCostInputs {
  /** Mean billed receiver duration (ms, rounded up per invocation). */
  readonly receiverNewMs: number;
  readonly receiverDuplicateMs: number;
  /** Mean billed processor duration per batch and the records per measured batch. */
  readonly processorBatchMs: number;
  readonly processorBatchRecords: number;
  readonly receiverNewUnits: { readonly write: number; readonly read: number };
  readonly receiverDuplicateUnits: { readonly write: number; readonly read: number };
  readonly processorUnits: { readonly write: number; readonly read: number };
  /** Bytes logged (JSON lines + EMF) per new event, per duplicate. */
  readonly logBytesNew?: number;
  readonly logBytesDuplicate?: number;
  /**
   * Lines written whatever the code logs: Lambda's START/END/REPORT per invocation of each function,
   * and the API's access log line per request (bench/log-sources.ts). @default none
   */
  readonly platformLogBytes?: { readonly receiver: number; readonly processor: number };
  readonly accessLogBytesPerRequest?: number;
  /** The processor's payload archive: S3 PUTs and bytes stored per event (0 when it archives nothing). */
  readonly archivePutsPerEvent?: number;
  readonly archiveBytesPerEvent?: number;
}

export interface CostConfig {
  readonly receiverMemoryMb: number;
  readonly processorMemoryMb: number;
  /** The event source mapping's batch size (processor invocations and SQS receives per message). */
  readonly batchSize: number;
  /** Share of deliveries that are duplicates, for the blended figure. */
  readonly duplicateShare: number;
  /** How long archived payloads are kept (the bucket's lifecycle rule). */
  readonly archiveRetentionDays: number;
}

export interface CostLines {
  readonly apiGateway: number;
  readonly lambdaReceiver: number;
  readonly lambdaProcessor: number;
  readonly dynamoDb: number;
  readonly sqs: number;
  /** The four services the issue names. */
  readonly total: number;
  /** The processor's payload archive: S3 PUTs and storage for the retention period. */
  readonly s3Archive: number;
  /** CloudWatch Logs ingestion of what the functions log. */
  readonly cloudWatchLogs: number;
  /** Everything above: what the deployed stack costs per million. */
  readonly totalDeployed: number;
}

export interface PipelineCost {
  /** One million new events, each delivered once. */
  readonly newEvents: CostLines;
  /** One million duplicate deliveries (answered 200, nothing queued). */
  readonly duplicates: CostLines;
  /** One million events plus `duplicateShare` x one million duplicate deliveries. */
  readonly withDuplicates: CostLines;
}

export interface CostResult {
  readonly currency: 'USD';
  readonly region: string;
  readonly pricesAsOf: string;
  readonly ours: PipelineCost;
  /** Ours with `countDuplicates: false`: only its duplicates differ. */
  readonly oursUncounted: PipelineCost;
  /**
   * Ours with `countDuplicates: false` and `markEnqueued: false`. Its `duplicates` are those that
   * find the event already taken by a processor (as uncounted ones); `copies` are those that arrive
   * before, each sending a copy the processor absorbs.
   */
  readonly oursLean: PipelineCost & {
    readonly copies: CostLines;
    /**
     * Copies per event (duplicates arriving before a processor takes the event) at which dropping
     * the mark stops saving: (marked new - lean new) / (copy - uncounted duplicate), deployed.
     */
    readonly breakEvenCopiesPerEvent: number;
  };
  readonly powertools: PipelineCost;
  readonly assumptions: readonly string[];
}

const MILLION = 1e6;
const GB = 1024 ** 3;
/** S3 bills storage per GB-month; a month is taken as 30 days. */
const DAYS_PER_MONTH = 30;
const money = (usd: number): number => Math.round(usd * 10_000) / 10_000;

function lines(parts: Omit<CostLines, 'total' | 'totalDeployed'>): CostLines {
  const total = parts.apiGateway + parts.lambdaReceiver + parts.lambdaProcessor + parts.dynamoDb + parts.sqs;
  return {
    apiGateway: money(parts.apiGateway),
    lambdaReceiver: money(parts.lambdaReceiver),
    lambdaProcessor: money(parts.lambdaProcessor),
    dynamoDb: money(parts.dynamoDb),
    sqs: money(parts.sqs),
    total: money(total),
    s3Archive: money(parts.s3Archive),
    cloudWatchLogs: money(parts.cloudWatchLogs),
    totalDeployed: money(total + parts.s3Archive + parts.cloudWatchLogs),
  };
}

function add(a: CostLines, b: CostLines, weight: number): CostLines {
  return lines({
    apiGateway: a.apiGateway + weight * b.apiGateway,
    lambdaReceiver: a.lambdaReceiver + weight * b.lambdaReceiver,
    lambdaProcessor: a.lambdaProcessor + weight * b.lambdaProcessor,
    dynamoDb: a.dynamoDb + weight * b.dynamoDb,
    sqs: a.sqs + weight * b.sqs,
    s3Archive: a.s3Archive + weight * b.s3Archive,
    cloudWatchLogs: a.cloudWatchLogs + weight * b.cloudWatchLogs,
  });
}

const lambdaCost = (ms: number, memoryMb: number): number =>
  (ms / 1000) * (memoryMb / 1024) * PRICES.lambdaArmGbSecond.usd;
const dynamoCost = (units: { write: number; read: number }): number =>
  units.write * PRICES.dynamoDbWriteRequestUnit.usd + units.read * PRICES.dynamoDbReadRequestUnit.usd;

/** SQS requests per event: one SendMessage, and one ReceiveMessage + one DeleteMessageBatch per batch. */
export const sqsRequestsPerEvent = (batchSize: number): number => 1 + 2 / batchSize;

export function pipelineCost(inputs: PipelineCostInputs, config: CostConfig): PipelineCost {
  const processorMsPerEvent = inputs.processorBatchMs / inputs.processorBatchRecords;
  const logCost = (bytesPerEvent: number) =>
    ((MILLION * bytesPerEvent) / GB) * PRICES.cloudWatchLogsIngestedGb.usd;
  // Every delivery: one receiver invocation and one access log line; every event: a share of a batch.
  const perDelivery = (inputs.platformLogBytes?.receiver ?? 0) + (inputs.accessLogBytesPerRequest ?? 0);
  const perEvent = perDelivery + (inputs.platformLogBytes?.processor ?? 0) / config.batchSize;
  const newEvents = lines({
    apiGateway: MILLION * PRICES.apiGatewayHttpRequest.usd,
    lambdaReceiver:
      MILLION * (PRICES.lambdaRequest.usd + lambdaCost(inputs.receiverNewMs, config.receiverMemoryMb)),
    lambdaProcessor:
      MILLION *
      (PRICES.lambdaRequest.usd / config.batchSize +
        lambdaCost(processorMsPerEvent, config.processorMemoryMb)),
    dynamoDb: MILLION * (dynamoCost(inputs.receiverNewUnits) + dynamoCost(inputs.processorUnits)),
    sqs: MILLION * sqsRequestsPerEvent(config.batchSize) * PRICES.sqsStandardRequest.usd,
    s3Archive:
      MILLION * (inputs.archivePutsPerEvent ?? 0) * PRICES.s3PutRequest.usd +
      ((MILLION * (inputs.archiveBytesPerEvent ?? 0)) / GB) *
        (config.archiveRetentionDays / DAYS_PER_MONTH) *
        PRICES.s3StandardGbMonth.usd,
    cloudWatchLogs: logCost((inputs.logBytesNew ?? 0) + perEvent),
  });
  const duplicates = lines({
    apiGateway: MILLION * PRICES.apiGatewayHttpRequest.usd,
    lambdaReceiver:
      MILLION * (PRICES.lambdaRequest.usd + lambdaCost(inputs.receiverDuplicateMs, config.receiverMemoryMb)),
    lambdaProcessor: 0,
    dynamoDb: MILLION * dynamoCost(inputs.receiverDuplicateUnits),
    sqs: 0,
    s3Archive: 0,
    cloudWatchLogs: logCost((inputs.logBytesDuplicate ?? 0) + perDelivery),
  });
  return { newEvents, duplicates, withDuplicates: add(newEvents, duplicates, config.duplicateShare) };
}

export function costAssumptions(config: CostConfig): string[] {
  return [
    `${PRICES_REGION} list prices as of ${PRICES_AS_OF} (bench/prices.ts), first volume tier, no free tier, USD`,
    `Lambda arm64; receiver ${config.receiverMemoryMb} MB, processor ${config.processorMemoryMb} MB (from the synthesized template); durations measured in-process on this machine against DynamoDB Local and the SQS emulator, rounded up to 1 ms per invocation: Lambda's CPU share at this memory and real DynamoDB/SQS latencies differ`,
    `processor: one invocation per full batch of ${config.batchSize}; its duration per event is the measured batch duration divided by its records; at low traffic the 1 s batching window gathers smaller batches (more invocations)`,
    `SQS: ${round3(sqsRequestsPerEvent(config.batchSize))} requests per event = 1 SendMessage + (1 ReceiveMessage + 1 DeleteMessageBatch) / ${config.batchSize}; messages are < 64 KB (one request each); the event source mapping's idle long polls are a fixed monthly cost, not per event`,
    'DynamoDB on demand: write/read request units per event from the capacity meter (failed conditional writes and transactions modelled as AWS bills them, see bench/capacity.ts); storage and TTL deletes (free) not included',
    'API Gateway HTTP API: one request per delivery (bodies < 512 KB); data transfer out (small JSON answers) not included',
    `S3 payload archive (ours, as deployed): the measured PUTs per event and object size, kept ${config.archiveRetentionDays} days (the bucket's lifecycle rule) in S3 Standard; the Powertools variant archives nothing`,
    "CloudWatch Logs: bytes our code writes per delivery/message at INFO with EMF metrics on (the Powertools variant is assumed to log as much), plus Lambda's START/END/REPORT lines per invocation (the processor's shared by a batch) and the API's access log line per request, for both variants (bench/log-sources.ts); priced on the message bytes; custom-metric charges are monthly, not per event (docs/performance.md)",
    '"total" is the four services the issue names; "deployed" adds the archive and the logs',
    `blended figure: one million events plus ${config.duplicateShare} x one million duplicate deliveries`,
  ];
}

export function costPerMillion(
  inputs: {
    readonly ours: PipelineCostInputs;
    readonly oursUncounted: PipelineCostInputs;
    readonly oursLean: PipelineCostInputs;
    /** A copy, priced as an event: the lean receiver's copy path, the processor absorbing it. */
    readonly leanCopy: PipelineCostInputs;
    readonly powertools: PipelineCostInputs;
  },
  config: CostConfig,
): CostResult {
  const ours = pipelineCost(inputs.ours, config);
  const uncounted = pipelineCost(inputs.oursUncounted, config);
  const lean = pipelineCost(inputs.oursLean, config);
  const copies = pipelineCost(inputs.leanCopy, config).newEvents;
  const saved = ours.newEvents.totalDeployed - lean.newEvents.totalDeployed;
  const extra = copies.totalDeployed - uncounted.duplicates.totalDeployed;
  return {
    currency: 'USD',
    region: PRICES_REGION,
    pricesAsOf: PRICES_AS_OF,
    ours,
    oursUncounted: uncounted,
    oursLean: {
      ...lean,
      copies,
      breakEvenCopiesPerEvent: extra > 0 ? round3(saved / extra) : Number.POSITIVE_INFINITY,
    },
    powertools: pipelineCost(inputs.powertools, config),
    assumptions: costAssumptions(config),
  };
}
