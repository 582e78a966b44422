/**
 * The AWS SDK's request timeout against a server that takes the connection and never answers
 * (lambdas/shared/request-timeouts.ts): with `throwOnRequestTimeout` each attempt gives up; without
 * it, the SDK only warns and the request waits on.
 */
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { boundedRequests } from '../../lambdas/shared/request-timeouts.js';
import { LOCAL_CREDENTIALS } from '../../local/emulators.js';
import { type SilentServer, silentServer } from '../helpers/net.js';

let silent: SilentServer | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await silent?.close();
  silent = undefined;
});

function client(
  endpoint: string,
  requestHandler: ReturnType<typeof boundedRequests> | Record<string, unknown>,
) {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: LOCAL_CREDENTIALS,
    maxAttempts: 2,
    requestHandler,
  });
}

const getItem = new GetItemCommand({ TableName: 'claims', Key: { pk: { S: 'stripe:platform:evt_1' } } });

describe('a bounded request', () => {
  it('gives up after its timeout, and the SDK tries once more', async () => {
    silent = await silentServer();
    const started = Date.now();
    const error = await client(silent.endpoint, boundedRequests(200))
      .send(getItem)
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'TimeoutError' });
    expect(String(error)).toContain('exceeded the configured 200 ms requestTimeout');
    expect(silent.requests()).toBe(2);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('without throwOnRequestTimeout, only warns and goes on waiting', async () => {
    silent = await silentServer();
    const warned: string[] = [];
    vi.spyOn(console, 'warn').mockImplementation((message: string) => {
      warned.push(message);
    });
    const { throwOnRequestTimeout: _, ...warnOnly } = boundedRequests(200);
    const pending = client(silent.endpoint, warnOnly).send(getItem);
    const outcome = await Promise.race([
      pending.then(
        () => 'answered',
        () => 'failed',
      ),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 1_000)),
    ]);
    expect(outcome).toBe('still waiting');
    expect(silent.requests()).toBe(1);
    expect(warned.join('\n')).toContain('exceeded the configured 200 ms requestTimeout');
    pending.catch(() => {}); // fails when the server closes its connection
  });
});
