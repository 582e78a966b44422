/**
 * The soak's short variant, as a user runs it: `npm run soak` with a few hundred events and a fixed
 * seed, against `npm start` of this checkout, with every kind of fault on. It must find no
 * violation, and the faults must have happened (a soak whose faults never fire proves nothing).
 * The long run and what the soak found on older commits: docs/soak.md.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/local-stack-process.js';

interface SoakJson {
  drained: boolean;
  events: number;
  perFault: { point: string; events: number; fired: number }[];
  perEffectFault: { adapter: string; fault: string; calls: number }[];
  outages: Record<string, number>;
  operator: Record<string, number>;
  summary: {
    accepted: number;
    done: number;
    effects: Record<string, { events: number; acted: number; inDoubt: number }>;
  };
  violations: unknown[];
}

it('finds no violation in 250 events with faults everywhere (npm run soak, fixed seed)', {
  timeout: 300_000,
}, async () => {
  const json = join(mkdtempSync(join(tmpdir(), 'webhooks-soak-test-')), 'soak.json');
  const run = await new Promise<{ code: number; out: string }>((resolve) => {
    execFile(
      'npm',
      ['run', 'soak', '--', '--events', '250', '--seed', 'npm-test-6', '--json', json],
      { cwd: REPO_ROOT, timeout: 280_000, maxBuffer: 32 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : Number(error.code ?? -1), out: `${stdout}\n${stderr}` }),
    );
  });
  expect(run.code, run.out.slice(-6000)).toBe(0);
  const report = JSON.parse(readFileSync(json, 'utf8')) as SoakJson;
  expect(report.violations).toEqual([]);
  expect(report.drained).toBe(true);
  expect(report.summary.accepted).toBe(report.events);
  expect(report.summary.done).toBe(report.events);

  // The faults happened: process faults of several kinds, effects misbehaving, outages, an operator.
  const fired = report.perFault.filter((f) => f.fired > 0).map((f) => f.point);
  expect(fired).toEqual(
    expect.arrayContaining([
      'receiver.afterClaim',
      'processor.beforeClaim',
      'processor.afterClaim',
      'processor.crashAfterClaim',
    ]),
  );
  expect(fired.some((point) => /^processor\.(before|after)(Ledger|Receipt)/.test(point))).toBe(true);
  // Effect faults of most kinds met calls (which ones a short run reaches depends on the races), and
  // the seed is picked so the mailer times out after acting (the headline case).
  const faults = new Set(report.perEffectFault.filter((f) => f.fault !== 'none').map((f) => f.fault));
  expect(faults.size, JSON.stringify(report.perEffectFault)).toBeGreaterThanOrEqual(4);
  const mailer = report.perEffectFault.filter((f) => f.adapter === 'mailer').map((f) => f.fault);
  expect(mailer, JSON.stringify(report.perEffectFault)).toContain('slow');
  expect(Object.values(report.outages).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  expect(report.operator['dlq redrive exit 0']).toBeGreaterThan(0);
  // Receipts: each succeeded payment sent one, or reported it in doubt.
  const receipt = report.summary.effects.receipt;
  expect(receipt?.events).toBeGreaterThan(10);
  expect(receipt?.inDoubt).toBeGreaterThan(0);
});
