/**
 * `npm start` as a supervisor sees it: every server it starts listens on loopback only, and a
 * SIGTERM to `npm`'s own process (what systemd, `timeout` or a CI runner sends; not to the process
 * group) stops everything it started, Java included, within 10 s, and removes its outputs file. A
 * second `npm start` stopped with Ctrl-C during its start-up leaves the running stack's file alone.
 * Its functions run on their runtime's Node major, and it says which at start-up.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../local/emulators.js';
import { type LocalStackProcess, REPO_ROOT, startLocalStackProcess } from '../helpers/local-stack-process.js';
import { accepts, nonLoopbackAddresses } from '../helpers/net.js';
import { commandLines, descendants } from '../helpers/process-tree.js';

let stack: LocalStackProcess;
let started: number[] = [];
/** What the second `npm start` started, for the clean-up. */
let secondStarted: number[] = [];

beforeAll(async () => {
  stack = await startLocalStackProcess({}, 'webhooks-lifecycle');
  started = descendants(stack.pid);
}, 180_000);

afterAll(async () => {
  // Whatever a failed test left behind.
  for (const pid of [stack?.pid ?? 0, ...started, ...secondStarted].filter((p) => p > 0 && isProcessAlive(p)))
    process.kill(pid, 'SIGKILL');
});

/** Every port the stack serves on: the API and the stand-ins it published in its outputs. */
function servedPorts(): Array<{ name: string; port: number }> {
  const names = [
    'StripeWebhookUrl',
    'LocalDynamoDbEndpoint',
    'LocalSqsEndpoint',
    'LocalS3Endpoint',
    'LocalEffectsUrl',
  ];
  return names.map((name) => {
    const url = stack.outputs[name];
    if (!url) throw new Error(`no ${name} in the outputs`);
    return { name, port: Number(new URL(url).port) };
  });
}

describe('npm start, as a supervisor runs it', () => {
  it("listens on 127.0.0.1 only: the API, DynamoDB Local, SQS, S3 and the effects sink refuse the machine's other addresses", async () => {
    for (const { name, port } of servedPorts()) {
      expect(await accepts('127.0.0.1', port), name).toBe(true);
      for (const address of nonLoopbackAddresses())
        expect(await accepts(address, port), `${name} on ${address}:${port}`).toBe(false);
    }
  });

  it("leaves the running stack's outputs file alone when a second npm start is stopped with Ctrl-C during its start-up", async () => {
    const outputsFile = stack.env.LOCAL_OUTPUTS_FILE ?? '';
    const written = readFileSync(outputsFile, 'utf8');
    // The same outputs file and cdk.out (no second synth), a port of its own: start-up gets as far
    // as creating the tables before the Ctrl-C.
    const second = spawn('npm', ['start'], {
      cwd: REPO_ROOT,
      env: { ...stack.env, PORT: '0', LOCAL_SKIP_SYNTH: '1' },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((r) => second.once('exit', (code) => r(code)));
    let log = '';
    const starting = new Promise<void>((r) => {
      const onData = (chunk: Buffer) => {
        log += chunk.toString();
        if (/table \S+ ready/.test(log)) r();
      };
      second.stdout?.on('data', onData);
      second.stderr?.on('data', onData);
    });
    await Promise.race([
      starting,
      exited.then(() => {
        throw new Error(`the second npm start exited before its start-up:\n${log}`);
      }),
    ]);
    secondStarted = descendants(second.pid ?? 0);
    // Ctrl-C in a terminal signals the whole foreground process group.
    process.kill(-(second.pid ?? 0), 'SIGINT');
    await exited;
    expect(log).not.toContain('ready:');
    expect(readFileSync(outputsFile, 'utf8')).toBe(written);
    // And the running stack is still there at the URLs that file gives.
    const health = await fetch(stack.outputs.LocalEffectsUrl ?? '');
    expect(health.status).toBe(200);
  }, 60_000);

  it("runs every function on its Lambda runtime's Node major (nodejs24.x: Node 24) and says so at start-up", () => {
    const reported = [...stack.log().matchAll(/^\[(\w+)\] (nodejs\d+\.x): Node (v[\d.]+) \((.+)\)$/gm)].map(
      ([, name, runtime, version, path]) => ({ name, runtime, major: version?.split('.')[0], path }),
    );
    // One line per function: the receiver, the processor and the sweeper (named by its logical id).
    expect(reported.map((r) => r.name)).toEqual(
      expect.arrayContaining(['receiver', 'processor', expect.stringMatching(/Sweeper/)]),
    );
    expect(reported).toHaveLength(3);
    for (const r of reported) expect(r).toMatchObject({ runtime: 'nodejs24.x', major: 'v24' });
    // The function hosts really are that binary's processes, not the log's say-so.
    const hosts = commandLines(started).filter((line) => line.includes('function-host'));
    expect(hosts.length).toBeGreaterThanOrEqual(3);
    const paths = new Set(reported.map((r) => r.path));
    for (const host of hosts)
      expect(
        [...paths].some((path) => host.includes(`${path} `)),
        host,
      ).toBe(true);
  });

  it("stops every process it started and frees every port within 10 s of a SIGTERM to npm's own process", async () => {
    expect(commandLines(started).some((line) => line.includes('DynamoDBLocal'))).toBe(true);
    expect(commandLines(started).some((line) => line.includes('function-host'))).toBe(true);
    const ports = servedPorts();

    const signalled = Date.now();
    process.kill(stack.pid, 'SIGTERM');
    let alive = started;
    let open = ports;
    while (Date.now() - signalled < 10_000) {
      alive = started.filter((pid) => isProcessAlive(pid));
      open = [];
      for (const served of ports) if (await accepts('127.0.0.1', served.port, 500)) open.push(served);
      if (alive.length === 0 && open.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(commandLines(alive), 'processes still alive 10 s after SIGTERM').toEqual([]);
    expect(open, 'ports still open 10 s after SIGTERM').toEqual([]);
    await stack.exited;
    // Its own outputs file goes with it: nothing points `npm run send` or `webhooks` at dead ports.
    expect(existsSync(stack.env.LOCAL_OUTPUTS_FILE ?? '')).toBe(false);
  }, 30_000);
});
