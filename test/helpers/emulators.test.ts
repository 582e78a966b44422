import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import {
  isProcessAlive,
  type RunningEmulator,
  startDynamoDbLocal,
  startS3Server,
  startSqsEmulator,
} from '../../local/emulators.js';
import { accepts, nonLoopbackAddresses } from './net.js';

function javaPidsOnPort(port: number): number[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes('DynamoDBLocal.jar') && line.includes(`-port ${port}`))
    .map((line) => Number.parseInt(line.trim(), 10));
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

const started: RunningEmulator[] = [];
const owners: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((emulator) => emulator.stop()));
  for (const owner of owners.splice(0)) owner.kill('SIGKILL');
});

describe('local emulators', () => {
  it('stops DynamoDB Local without leaving its Java process behind', async () => {
    const dynamo = await startDynamoDbLocal();
    const port = Number(new URL(dynamo.endpoint).port);
    const pids = javaPidsOnPort(port);
    expect(pids).toHaveLength(1);
    await dynamo.stop();
    expect(pids.filter((pid) => isProcessAlive(pid))).toEqual([]);
    expect(javaPidsOnPort(port)).toEqual([]);
  }, 60_000);

  it('listens on 127.0.0.1 only: DynamoDB Local, the SQS emulator and s3rver refuse the other addresses', async () => {
    const emulators = await Promise.all([startDynamoDbLocal(), startSqsEmulator(), startS3Server()]);
    started.push(...emulators);
    for (const { endpoint } of emulators) {
      const port = Number(new URL(endpoint).port);
      expect(await accepts('127.0.0.1', port), endpoint).toBe(true);
      // A machine with no other address has nothing else to reach them on.
      for (const address of nonLoopbackAddresses())
        expect(await accepts(address, port), `${endpoint} on ${address}`).toBe(false);
    }
  }, 60_000);

  it('stops DynamoDB Local when the process that started it is killed with SIGKILL (no exit hooks run)', async () => {
    const owner = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/dynamodb-local-owner.ts'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    owners.push(owner);
    const [line] = (await once(owner.stdout ?? owner, 'data')) as [Buffer];
    const port = Number(new URL((JSON.parse(line.toString()) as { endpoint: string }).endpoint).port);
    const [java] = javaPidsOnPort(port);
    expect(java).toBeGreaterThan(0);

    owner.kill('SIGKILL');
    expect(await waitUntil(() => !isProcessAlive(java ?? 0), 5_000)).toBe(true);
    expect(await accepts('127.0.0.1', port)).toBe(false);
  }, 60_000);
});
