/**
 * How `npm start` ends (local/shutdown.ts), on real processes: a signal, its parent's death (a
 * supervisor that signals npm, or SIGKILLs it, never reaches this process), and a stop that hangs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../local/emulators.js';

const OWNER = 'test/helpers/shutdown-owner.ts';
const spawned: ChildProcess[] = [];
afterEach(() => {
  for (const child of spawned.splice(0)) if (child.pid && isProcessAlive(child.pid)) child.kill('SIGKILL');
});

/** Starts `command`, collects its stdout, resolves once a line matches. */
function run(command: string, args: string[], env: Record<string, string> = {}) {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  spawned.push(child);
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const waitFor = async (pattern: RegExp, timeoutMs = 10_000): Promise<RegExpMatchArray> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = pattern.exec(out);
      if (match) return match;
      if (Date.now() > deadline) throw new Error(`no ${pattern} in:\n${out}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  return { child, waitFor, output: () => out };
}

describe('npm start shutdown', () => {
  it('stops and exits 0 on SIGTERM', async () => {
    const owner = run(process.execPath, ['--import', 'tsx', OWNER]);
    await owner.waitFor(/ready/);
    owner.child.kill('SIGTERM');
    await owner.waitFor(/exit 0/);
    expect(owner.output()).toContain('SIGTERM: stopping the local stack');
  });

  it('stops when its parent is SIGKILLed, as when a supervisor kills npm outright', async () => {
    // `; true` keeps the shell as the parent instead of exec'ing node.
    const shell = run('sh', ['-c', `"${process.execPath}" --import tsx ${OWNER}; true`]);
    const [, pid] = await shell.waitFor(/ready (\d+)/);
    shell.child.kill('SIGKILL');
    await shell.waitFor(/exit 0/);
    expect(shell.output()).toMatch(/parent process \d+ exited: stopping the local stack/);
    const deadline = Date.now() + 2_000;
    while (isProcessAlive(Number(pid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(isProcessAlive(Number(pid))).toBe(false);
  });

  it('exits 1 at the deadline when stopping hangs, leaving the exit hooks to kill what is left', async () => {
    const owner = run(process.execPath, ['--import', 'tsx', OWNER], { STOP_MS: 'never', DEADLINE_MS: '500' });
    await owner.waitFor(/ready/);
    const signalled = Date.now();
    owner.child.kill('SIGTERM');
    await owner.waitFor(/exit 1/);
    expect(Date.now() - signalled).toBeLessThan(5_000);
    expect(owner.output()).toContain('exiting anyway');
  });
});
