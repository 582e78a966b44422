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
): Aim[] {
  const { newP50 } = latency.ratios;
  const aims: Aim[] = [
    {
      aim: 'receiver p50 (new event) within 1.2x of the bare-I/O baseline',
      measured: `${newP50.oursOverBare}x (${latency.ours.new.p50} ms vs ${latency.bare.new.p50} ms); against the same three requests without framework ${newP50.oursOverBareOurIo}x`,
      met: newP50.oursOverBare <= 1.2,
    },
    {
      aim: 'receiver p50 (new event) below the Powertools variant',
      measured: `${latency.ours.new.p50} ms vs ${latency.powertools.new.p50} ms (${newP50.oursOverPowertools}x)`,
      met: latency.ours.new.p50 < latency.powertools.new.p50,
    },
    {
      aim: 'one write unit per new event in the receiver',
      measured: `${capacity.ours.receiverNew.write} WRU (${capacity.ours.receiverNew.operations.join(' + ')}); the floor (bare) is ${capacity.bare.receiverNew.write}`,
      met: capacity.ours.receiverNew.write <= 1,
    },
  ];
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
  return {
    ours: {
      receiverNewMs: latency.billedMeanMs.ours.new,
      receiverDuplicateMs: latency.billedMeanMs.ours.duplicate,
      processorBatchMs: processorMs.ours.billedMeanBatchMs,
      processorBatchRecords: processorMs.ours.meanBatchSize,
      receiverNewUnits: capacity.ours.receiverNew,
      receiverDuplicateUnits: capacity.ours.receiverDuplicate,
      processorUnits: capacity.ours.processorPerEvent ?? zero,
      ...logs,
      ...archive,
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
    costPerMillion: costPerMillion(costInputsFrom(inProcess, parts.costConfig), parts.costConfig),
    prices: { asOf: PRICES_AS_OF, region: PRICES_REGION, list: PRICES },
    aims: checkAims(inProcess.receiverLatencyMs, inProcess.capacity, parts.load),
  };
}
