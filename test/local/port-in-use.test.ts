/**
 * `npm start` on a PORT something else holds: one line naming the port and the variable, exit 1,
 * before the synth, and nothing left running; the outputs file of the stack that holds the port is
 * left as it was.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
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

/** `npm start` as a user runs it, on the taken port; resolves with how it failed. */
const startOnTakenPort = (extraEnv: Record<string, string> = {}) =>
  promisify(execFile)('npm', ['start'], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: String(port), ...extraEnv },
    timeout: 60_000,
  }).then(
    () => undefined,
    (error: { code?: number; stdout?: string; stderr?: string }) => error,
  );

describe('npm start on a port in use', () => {
  it('says which port and how to pick another, exits 1, and does not synthesize first', async () => {
    const started = Date.now();
    const failure = await startOnTakenPort();
    expect(failure?.code).toBe(1);
    expect(failure?.stderr?.trim()).toBe(
      `npm start: port ${port} on 127.0.0.1 is in use (PORT). Stop what holds it, or pick another: ` +
        `PORT=${port + 1} npm start`,
    );
    expect(failure?.stdout).not.toContain('synthesizing');
    // The synth alone takes over 10 s.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("leaves the running stack's outputs file as it was, so npm run send and webhooks still find it", async () => {
    // The stack that holds the port wrote this file; a second `npm start` is a common slip.
    const outputsFile = join(mkdtempSync(join(tmpdir(), 'port-in-use-')), 'cdk-outputs.local.json');
    const running = `${JSON.stringify({ IdempotentWebhooks: { StripeWebhookUrl: `http://127.0.0.1:${port}/webhooks/stripe` } }, null, 2)}\n`;
    writeFileSync(outputsFile, running);
    const failure = await startOnTakenPort({ LOCAL_OUTPUTS_FILE: outputsFile });
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain(`port ${port} on 127.0.0.1 is in use`);
    expect(readFileSync(outputsFile, 'utf8')).toBe(running);
  });
});
