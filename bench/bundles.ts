/**
 * The Lambda bundles exactly as `cdk synth` builds them, their sizes, and how long a fresh Node
 * process takes to load each one (the part of a cold start that is ours; Lambda adds its own runtime
 * start and, for the code package, download and unzip).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import {
  assetDirectory,
  type CfnResource,
  handlerEntry,
  readSynthesizedStack,
  resourcesOfType,
} from '../local/template.js';
import { type LatencySummary, summarize } from './stats.js';

export const PROJECT_ROOT = resolve(import.meta.dirname, '..');

export type FunctionRole = 'receiver' | 'processor';

export interface BundleInfo {
  readonly logicalId: string;
  readonly entry: string;
  /** index.mjs as synthesized (minified, the AWS SDK bundled in). */
  readonly bytes: number;
  /** gzip -9 of index.mjs: about what the zipped code package weighs. */
  readonly gzipBytes: number;
  readonly sourceMapBytes: number;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  readonly runtime: string;
  readonly architecture: string;
  /** String-valued template environment (intrinsics left out). */
  readonly environment: Readonly<Record<string, string>>;
}

export interface SynthesizedApp {
  readonly outdir: string;
  readonly synthMs: number;
  readonly bundles: Readonly<Record<FunctionRole, BundleInfo>>;
  /** The processor's event source mapping. */
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  /** The payload archive bucket's lifecycle expiration, when the stack has one. */
  readonly archiveRetentionDays: number | undefined;
}

/** `cdk synth --quiet --output <outdir>`: offline, no AWS account needed. */
export function synthesize(outdir: string): number {
  const started = Date.now();
  const cdk = join(PROJECT_ROOT, 'node_modules', '.bin', 'cdk');
  const result = spawnSync(cdk, ['synth', '--quiet', '--output', outdir], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    env: { ...process.env, CDK_DISABLE_VERSION_CHECK: 'true' },
  });
  if (result.status !== 0) {
    throw new Error(`cdk synth failed (${result.status}):\n${result.stderr}\n${result.stdout}`);
  }
  return Date.now() - started;
}

function roleOf(logicalId: string): FunctionRole | undefined {
  if (/Receiver/.test(logicalId)) return 'receiver';
  if (/Processor/.test(logicalId)) return 'processor';
  return undefined;
}

function bundleInfo(outdir: string, logicalId: string, resource: CfnResource): BundleInfo {
  const props = resource.Properties ?? {};
  const { entry } = handlerEntry(
    assetDirectory(outdir, props.Code),
    String(props.Handler ?? 'index.handler'),
  );
  const code = readFileSync(entry);
  const variables =
    (props.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
  const environment = Object.fromEntries(
    Object.entries(variables).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
  let sourceMapBytes = 0;
  try {
    sourceMapBytes = statSync(`${entry}.map`).size;
  } catch {
    // no source map
  }
  return {
    logicalId,
    entry,
    bytes: code.length,
    gzipBytes: gzipSync(code, { level: 9 }).length,
    sourceMapBytes,
    memoryMb: Number(props.MemorySize ?? 128),
    timeoutSeconds: Number(props.Timeout ?? 3),
    runtime: String(props.Runtime ?? ''),
    architecture: ((props.Architectures as string[] | undefined) ?? ['x86_64']).join(','),
    environment,
  };
}

export function readSynthesizedApp(outdir: string, synthMs: number): SynthesizedApp {
  const { template } = readSynthesizedStack(outdir);
  const bundles: Partial<Record<FunctionRole, BundleInfo>> = {};
  for (const [id, resource] of resourcesOfType(template, 'AWS::Lambda::Function')) {
    const role = roleOf(id);
    if (role) bundles[role] = bundleInfo(outdir, id, resource);
  }
  if (!bundles.receiver || !bundles.processor)
    throw new Error(`no receiver/processor functions in ${outdir}`);
  const mapping = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')[0]?.[1].Properties ?? {};
  const expirations = resourcesOfType(template, 'AWS::S3::Bucket').flatMap(([, bucket]) => {
    const rules =
      (
        bucket.Properties?.LifecycleConfiguration as
          | { Rules?: Array<{ ExpirationInDays?: number }> }
          | undefined
      )?.Rules ?? [];
    return rules
      .map((rule) => rule.ExpirationInDays)
      .filter((days): days is number => typeof days === 'number');
  });
  return {
    outdir,
    synthMs,
    bundles: bundles as Record<FunctionRole, BundleInfo>,
    batchSize: Number(mapping.BatchSize ?? 10),
    maxBatchingWindowSeconds: Number(mapping.MaximumBatchingWindowInSeconds ?? 0),
    archiveRetentionDays: expirations.length ? Math.max(...expirations) : undefined,
  };
}

export interface StartupFigures {
  /** Time for `await import(bundle)` inside the process. */
  readonly importMs: LatencySummary;
  /** From the process's own start (performance.timeOrigin) to the handler being loaded. */
  readonly readyMs: LatencySummary;
  /** Spawn to exit, seen from the parent. */
  readonly processMs: LatencySummary;
}

export interface StartupResult {
  readonly runs: number;
  /** An empty `node` process, for reference. */
  readonly emptyNode: StartupFigures;
  /** With `--enable-source-maps` (the construct's `sourceMaps: true`). */
  readonly receiver: StartupFigures;
  readonly processor: StartupFigures;
  /** The same without it: as deployed by default. */
  readonly receiverNoSourceMaps: StartupFigures;
  readonly processorNoSourceMaps: StartupFigures;
  readonly method: string;
}

const PROBE = [
  'const started = process.hrtime.bigint();',
  'if (process.env.BENCH_ENTRY) await import(process.env.BENCH_ENTRY);',
  'const importMs = Number(process.hrtime.bigint() - started) / 1e6;',
  'process.stdout.write(JSON.stringify({ importMs, readyMs: performance.now() }));',
].join('\n');

interface Probe {
  readonly importMs: number;
  readonly readyMs: number;
  readonly processMs: number;
}

function probe(
  entry: string | undefined,
  environment: Readonly<Record<string, string>>,
  sourceMaps: boolean,
): Probe {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    ...environment,
    NODE_OPTIONS: sourceMaps ? '--enable-source-maps' : '',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...(entry ? { BENCH_ENTRY: pathToFileURL(entry).href } : {}),
  };
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', PROBE], { env, encoding: 'utf8' });
  const processMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`loading ${entry ?? 'node'} failed: ${result.stderr}`);
  const parsed = JSON.parse(result.stdout) as { importMs: number; readyMs: number };
  return { ...parsed, processMs };
}

function figures(probes: readonly Probe[]): StartupFigures {
  return {
    importMs: summarize(probes.map((p) => p.importMs)),
    readyMs: summarize(probes.map((p) => p.readyMs)),
    processMs: summarize(probes.map((p) => p.processMs)),
  };
}

/** Fresh processes, the five cases interleaved run by run so machine noise hits all alike. */
export function measureStartup(app: SynthesizedApp, runs: number): StartupResult {
  const { receiver, processor } = app.bundles;
  const cases = {
    emptyNode: () => probe(undefined, {}, false),
    receiver: () => probe(receiver.entry, receiver.environment, true),
    processor: () => probe(processor.entry, processor.environment, true),
    receiverNoSourceMaps: () => probe(receiver.entry, receiver.environment, false),
    processorNoSourceMaps: () => probe(processor.entry, processor.environment, false),
  };
  const names = Object.keys(cases) as Array<keyof typeof cases>;
  const results = Object.fromEntries(names.map((n) => [n, [] as Probe[]])) as Record<
    keyof typeof cases,
    Probe[]
  >;
  // One unmeasured round: the OS file cache, as on a warm Lambda host.
  for (const name of names) cases[name]();
  for (let run = 0; run < runs; run++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(run + i) % names.length] as keyof typeof cases;
      results[name].push(cases[name]());
    }
  }
  return {
    runs,
    emptyNode: figures(results.emptyNode),
    receiver: figures(results.receiver),
    processor: figures(results.processor),
    receiverNoSourceMaps: figures(results.receiverNoSourceMaps),
    processorNoSourceMaps: figures(results.processorNoSourceMaps),
    method:
      'node --input-type=module -e "await import(<bundle>)" in a fresh process with the template environment, ' +
      `${runs} runs per case, cases interleaved, one unmeasured round first; p50 is the median`,
  };
}
