/**
 * `npm run soak`: a workload, a fault schedule and a checker, against `npm start` of this repository
 * (or `--against DIR`, another checkout with its own node_modules: an older commit's worktree).
 * docs/soak.md says what it does and what it found.
 *
 *   npm run soak -- [--events N] [--seed S] [--rate R] [--fault-rate P] [--against DIR] [--json FILE] [--keep yes]
 *
 * Exit status: 0 no violation, 1 violations (each printed with what reproduces it), 2 usage.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { webhookUrlOutputId } from '../lambdas/shared/naming.js';
import { localSecrets } from '../local/dev-secrets.js';
import { check, type Item } from './checker.js';
import { startEffectServers } from './effects-server.js';
import { planFaults } from './faults.js';
import { type StackReader, stackReader } from './observe.js';
import { webhooksCli } from './operator.js';
import { seededRandom } from './random.js';
import { type SoakFacts, soakCounts, soakReport } from './report.js';
import { createSender } from './sender.js';
import { startSoakStack } from './stack.js';
import { planWorkload, SOAK_PROVIDERS, type SoakProvider } from './workload.js';

const REPO_ROOT = resolve(import.meta.dirname, '..');

export interface SoakOptions {
  readonly events: number;
  readonly seed: string;
  readonly rate: number;
  readonly faultRate: number;
  /** The checkout to run. @default this repository */
  readonly against: string;
  readonly json?: string;
  /** Keep the stack's log and cdk.out even when nothing is wrong. */
  readonly keep?: boolean;
  /** How long to wait for the stack to drain after the last send. @default 240 s */
  readonly drainTimeoutMs?: number;
  readonly log?: (line: string) => void;
}

/** The knobs of a soak run: leases and visibility as short as the rules allow, a busy sweeper. */
export const SOAK_KNOBS = {
  CLAIM_LEASE_SECONDS: '6',
  LOCAL_VISIBILITY_TIMEOUT_SECONDS: '6',
  MAX_RECEIVE_COUNT: '3',
  LOCAL_SWEEP_INTERVAL_SECONDS: '2',
  SWEEP_PROCESSING_GRACE_SECONDS: '8',
  // The sweeper re-sends what waits longer than this (a claim whose message went to the DLQ, or one
  // behind the backlog: an extra copy, which must be absorbed).
  SWEEP_RECEIVED_GRACE_SECONDS: '10',
  SWEEP_ENQUEUED_STALE_SECONDS: '60',
} as const;

export class SoakUsageError extends Error {}

export function parseSoakArgs(argv: readonly string[]): SoakOptions {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--')) throw new SoakUsageError(`unexpected argument ${arg}`);
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('--')) throw new SoakUsageError(`${arg} needs a value`);
    flags.set(arg.slice(2), value);
    i++;
  }
  for (const name of flags.keys()) {
    if (!['events', 'seed', 'rate', 'fault-rate', 'against', 'json', 'keep'].includes(name))
      throw new SoakUsageError(`unknown option --${name}`);
  }
  const number = (name: string, fallback: number, min: number, max: number) => {
    const raw = flags.get(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max)
      throw new SoakUsageError(`--${name} must be a number from ${min} to ${max}`);
    return n;
  };
  const json = flags.get('json');
  return {
    events: Math.round(number('events', 1000, 10, 100_000)),
    seed: flags.get('seed') ?? randomBytes(4).toString('hex'),
    rate: number('rate', 25, 1, 500),
    faultRate: number('fault-rate', 0.15, 0, 1),
    against: resolve(flags.get('against') ?? REPO_ROOT),
    ...(json === undefined ? {} : { json: resolve(json) }),
    keep: flags.get('keep') === 'yes',
  };
}

/** The fault points the checkout knows: its FAULT_POINT_NAMES, and effect points if it has them. */
async function knownFaultPoints(dir: string): Promise<Set<string>> {
  const faults = (await import(pathToFileURL(join(dir, 'lambdas', 'shared', 'faults.ts')).href)) as {
    FAULT_POINT_NAMES: readonly string[];
    effectFaultPoint?: unknown;
  };
  const known = new Set(faults.FAULT_POINT_NAMES);
  if (typeof faults.effectFaultPoint === 'function') known.add('processor.before<Effect>');
  return known;
}

function describeCheckout(dir: string): string {
  try {
    const commit = execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
    }).trim();
    return dir === REPO_ROOT ? `this checkout (${commit})` : `${dir} (${commit})`;
  } catch {
    return dir;
  }
}

/**
 * Polls every 2 s until the stack is still: the queue empty and the unfinished claims (not DONE or
 * FAILED, and not reported stuck) the same, three times running. `finished` also asks that none is
 * left unfinished. False when the deadline comes first.
 */
async function drain(reader: StackReader, timeoutMs: number, finished: boolean): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let quiet = 0;
  let last = '';
  while (Date.now() < deadline) {
    const [claims, depth] = await Promise.all([reader.claims(), reader.queueDepth()]);
    const busy = claims
      .filter((c) => c.status !== 'DONE' && c.status !== 'FAILED' && c.stuckAt === undefined)
      .map((c) => `${String(c.pk)} ${String(c.status)} ${String(c.leaseToken)}`)
      .sort()
      .join('\n');
    const still = depth === 0 && busy === last && (!finished || busy === '');
    quiet = still ? quiet + 1 : 0;
    last = busy;
    if (quiet >= 3) return true;
    await new Promise((r) => setTimeout(r, 2_000));
  }
  return false;
}

export interface SoakResult {
  readonly violations: number;
  readonly report: string;
  readonly facts: SoakFacts;
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const log = options.log ?? (() => {});
  const started = Date.now();
  const random = seededRandom(options.seed);
  const workload = planWorkload(options.seed, random.fork('workload'), {
    events: options.events,
    rate: options.rate,
  });
  const known = await knownFaultPoints(options.against);
  const faults = planFaults(random.fork('faults'), workload, {
    knownPoints: known,
    maxReceiveCount: Number(SOAK_KNOBS.MAX_RECEIVE_COUNT),
    faultRate: options.faultRate,
    adapters: ['ledger', 'mailer'],
  });
  const target = describeCheckout(options.against);
  log(
    `soak: ${workload.events.length} events (${workload.sends.length} sends) over about ${Math.round(workload.durationMs / 1000)} s, ` +
      `${faults.processFaults.length} with a fault point, seed ${options.seed}, against ${target}`,
  );
  const effects = await startEffectServers({ seed: options.seed, adapters: { ledger: true, mailer: false } });
  const workDir = mkdtempSync(join(tmpdir(), 'webhooks-soak-'));
  log(`soak: starting the stack (log: ${join(workDir, 'stack.log')})`);
  const stack = await startSoakStack({
    dir: options.against,
    workDir,
    effectUrls: effects.urls,
    env: { ...SOAK_KNOBS, FAULT_POINTS: faults.faultPoints },
  }).catch(async (error) => {
    await effects.stop();
    throw error;
  });
  const reader = stackReader(stack.outputs);
  const cli = webhooksCli(options.against, stack.env);
  try {
    const urls = Object.fromEntries(
      SOAK_PROVIDERS.map((p) => [p, stack.outputs[webhookUrlOutputId(p)] ?? '']),
    ) as Record<SoakProvider, string>;
    const secrets = Object.fromEntries(
      SOAK_PROVIDERS.map((p) => [p, localSecrets(p, stack.env)[0] ?? '']),
    ) as Record<SoakProvider, string>;
    const sender = createSender({ urls, secrets });
    const startedAt = Date.now();
    log('soak: sending');
    const firstSendAt = new Map<number, number>();
    for (const send of workload.sends)
      if (!firstSendAt.has(send.event)) firstSendAt.set(send.event, send.atMs);

    const operatorWork: Promise<unknown>[] = [];
    const actions = (async () => {
      for (const { atMs, action } of faults.actions) {
        const wait = startedAt + atMs - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (action.kind === 'outage') operatorWork.push(effects.outage(action.adapter, action.ms));
        else if (action.kind === 'redrive') operatorWork.push(cli.run(['dlq', 'redrive', '--wait', '0']));
        else {
          const event = workload.events[action.event];
          if (event === undefined || (firstSendAt.get(event.index) ?? 0) > atMs) continue;
          operatorWork.push(cli.run(['replay', event.provider, event.eventId, '--force', '--wait', '0']));
        }
      }
    })();
    await Promise.all([sender.run(workload.sends, workload.events, startedAt), actions]);
    await Promise.all(operatorWork);
    log(
      `soak: sent ${sender.results().length} deliveries in ${Math.round((Date.now() - startedAt) / 1000)} s; draining`,
    );

    effects.setCalm(true);
    const drainMs = options.drainTimeoutMs ?? 240_000;
    // Until nothing moves (a claim whose message is in the DLQ waits for the operator)...
    await drain(reader, drainMs, false);
    // ...whose last move is to send whatever the DLQ holds back once more, the faults spent.
    await cli.run(['dlq', 'redrive', '--wait', '0']);
    const drained = await drain(reader, drainMs, true);

    const [claims, rows, dlqKeys] = await Promise.all([reader.claims(), reader.rows(), reader.dlqKeys()]);
    const observation = {
      responses: sender.results(),
      claims,
      rows,
      dlqKeys,
      effects: effects.calls(),
    };
    const result = check(workload, observation);
    const facts: SoakFacts = {
      workload,
      faults,
      responses: observation.responses,
      effects: observation.effects,
      outages: effects.outages(),
      operator: cli.runs(),
      claims,
      check: result,
      log: stack.log(),
      target,
      drained,
      elapsedMs: Date.now() - started,
      command: `npm run soak -- --events ${options.events} --seed ${options.seed} --rate ${options.rate} --fault-rate ${options.faultRate}${options.against === REPO_ROOT ? '' : ` --against ${options.against}`}`,
    };
    const report = soakReport(facts);
    if (options.json) writeFileSync(options.json, `${JSON.stringify(jsonReport(facts), null, 2)}\n`);
    const violations = result.violations.length + (drained ? 0 : 1);
    if (violations === 0 && !options.keep) rmSync(workDir, { recursive: true, force: true });
    else log(`soak: the stack's log and cdk.out are kept in ${workDir}`);
    return { violations, report, facts };
  } finally {
    reader.close();
    await stack.stop();
    await effects.stop();
  }
}

function jsonReport(facts: SoakFacts) {
  const counts = soakCounts(facts);
  return {
    target: facts.target,
    seed: facts.workload.seed,
    events: facts.workload.events.length,
    deliveries: facts.responses.length,
    elapsedSeconds: Math.round(facts.elapsedMs / 1000),
    drained: facts.drained,
    perProvider: counts.perProvider,
    perFault: counts.perFault,
    perEffectFault: counts.perEffectFault,
    outages: Object.fromEntries(counts.outages),
    operator: Object.fromEntries(counts.operator),
    claims: Object.fromEntries(counts.claims),
    failedBy: Object.fromEntries(counts.failedBy),
    failed: facts.claims
      .filter((c) => c.status === 'FAILED')
      .slice(0, 100)
      .map((c) => ({ key: c.pk, eventType: c.eventType, lastError: c.lastError })),
    summary: facts.check.summary,
    violations: facts.check.violations.map((v) => ({
      ...v,
      claim: v.claim as Item | undefined,
      eventId: v.event === undefined ? undefined : facts.workload.events[v.event]?.eventId,
    })),
    command: facts.command,
  };
}

async function main(): Promise<void> {
  let options: SoakOptions;
  try {
    options = parseSoakArgs(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof SoakUsageError)) throw error;
    console.error(
      `npm run soak: ${error.message}\nusage: npm run soak -- [--events N] [--seed S] [--rate R] [--fault-rate P] [--against DIR] [--json FILE] [--keep yes]`,
    );
    process.exit(2);
  }
  const result = await runSoak({ ...options, log: (line) => console.log(line) });
  console.log(`\n${result.report}`);
  process.exit(result.violations === 0 ? 0 : 1);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  main().catch((error) => {
    console.error(`npm run soak failed: ${(error as Error)?.stack ?? String(error)}`);
    process.exit(1);
  });
}
