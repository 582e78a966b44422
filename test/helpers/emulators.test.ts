import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { isProcessAlive, startDynamoDbLocal } from '../../local/emulators';

function javaPidsOnPort(port: number): number[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes('DynamoDBLocal.jar') && line.includes(`-port ${port}`))
    .map((line) => Number.parseInt(line.trim(), 10));
}

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
});
