/**
 * `npm start` with timing knobs that break a rule: one line naming the variables and the rule,
 * exit 1, before the synth (the rules between knobs need no template).
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = resolve(import.meta.dirname, '../..');

async function npmStart(env: Record<string, string>) {
  return promisify(execFile)('npm', ['start'], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', ...env },
    timeout: 60_000,
  }).then(
    () => undefined,
    (error: { code?: number; stdout?: string; stderr?: string }) => error,
  );
}

describe('npm start with timing knobs that break a rule', () => {
  it('refuses a lease longer than the visibility timeout in one line, before the synth', async () => {
    const started = Date.now();
    const failure = await npmStart({ CLAIM_LEASE_SECONDS: '20', LOCAL_VISIBILITY_TIMEOUT_SECONDS: '6' });
    expect(failure?.code).toBe(1);
    expect(failure?.stderr?.trim()).toBe(
      'npm start: CLAIM_LEASE_SECONDS (20 s) must not exceed LOCAL_VISIBILITY_TIMEOUT_SECONDS (6 s): a message SQS shows again after a worker died must find its lease run out',
    );
    expect(failure?.stdout).not.toContain('synthesizing');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('refuses a lease too short to outlive its functions', async () => {
    const failure = await npmStart({ CLAIM_LEASE_SECONDS: '3' });
    expect(failure?.code).toBe(1);
    expect(failure?.stderr?.trim()).toMatch(
      /^npm start: CLAIM_LEASE_SECONDS \(3 s\) is too short for a local lease: at least 6 s, so the lease outlives its function's timeout/,
    );
  });
});
