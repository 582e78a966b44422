/**
 * Local functions run on their Lambda runtime's Node major (local/node-runtime.ts), as deployed,
 * even when the local stack itself is started by another Node: the machine's own (Node 20 here), as
 * `node --import tsx local/start.ts` or a `npm start` outside npm's PATH would.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { machineNode } from '../helpers/machine-node.js';

const exec = promisify(execFile);
const DRIVER = 'test/helpers/local-function-driver.ts';

/** Runs the driver on the machine's Node; its output, or the failure's. */
async function drive(env: Record<string, string> = {}) {
  return exec(machineNode(), ['--import', 'tsx', DRIVER], {
    env: { ...process.env, ...env },
    timeout: 30_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout: string; stderr: string }) => ({
      code: error.code ?? 1,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );
}

describe('a local function', () => {
  it("runs on its runtime's Node major (nodejs24.x: Node 24) when the local stack runs on the machine's Node", async () => {
    const { code, stdout, stderr } = await drive();
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const lines = stdout.trim().split('\n');
    const { parent, result } = JSON.parse(lines.at(-1) ?? '{}') as {
      parent: string;
      result: { node: string; execPath: string };
    };
    expect(result.node, `the function's Node, the local stack running on ${parent}`).toMatch(/^v24\./);
    // Told at start-up, from what the function's process reported.
    expect(lines).toContain(`[probe] nodejs24.x: Node ${result.node} (${result.execPath})`);
  }, 40_000);

  it('refuses to start when no Node of its runtime is installed, saying how to get one', async () => {
    // Neither the machine's Node nor the devDependency `node` is a Node 19.
    const { code, stderr } = await drive({ PROBE_RUNTIME: 'nodejs19.x' });
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/NodeRuntimeError: functions run on nodejs19\.x on Lambda, so locally on Node 19/);
    expect(stderr).toContain('Run `npm ci`');
  }, 40_000);
});
