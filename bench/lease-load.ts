/**
 * `npm run bench:lease`: the load through `npm start` with the shortest local lease, repeated, to
 * look for doubled effects where a worker's lease is tight (issue 31's reproduction: a worker whose
 * lease ran out mid-effect was taken over and both sent a receipt). Each run starts a fresh local
 * stack with `CLAIM_LEASE_SECONDS` and `LOCAL_VISIBILITY_TIMEOUT_SECONDS` set to `--lease`, sends
 * `--events` signed payments (with duplicates), and counts ledger postings, receipts and claims in
 * doubt. Exits 1 when any run doubled an effect or left a claim not DONE.
 *
 *   npm run bench:lease -- --runs 5 --lease 6 --events 400
 *   npm run bench:lease -- --runs 1 --lease 6 --mailer-delay 2500   (every receipt answered late)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { synthesize } from './bundles.js';
import { runLoad, startLocalStack } from './load.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    lease: { type: 'string', default: '4' },
    events: { type: 'string', default: '400' },
    concurrency: { type: 'string', default: '32' },
    /** The mailer acts, then answers this late (ms), on every call (the effects sink's `slow` fault). */
    'mailer-delay': { type: 'string', default: '0' },
  },
  strict: true,
});
const positive = (name: string, raw: string | undefined): number => {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
  return value;
};
const runs = positive('runs', values.runs);
const lease = positive('lease', values.lease);
const events = positive('events', values.events);
const concurrency = positive('concurrency', values.concurrency);
const mailerDelayMs = Number(values['mailer-delay']);
if (!Number.isInteger(mailerDelayMs) || mailerDelayMs < 0)
  throw new Error('--mailer-delay must be a non-negative integer (ms)');
const log = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<number> {
  const outdir = mkdtempSync(join(tmpdir(), 'webhooks-lease-load-'));
  try {
    log(`synthesizing into ${outdir}...`);
    synthesize(outdir);
    let failed = 0;
    for (let run = 1; run <= runs; run++) {
      const stack = await startLocalStack(outdir, {
        knobs: { CLAIM_LEASE_SECONDS: String(lease), LOCAL_VISIBILITY_TIMEOUT_SECONDS: String(lease) },
      });
      try {
        if (mailerDelayMs > 0) {
          const answer = await fetch(`${stack.outputs.LocalEffectsUrl}/_faults/mailer`, {
            method: 'PUT',
            body: JSON.stringify({ kind: 'slow', delayMs: mailerDelayMs, count: '*' }),
          });
          if (!answer.ok)
            throw new Error(`the effects sink refused the mailer fault: ${await answer.text()}`);
        }
        const result = await runLoad(stack, {
          events,
          duplicates: 0.1,
          concurrentShare: 0.5,
          concurrency,
          seed: run,
          settleTimeoutMs: 180_000,
          progress: () => undefined,
        });
        const e = result.effects;
        const ok = e.doubled === 0 && result.claims.done === events;
        if (!ok) failed++;
        process.stdout.write(
          `run ${run}/${runs} (lease ${lease} s${mailerDelayMs ? `, mailer answers after ${mailerDelayMs} ms` : ''}): ${events} payments, ${e.ledgerPostings} ledger postings (+${e.ledgerReplays} replays), ${e.receipts} receipts; doubled ${e.doubled}, lost ${e.lost}, in doubt ${result.claims.inDoubt}; DONE ${result.claims.done}/${events}, DLQ ${result.deadLetterMessages} ${ok ? 'ok' : 'FAILED'}\n`,
        );
        if (e.examples.length > 0) process.stdout.write(`  ${e.examples.join('\n  ')}\n`);
      } finally {
        await stack.stop();
      }
    }
    process.stdout.write(
      `${runs - failed} of ${runs} runs without a doubled effect or an unfinished claim\n`,
    );
    return failed === 0 ? 0 : 1;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    log(`bench:lease failed: ${(error as Error)?.stack ?? String(error)}`);
    process.exit(1);
  },
);
