/**
 * `npm start` on a PORT something else holds: one line naming the port and the variable, exit 1,
 * before the synth, and nothing left running.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../local/emulators.js';

const REPO_ROOT = resolve(import.meta.dirname, '../..');
const holder = createServer();
let port: number;

beforeAll(async () => {
  port = await freePort();
  await new Promise<void>((r) => holder.listen(port, '127.0.0.1', r));
});
afterAll(async () => {
  await new Promise((r) => holder.close(r));
});

describe('npm start on a port in use', () => {
  it('says which port and how to pick another, exits 1, and does not synthesize first', async () => {
    const started = Date.now();
    const failure = await promisify(execFile)('npm', ['start'], {
      cwd: REPO_ROOT,
      env: { ...process.env, PORT: String(port) },
      timeout: 60_000,
    }).then(
      () => undefined,
      (error: { code?: number; stdout?: string; stderr?: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr?.trim()).toBe(
      `npm start: port ${port} on 127.0.0.1 is in use (PORT). Stop what holds it, or pick another: ` +
        `PORT=${port + 1} npm start`,
    );
    expect(failure?.stdout).not.toContain('synthesizing');
    // The synth alone takes over 10 s.
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
