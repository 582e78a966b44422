/** The shape of bench/results.json, and the aims checked against the measurements. */
import type { BundleInfo, StartupResult } from './bundles.js';
import { type CostConfig, type CostResult, costPerMillion, type PipelineCostInputs } from './cost.js';
import type { CapacityResult, InProcessResult, LogBytesResult, ReceiverLatencyResult } from './inprocess.js';
import { type BreakEven, claimCheckBreakEven, type LargePayloadResult } from './large-payloads.js';
import type { LoadResult } from './load.js';
import { accessLogBytes, platformLogBytes } from './log-sources.js';
import { PRICES, PRICES_AS_OF, PRICES_REGION } from './prices.js';
import type { SweepCostResult } from './sweeper.js';

export interface MachineInfo {
  readonly cpuModel: string;
  readonly cpus: number;
  readonly memoryGiB: number;
  readonly platform: string;
  readonly node: string;
  readonly java: string;
  readonly packages: Readonly<Record<string, string>>;
  /** 1, 5 and 15 minute load averages at the start and the end: other work on the machine shows here. */
  readonly loadAverageStart?: readonly number[];
  readonly loadAverageEnd?: readonly number[];
}

export interface BenchSettings {
  readonly events: number;
  readonly duplicates: number;
  readonly concurrentShare: number;
  readonly concurrency: number;
  readonly latency: number;
  readonly warmup: number;
  readonly capacity: number;
  readonly processor: number;
  readonly logs: number;
  /** Deliveries per large-payload size. */
  readonly large: number;
  /** Finished claims in the sweep-cost table. */
  readonly sweep: number;
  readonly startupRuns: number;
  readonly seed: number;
  readonly quick: boolean;
}

export type BundleSummary = Omit<BundleInfo, 'entry' | 'environment'> & { readonly asset: string };

export interface Aim {
  readonly aim: string;
  readonly measured: string;
  readonly met: boolean;
}

export interface BenchResults {
  readonly date: string;
  readonly command: string;
  readonly durationSeconds: number;
  readonly machine: MachineInfo;
  readonly settings: BenchSettings;
  readonly receiverLatencyMs: ReceiverLatencyResult;
  readonly processorMs: InProcessResult['processorMs'];
  readonly capacity: CapacityResult;
  readonly logBytes: LogBytesResult;
  readonly bundles?: {
    readonly synthMs: number;
    readonly receiver: BundleSummary;
    readonly processor: BundleSummary;
    readonly batchSize: number;
    readonly maxBatchingWindowSeconds: number;
    readonly archiveRetentionDays: number | null;
    readonly startup?: StartupResult;
  };
  readonly load?: LoadResult;
  readonly largePayloads?: LargePayloadResult;
  readonly sweepCost?: SweepCostResult;
  readonly claimCheckBreakEven: BreakEven;
  readonly costPerMillion: CostResult;
  readonly prices: { readonly asOf: string; readonly region: string; readonly list: typeof PRICES };
  readonly aims: readonly Aim[];
}

export function checkAims(
  latency: ReceiverLatencyResult,
  capacity: CapacityResult,
  load: LoadResult | undefined,
  measured?: { readonly processorMs: InProcessResult['processorMs']; readonly cost: CostResult },
): Aim[] {
  const { newP50, duplicateP50 } = latency.ratios;
  const aims: Aim[] = [
    {
      aim: 'receiver p50 (new event) within 1.2x of the bare-I/O baseline',
      measured: `${newP50.oursOverBare}x (${latency.ours.new.p50} ms vs ${latency.bare.new.p50} ms); against the same three requests without framework ${newP50.oursOverBareOurIo}x; with markEnqueued: false ${newP50.leanOverBare}x (${latency.oursLean.new.p50} ms)`,
      met: newP50.oursOverBare <= 1.2,
    },
    {
      aim: 'receiver p50 (new event) below the Powertools variant',
      measured: `${latency.ours.new.p50} ms vs ${latency.powertools.new.p50} ms (${newP50.oursOverPowertools}x); with markEnqueued: false ${latency.oursLean.new.p50} ms (${newP50.leanOverPowertools}x)`,
      met: latency.ours.new.p50 < latency.powertools.new.p50,
    },
    {
      aim: 'one write unit per new event in the receiver',
      measured: `${capacity.ours.receiverNew.write} WRU (${capacity.ours.receiverNew.operations.join(' + ')}); with markEnqueued: false ${capacity.oursLean.receiverNew.write} WRU; the floor (bare) is ${capacity.bare.receiverNew.write}`,
      met: capacity.ours.receiverNew.write <= 1,
    },
    {
      aim: 'receiver p50 (duplicate) within 1.3x of the bare-I/O baseline',
      measured: `${duplicateP50.oursOverBare}x (${latency.ours.duplicate.p50} ms vs ${latency.bare.duplicate.p50} ms); with countDuplicates: false ${duplicateP50.uncountedOverBare}x (${latency.oursUncounted.duplicate.p50} ms)`,
      met: duplicateP50.oursOverBare <= 1.3,
    },
    {
      aim: 'one write unit per duplicate in the receiver',
      measured: `${capacity.ours.receiverDuplicate.write} WRU; with countDuplicates: false ${capacity.oursUncounted.receiverDuplicate.write} WRU`,
      met: capacity.ours.receiverDuplicate.write <= 1,
    },
    {
      aim: 'at most 5 write units per event in the processor (payment example)',
      measured: `${capacity.ours.processorPerEvent?.write ?? 'n/a'} WRU + ${capacity.ours.processorPerEvent?.read ?? 'n/a'} RRU (${(capacity.ours.processorPerEvent?.operations ?? []).join(', ')})`,
      met: (capacity.ours.processorPerEvent?.write ?? Number.POSITIVE_INFINITY) <= 5,
    },
  ];
  if (measured) {
    const { processorMs, cost } = measured;
    const perMessage = processorMs.ours.perMessage.p50 / processorMs.powertools.perMessage.p50;
    const ours = cost.ours.newEvents.totalDeployed;
    const powertools = cost.powertools.newEvents.totalDeployed;
    aims.push(
      {
        aim: 'processor time per message within 1.2x of the Powertools variant',
        measured: `${Math.round(perMessage * 1000) / 1000}x (p50 ${processorMs.ours.perMessage.p50} ms vs ${processorMs.powertools.perMessage.p50} ms)`,
        met: perMessage <= 1.2,
      },
      {
        aim: 'deployed cost per million new events at most $6.00 and below the Powertools variant',
        measured: `$${ours} vs $${powertools}; with markEnqueued: false $${cost.oursLean.newEvents.totalDeployed} (break-even at ${cost.oursLean.breakEvenCopiesPerEvent} early copies per event)`,
        met: ours <= 6 && ours < powertools,
      },
      {
        aim: 'deployed cost per million duplicates at most $2.30',
        measured: `$${cost.ours.duplicates.totalDeployed}; with countDuplicates: false $${cost.oursUncounted.duplicates.totalDeployed}; Powertools $${cost.powertools.duplicates.totalDeployed}`,
        met: cost.ours.duplicates.totalDeployed <= 2.3,
      },
    );
  }
  if (load) {
    aims.push({
      aim: 'zero lost and zero doubled under load',
      measured: `lost ${load.effects.lost}, doubled ${load.effects.doubled} of ${load.events} events (${load.claims.done} claims DONE)`,
      met: load.exactlyOnce,
    });
  }
  return aims;
}

export function costInputsFrom(
  inProcess: InProcessResult,
  memory: Pick<CostConfig, 'receiverMemoryMb' | 'processorMemoryMb'>,
): {
  ours: PipelineCostInputs;
  oursUncounted: PipelineCostInputs;
  oursLean: PipelineCostInputs;
  leanCopy: PipelineCostInputs;
  powertools: PipelineCostInputs;
} {
  const { receiverLatencyMs: latency, processorMs, capacity, logBytes } = inProcess;
  const zero = { write: 0, read: 0 };
  // The Powertools variant is assumed to log as much as ours does (its logging here is a stand-in).
  const logs = {
    logBytesNew: logBytes.receiverNew + logBytes.processorPerMessage,
    logBytesDuplicate: logBytes.receiverDuplicate,
    platformLogBytes: {
      receiver: platformLogBytes(memory.receiverMemoryMb),
      processor: platformLogBytes(memory.processorMemoryMb),
    },
    accessLogBytesPerRequest: accessLogBytes(),
  };
  const archive = capacity.archive.enabled
    ? {
        archivePutsPerEvent: capacity.archive.requestsPerEvent.PutObject ?? 0,
        archiveBytesPerEvent: capacity.archive.storedBytesPerEvent,
      }
    : {};
  const ours: PipelineCostInputs = {
    receiverNewMs: latency.billedMeanMs.ours.new,
    receiverDuplicateMs: latency.billedMeanMs.ours.duplicate,
    processorBatchMs: processorMs.ours.billedMeanBatchMs,
    processorBatchRecords: processorMs.ours.meanBatchSize,
    receiverNewUnits: capacity.ours.receiverNew,
    receiverDuplicateUnits: capacity.ours.receiverDuplicate,
    processorUnits: capacity.ours.processorPerEvent ?? zero,
    ...logs,
    ...archive,
  };
  // Only the duplicate path differs (the same logs are assumed: the delivery line is the same).
  const oursUncounted: PipelineCostInputs = {
    ...ours,
    receiverDuplicateMs: latency.billedMeanMs.oursUncounted.duplicate,
    receiverDuplicateUnits: capacity.oursUncounted.receiverDuplicate,
  };
  return {
    ours,
    oursUncounted,
    // The receiver's new path differs; its duplicates of a taken event are uncounted ones.
    oursLean: {
      ...oursUncounted,
      receiverNewMs: latency.billedMeanMs.oursLean.new,
      receiverNewUnits: capacity.oursLean.receiverNew,
    },
    // A copy goes through the pipeline like an event: the receiver's copy path, a queue message, a
    // share of a processor batch (priced at a whole message's time: an upper bound, absorbing is
    // shorter), its archive share, and what absorbing it writes.
    leanCopy: {
      ...ours,
      receiverNewMs: latency.billedMeanMs.oursLean.duplicate,
      receiverNewUnits: capacity.oursLean.receiverDuplicate,
      processorUnits: capacity.oursLean.copyInProcessor,
      logBytesNew: logBytes.receiverDuplicate + logBytes.processorPerMessage,
    },
    powertools: {
      receiverNewMs: latency.billedMeanMs.powertools.new,
      receiverDuplicateMs: latency.billedMeanMs.powertools.duplicate,
      processorBatchMs: processorMs.powertools.billedMeanBatchMs,
      processorBatchRecords: processorMs.powertools.meanBatchSize,
      receiverNewUnits: capacity.powertools.receiverNew,
      receiverDuplicateUnits: capacity.powertools.receiverDuplicate,
      processorUnits: capacity.powertools.processorPerEvent ?? zero,
      ...logs,
    },
  };
}

export interface ResultParts {
  readonly command: string;
  readonly startedMs: number;
  readonly machine: MachineInfo;
  readonly settings: BenchSettings;
  readonly inProcess: InProcessResult;
  readonly bundles?: BenchResults['bundles'];
  readonly load?: LoadResult;
  readonly largePayloads?: LargePayloadResult;
  readonly sweepCost?: SweepCostResult;
  readonly costConfig: CostConfig;
}

export function buildResults(parts: ResultParts): BenchResults {
  const { inProcess } = parts;
  const cost = costPerMillion(costInputsFrom(inProcess, parts.costConfig), parts.costConfig);
  return {
    date: new Date().toISOString(),
    command: parts.command,
    durationSeconds: Math.round((Date.now() - parts.startedMs) / 1000),
    machine: parts.machine,
    settings: parts.settings,
    receiverLatencyMs: inProcess.receiverLatencyMs,
    processorMs: inProcess.processorMs,
    capacity: inProcess.capacity,
    logBytes: inProcess.logBytes,
    ...(parts.bundles ? { bundles: parts.bundles } : {}),
    ...(parts.load ? { load: parts.load } : {}),
    ...(parts.largePayloads ? { largePayloads: parts.largePayloads } : {}),
    ...(parts.sweepCost ? { sweepCost: parts.sweepCost } : {}),
    claimCheckBreakEven: claimCheckBreakEven(),
    costPerMillion: cost,
    prices: { asOf: PRICES_AS_OF, region: PRICES_REGION, list: PRICES },
    aims: checkAims(inProcess.receiverLatencyMs, inProcess.capacity, parts.load, {
      processorMs: inProcess.processorMs,
      cost,
    }),
  };
}
