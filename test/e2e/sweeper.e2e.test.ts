/**
 * The sweeper in `npm start`, end to end: a claim stuck in each state (RECEIVED, ENQUEUED,
 * PROCESSING) is recovered, or reported and listed by `webhooks stuck`, with no provider retry.
 * Deliveries are signed and sent over HTTP; the stuck states come from the stack's fault points
 * (a receiver failing after storing the body or before queueing, a processor failing before it
 * claims, a processor process dying holding its lease), with MAX_RECEIVE_COUNT=1 so SQS gives up
 * at once and only the sweeper can bring the events back.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../local/emulators.js';
import { sampleDelivery } from '../../local/samples.js';
import { type LocalStackProcess, startLocalStackProcess } from '../helpers/local-stack-process.js';
import { githubHeaders, TEST_SECRETS } from '../helpers/signing.js';

let stack: LocalStackProcess;
let doc: DynamoDBDocumentClient;

beforeAll(async () => {
  stack = await startLocalStackProcess(
    {
      LOCAL_SWEEP_INTERVAL_SECONDS: '1',
      SWEEP_RECEIVED_GRACE_SECONDS: '2',
      // Longer than the visibility timeout (the construct's rule, checked locally too).
      SWEEP_PROCESSING_GRACE_SECONDS: '7',
      SWEEP_ENQUEUED_STALE_SECONDS: '6',
      // The shortest local lease: the functions run with a 5 s timeout.
      LOCAL_VISIBILITY_TIMEOUT_SECONDS: '6',
      CLAIM_LEASE_SECONDS: '6',
      MAX_RECEIVE_COUNT: '1',
      FAULT_POINTS: [
        'receiver.afterPayloadStored@swstored:1',
        'receiver.afterClaim@swinline:1',
        'processor.beforeClaim@swqueued:1',
        'processor.crashAfterClaim@swcrash:1',
      ].join(','),
    },
    'webhooks-sweeper-e2e',
  );
  doc = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: 'us-east-1',
      credentials: LOCAL_CREDENTIALS,
      endpoint: stack.outputs.LocalDynamoDbEndpoint,
    }),
  );
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  doc?.destroy();
}, 30_000);

async function push(delivery: string, bytes?: number) {
  const body = sampleDelivery('github', {
    secret: TEST_SECRETS.github,
    eventId: delivery,
    ...(bytes ? { bytes } : {}),
  }).body;
  const headers = await githubHeaders(body, { delivery });
  const send = async () => {
    const response = await fetch(stack.outputs.GithubWebhookUrl ?? '', { method: 'POST', headers, body });
    return { status: response.status, json: (await response.json()) as { key?: string; outcome?: string } };
  };
  return { first: await send(), again: send };
}

const claim = async (pk: string) =>
  (
    await doc.send(
      new GetCommand({ TableName: stack.outputs.ClaimsTableName, Key: { pk }, ConsistentRead: true }),
    )
  ).Item;

const waitForStatus = (pk: string, status: string, timeoutMs = 45_000) =>
  stack.waitFor(
    `claim ${pk} ${status}`,
    async () => {
      const item = await claim(pk);
      return item?.status === status ? item : undefined;
    },
    timeoutMs,
  );

const webhooks = (...args: string[]) => stack.webhooks(...args);

describe('npm start: the sweeper recovers stuck claims without a provider retry', () => {
  it('RECEIVED: applies a claim-checked push whose receiver answered 500 after storing the body', async () => {
    const { first } = await push('swstored-1', 500_000);
    expect(first.status).toBe(500);
    const key = first.json.key ?? '';
    const done = await waitForStatus(key, 'DONE');
    expect(done).toMatchObject({ outcome: 'applied', sweeps: 1, deliveries: 1 });
    const inspected = await webhooks('inspect', '--key', key);
    expect(inspected.stdout).toContain('sent again 1 time by the sweeper');
  }, 60_000);

  it('ENQUEUED: applies a queued push whose only message went to the DLQ before any processor claimed it', async () => {
    const { first } = await push('swqueued-1', 500_000);
    expect(first).toMatchObject({ status: 200, json: { outcome: 'accepted' } });
    const done = await waitForStatus(first.json.key ?? '', 'DONE');
    expect(done).toMatchObject({ sweeps: 1, processingAttempts: 1 });
  }, 60_000);

  it('PROCESSING: applies a push whose processor process died holding the lease, from the archive', async () => {
    const { first } = await push('swcrash-1');
    expect(first.status).toBe(200);
    const key = first.json.key ?? '';
    const done = await waitForStatus(key, 'DONE');
    expect(done).toMatchObject({ sweeps: 1, processingAttempts: 2 });
    expect(stack.log()).toContain('injected crash at processor.crashAfterClaim');
  }, 60_000);

  it('RECEIVED, body not stored: reports it to `webhooks stuck`, and a provider retry clears the report', async () => {
    const { first, again } = await push('swinline-1');
    expect(first.status).toBe(500);
    const key = first.json.key ?? '';
    await stack.waitFor(
      `claim ${key} reported stuck`,
      async () => ((await claim(key))?.sweepShard === 'stuck' ? true : undefined),
      30_000,
    );
    const listed = await webhooks('stuck', '--json');
    expect(listed.code).toBe(1);
    const { stuck } = JSON.parse(listed.stdout) as {
      stuck: Array<{ key: string; status: string; reason: string }>;
    };
    expect(stuck).toEqual([expect.objectContaining({ key, status: 'RECEIVED' })]);
    expect(stuck[0]?.reason).toContain('only a provider retry can bring it back');
    expect((await webhooks('stuck')).stdout).toContain('1 claim stuck (1 RECEIVED)');

    const retry = await again();
    expect(retry).toMatchObject({ status: 200, json: { outcome: 'accepted' } });
    await waitForStatus(key, 'DONE');
    expect(await webhooks('stuck', '--json')).toMatchObject({ code: 0 });
  }, 60_000);
});
