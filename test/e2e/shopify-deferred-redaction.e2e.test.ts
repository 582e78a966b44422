/**
 * A Shopify redaction never deletes the only copy of an event that is not applied yet (issue 31,
 * point 3), over HTTP against `npm start`, in both orders of arrival:
 * - a large (claim-checked) order is still failing when the `customers/redact` for its customer is
 *   applied: its body is kept, the order is applied on its next attempt, and only then removed;
 * - a large and a small order failed into the DLQ, then the redact, then `webhooks dlq redrive`:
 *   both are applied, then redacted (the claim-check object and every batch object holding them).
 * An order of the same customer that was DONE before the request is removed at once, as always.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseArchive } from '../../lambdas/store/payload-archive.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/emulators.js';
import { queueDepth } from '../../local/sqs-poller.js';
import { type LocalStackProcess, startLocalStackProcess } from '../helpers/local-stack-process.js';
import { shopifyHeaders } from '../helpers/signing.js';

const SHOP = 'deferred-shop.myshopify.com';
const MAX_RECEIVE_COUNT = 6;
let stack: LocalStackProcess;
let doc: DynamoDBDocumentClient;
let s3: S3Client;

beforeAll(async () => {
  stack = await startLocalStackProcess(
    {
      // The leases move down with it (6 s, the shortest local lease; the functions run with 5 s): docs/rules.md, "Leases and timeouts".
      LOCAL_VISIBILITY_TIMEOUT_SECONDS: '6',
      MAX_RECEIVE_COUNT: String(MAX_RECEIVE_COUNT),
      FAULT_POINTS: [
        // Fails five attempts (about 30 seconds at a 6 s visibility timeout), then succeeds.
        `processor.afterClaim@w-failing-big:${MAX_RECEIVE_COUNT - 1}`,
        // Fail every attempt SQS makes: the messages go to the DLQ, the claims end FAILED.
        `processor.afterClaim@w-dlq-big:${MAX_RECEIVE_COUNT}`,
        `processor.afterClaim@w-dlq-small:${MAX_RECEIVE_COUNT}`,
      ].join(','),
    },
    'webhooks-deferred-redaction',
  );
  doc = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
      endpoint: stack.outputs.LocalDynamoDbEndpoint,
    }),
  );
  s3 = new S3Client({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoint: stack.outputs.LocalS3Endpoint,
    forcePathStyle: true,
  });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  doc?.destroy();
  s3?.destroy();
}, 30_000);

const key = (id: string) => `shopify:${SHOP}:${id}`;
const post = async (topic: string, payload: Record<string, unknown>, id: string) => {
  const body = JSON.stringify(payload);
  const response = await fetch(stack.outputs.ShopifyWebhookUrl as string, {
    method: 'POST',
    headers: shopifyHeaders(body, { topic, shop: SHOP, webhookId: id, eventId: id }),
    body,
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
};
const claim = async (pk: string) =>
  (
    await doc.send(
      new GetCommand({ TableName: stack.outputs.ClaimsTableName, Key: { pk }, ConsistentRead: true }),
    )
  ).Item;
const orderRow = async (orderId: number) =>
  (
    await doc.send(
      new GetCommand({
        TableName: stack.outputs.OrdersTableName,
        Key: { pk: `shopify:order:${orderId}` },
        ConsistentRead: true,
      }),
    )
  ).Item;
const waitForClaim = (pk: string, what: string, test: (item: Record<string, unknown>) => boolean) =>
  stack.waitFor(
    `claim ${pk} ${what}`,
    async () => {
      const item = await claim(pk);
      return item !== undefined && test(item) ? item : undefined;
    },
    60_000,
  );

/** The idempotency keys each archive object of the shop's provider holds. */
async function archived(): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  const page = await s3.send(
    new ListObjectsV2Command({ Bucket: stack.outputs.ArchiveBucketName, Prefix: 'events/shopify/' }),
  );
  for (const { Key } of page.Contents ?? []) {
    if (!Key) continue;
    const object = await s3.send(new GetObjectCommand({ Bucket: stack.outputs.ArchiveBucketName, Key }));
    found.set(
      Key,
      parseArchive((await object.Body?.transformToString('utf8')) ?? '', Key).map((e) => e.key),
    );
  }
  return found;
}
const archivedKeys = async () => [...(await archived()).values()].flat();

/** The CLI's exit code, and what it printed on stdout then stderr. */
const webhooks = async (...args: string[]) => {
  const { code, stdout, stderr } = await stack.webhooks(...args);
  return { code, stdout: `${stdout}${stderr}` };
};

const auditLines = (requestId: string) =>
  stack
    .log()
    .split('\n')
    .filter((line) => line.includes('compliance request applied') && line.includes(requestId));

const customer = (id: number) => ({ id, email: `customer-${id}@example.com`, phone: `+1555000${id}` });
const order = (id: number, buyer: ReturnType<typeof customer>, big = false) => ({
  id,
  admin_graphql_api_id: `gid://shopify/Order/${id}`,
  email: buyer.email,
  updated_at: new Date().toISOString(),
  financial_status: 'paid',
  fulfillment_status: null,
  customer: buyer,
  // Over the 448 KiB claim-check threshold: the body is an archive object of its own.
  ...(big ? { note: 'x'.repeat(520_000) } : {}),
});
const redact = (buyer: ReturnType<typeof customer>) => ({
  shop_id: 954889,
  shop_domain: SHOP,
  customer: buyer,
  orders_to_redact: [],
});

describe('a Shopify redaction and events that are not applied yet', () => {
  it('keeps a failing claim-checked order until it is applied, then removes its body', async () => {
    const carol = customer(7101);
    const orderKey = key('w-failing-big');
    expect(await post('orders/create', order(810001, carol, true), 'w-failing-big')).toMatchObject({
      status: 200,
      json: { outcome: 'accepted' },
    });
    const failing = await waitForClaim(orderKey, 'failing', (c) =>
      String(c.lastError).includes('injected fault'),
    );
    const bodyObject = failing.archiveKey as string;
    expect(bodyObject).toContain(encodeURIComponent(orderKey));

    expect(await post('customers/redact', redact(carol), 'w-redact-carol')).toMatchObject({ status: 200 });
    await waitForClaim(key('w-redact-carol'), 'DONE', (c) => c.status === 'DONE');
    // The order is still not applied: its body stays, and its claim says a redaction waits for it.
    const pending = await claim(orderKey);
    expect(pending?.status).not.toBe('DONE');
    expect(pending).toMatchObject({ redactionPendingBy: key('w-redact-carol') });
    expect((await archived()).get(bodyObject)).toEqual([orderKey]);
    expect(auditLines('w-redact-carol')).toEqual([expect.stringContaining('"deferredEvents":1')]);
    const inspected = await webhooks('inspect', '--key', orderKey);
    expect(inspected.stdout).toMatch(
      new RegExp(`redaction +pending: .*requested by ${key('w-redact-carol')}`),
    );

    // Its next attempts apply it (the row is written), then its body is removed.
    const done = await waitForClaim(orderKey, 'redacted', (c) => c.redactedBy !== undefined);
    expect(done).toMatchObject({ status: 'DONE', outcome: 'applied', redactedBy: key('w-redact-carol') });
    expect(done.redactionPendingBy).toBeUndefined();
    // Out of the sweeper's index again: nothing left for it to do.
    expect(done.sweepShard).toBeUndefined();
    expect(await orderRow(810001)).toMatchObject({ financialStatus: 'paid', lastEventId: 'w-failing-big' });
    expect((await archived()).has(bodyObject)).toBe(false);
    expect(await archivedKeys()).not.toContain(orderKey);
    expect(stack.log()).toContain('deferred redaction applied');
    expect(stack.log()).not.toContain('NoSuchKey');
  }, 120_000);

  it('keeps orders in the DLQ through the redact; `webhooks dlq redrive` applies them, then removes them', async () => {
    const dave = customer(7102);
    const [big, small, earlier] = [key('w-dlq-big'), key('w-dlq-small'), key('w-dave-done')];
    // Applied before the request: removed at once.
    expect(await post('orders/create', order(810004, dave), 'w-dave-done')).toMatchObject({ status: 200 });
    await waitForClaim(earlier, 'DONE', (c) => c.status === 'DONE');
    for (const [id, orderId, large] of [
      ['w-dlq-big', 810002, true],
      ['w-dlq-small', 810003, false],
    ] as const) {
      expect(await post('orders/create', order(orderId, dave, large), id)).toMatchObject({ status: 200 });
    }
    for (const pk of [big, small]) await waitForClaim(pk, 'FAILED', (c) => c.status === 'FAILED');
    // SQS moves a message to the DLQ on the receive after its last, once the visibility timeout ends.
    const sqs = new SQSClient({
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
      endpoint: stack.outputs.LocalSqsEndpoint,
    });
    await stack.waitFor(
      'both orders in the DLQ',
      async () => ((await queueDepth(sqs, stack.outputs.DeadLetterQueueUrl ?? '')) >= 2 ? true : undefined),
      30_000,
    );
    sqs.destroy();
    const before = await archivedKeys();
    expect(before).toEqual(expect.arrayContaining([big, small, earlier]));

    expect(await post('customers/redact', redact(dave), 'w-redact-dave')).toMatchObject({ status: 200 });
    await waitForClaim(key('w-redact-dave'), 'DONE', (c) => c.status === 'DONE');
    const afterRequest = await archivedKeys();
    expect(afterRequest).not.toContain(earlier);
    expect(afterRequest).toEqual(expect.arrayContaining([big, small]));
    expect(await claim(earlier)).toMatchObject({ redactedBy: key('w-redact-dave') });
    for (const pk of [big, small])
      expect(await claim(pk)).toMatchObject({ status: 'FAILED', redactionPendingBy: key('w-redact-dave') });
    expect(auditLines('w-redact-dave')).toEqual([expect.stringContaining('"deferredEvents":2')]);

    const redriven = await webhooks('dlq', 'redrive', '--wait', '0');
    expect(redriven.code).toBe(0);
    for (const pk of [big, small]) {
      const done = await waitForClaim(pk, 'redacted', (c) => c.redactedBy !== undefined);
      expect(done).toMatchObject({ status: 'DONE', outcome: 'applied', redactedBy: key('w-redact-dave') });
      expect(done.redactionPendingBy).toBeUndefined();
    }
    expect(await orderRow(810002)).toMatchObject({ lastEventId: 'w-dlq-big' });
    expect(await orderRow(810003)).toMatchObject({ lastEventId: 'w-dlq-small' });
    // Every copy is gone: the claim check, the failed attempts' batch objects and the redrive's own.
    const remaining = await archivedKeys();
    expect(remaining).not.toContain(big);
    expect(remaining).not.toContain(small);
    expect(remaining).toContain(key('w-redact-dave'));
  }, 180_000);
});
