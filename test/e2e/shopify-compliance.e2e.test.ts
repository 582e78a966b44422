/**
 * Shopify's mandatory compliance topics over HTTP against `npm start`: two customers' orders are
 * archived; a data_request for one writes an export that `webhooks compliance export` prints with
 * that customer's events only; a customers/redact for her removes her events from the archive
 * (Bob's stay), deletes her export, and logs one audit line, even when it crashes after its first
 * archive object and runs again; a shop/redact empties the shop; a
 * compliance request with a bad HMAC gets 401 and changes nothing.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseArchive } from '../../lambdas/store/payload-archive.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/emulators.js';
import { type LocalStackProcess, startLocalStackProcess } from '../helpers/local-stack-process.js';
import { shopifyHeaders } from '../helpers/signing.js';

const SHOP = 'compliance-shop.myshopify.com';
const OTHER_SHOP = 'other-shop.myshopify.com';
let stack: LocalStackProcess;
let doc: DynamoDBDocumentClient;
let s3: S3Client;

beforeAll(async () => {
  stack = await startLocalStackProcess(
    {
      LOCAL_VISIBILITY_TIMEOUT_SECONDS: '6',
      // The redaction of Alice crashes after its first archive object; its retry must finish the job.
      FAULT_POINTS: 'compliance.afterObject@w-redact-1:1',
    },
    'webhooks-shopify-compliance',
  );
  const credentials = LOCAL_CREDENTIALS;
  doc = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: LOCAL_REGION, credentials, endpoint: stack.outputs.LocalDynamoDbEndpoint }),
  );
  s3 = new S3Client({
    region: LOCAL_REGION,
    credentials,
    endpoint: stack.outputs.LocalS3Endpoint,
    forcePathStyle: true,
  });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  doc?.destroy();
  s3?.destroy();
}, 30_000);

const url = () => stack.outputs.ShopifyWebhookUrl as string;
const key = (shop: string, id: string) => `shopify:${shop}:${id}`;
const post = async (
  topic: string,
  payload: Record<string, unknown>,
  id: string,
  shop = SHOP,
  secret?: string,
) => {
  const body = JSON.stringify(payload);
  const response = await fetch(url(), {
    method: 'POST',
    headers: shopifyHeaders(body, { topic, shop, webhookId: id, eventId: id, ...(secret ? { secret } : {}) }),
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
const done = (pk: string) =>
  stack.waitFor(`claim ${pk} DONE`, async () => {
    const item = await claim(pk);
    return item?.status === 'DONE' ? item : undefined;
  });

/** Every object under a prefix, with the events it holds. */
async function objects(prefix: string): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  const page = await s3.send(
    new ListObjectsV2Command({ Bucket: stack.outputs.ArchiveBucketName, Prefix: prefix }),
  );
  for (const { Key } of page.Contents ?? []) {
    if (!Key) continue;
    const object = await s3.send(new GetObjectCommand({ Bucket: stack.outputs.ArchiveBucketName, Key }));
    const text = (await object.Body?.transformToString('utf8')) ?? '';
    found.set(Key, Key.startsWith('events/') ? parseArchive(text, Key).map((e) => e.key) : [text]);
  }
  return found;
}
const archivedKeys = async () => [...(await objects('events/shopify/')).values()].flat();

/** The CLI's exit code, and what it printed on stdout then stderr. */
const webhooks = async (...args: string[]) => {
  const { code, stdout, stderr } = await stack.webhooks(...args);
  return { code, stdout: `${stdout}${stderr}` };
};

const alice = { id: 7001, email: 'alice@example.com', phone: '+15550007001' };
const bob = { id: 7002, email: 'bob@example.com', phone: '+15550007002' };
const order = (id: number, customer: typeof alice) => ({
  id,
  admin_graphql_api_id: `gid://shopify/Order/${id}`,
  email: customer.email,
  updated_at: new Date().toISOString(),
  financial_status: 'paid',
  fulfillment_status: null,
  customer,
});

describe('Shopify compliance topics', () => {
  it("archives both customers' orders", async () => {
    for (const [id, body, shop] of [
      ['w-alice-1', order(800001, alice), SHOP],
      ['w-bob-1', order(800002, bob), SHOP],
      ['w-other-1', order(800003, alice), OTHER_SHOP],
      // Over the 448 KiB claim-check threshold: its body is an archive object of its own.
      ['w-alice-big', { ...order(800004, alice), note: 'x'.repeat(500_000) }, SHOP],
    ] as const) {
      expect(await post('orders/create', body, id, shop)).toMatchObject({
        status: 200,
        json: { outcome: 'accepted' },
      });
      await done(key(shop, id));
    }
    expect(await archivedKeys()).toEqual(
      expect.arrayContaining([
        key(SHOP, 'w-alice-1'),
        key(SHOP, 'w-bob-1'),
        key(OTHER_SHOP, 'w-other-1'),
        key(SHOP, 'w-alice-big'),
      ]),
    );
    expect((await claim(key(SHOP, 'w-alice-big')))?.archiveKey).toContain(
      encodeURIComponent(key(SHOP, 'w-alice-big')),
    );
  });

  it('refuses a compliance request with a bad HMAC with 401, writing nothing', async () => {
    const answer = await post(
      'customers/redact',
      { shop_domain: SHOP, customer: alice },
      'w-forged',
      SHOP,
      'wrong',
    );
    expect(answer).toMatchObject({
      status: 401,
      json: { outcome: 'invalid_signature', reason: 'signature_mismatch' },
    });
    expect(await claim(key(SHOP, 'w-forged'))).toBeUndefined();
    expect(await archivedKeys()).toContain(key(SHOP, 'w-alice-1'));
  });

  it("answers a data_request with an export of that customer's events, which the CLI lists and prints", async () => {
    const request = {
      shop_id: 954889,
      shop_domain: SHOP,
      orders_requested: [800001],
      customer: alice,
      data_request: { id: 4242 },
    };
    expect(await post('customers/data_request', request, 'w-dr-1')).toMatchObject({ status: 200 });
    expect(await done(key(SHOP, 'w-dr-1'))).toMatchObject({ outcome: 'applied' });

    const listed = await webhooks('compliance', 'list', '--json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).exports).toEqual([
      {
        shop: SHOP,
        customerId: '7001',
        dataRequestId: '4242',
        key: `compliance/shopify/${SHOP}/customer-7001/data-request-4242.json`,
      },
    ]);
    const printed = await webhooks('compliance', 'export', SHOP, '4242');
    expect(printed.code).toBe(0);
    const exported = JSON.parse(printed.stdout);
    expect(exported).toMatchObject({ shop: SHOP, customerId: '7001', dataRequestId: '4242' });
    expect(exported.events.map((e: { key: string }) => e.key).sort()).toEqual(
      [key(SHOP, 'w-alice-1'), key(SHOP, 'w-alice-big')].sort(),
    );
    expect(exported.events[0].payload).toMatchObject({
      id: 800001,
      customer: { email: 'alice@example.com' },
    });
    expect(await webhooks('compliance', 'export', SHOP, '9')).toMatchObject({
      code: 1,
      stdout: expect.stringContaining('no export of data request 9'),
    });
  });

  it("redacts the customer, through a crash mid-scan: her events and export are gone, Bob's and the other shop's stay, with one audit line", async () => {
    const request = { shop_id: 954889, shop_domain: SHOP, customer: alice, orders_to_redact: [800001] };
    expect(await post('customers/redact', request, 'w-redact-1')).toMatchObject({ status: 200 });
    expect(await done(key(SHOP, 'w-redact-1'))).toMatchObject({ outcome: 'applied' });
    expect(stack.log()).toContain('injected fault at compliance.afterObject');

    const archived = await archivedKeys();
    expect(archived).not.toContain(key(SHOP, 'w-alice-1'));
    // The claim-checked body's own object is deleted, not rewritten.
    expect(archived).not.toContain(key(SHOP, 'w-alice-big'));
    const bigObject = (await claim(key(SHOP, 'w-alice-big')))?.archiveKey as string;
    expect((await objects(bigObject)).size).toBe(0);
    // Alice's data request named her too: it goes with her.
    expect(archived).not.toContain(key(SHOP, 'w-dr-1'));
    expect(archived).toEqual(expect.arrayContaining([key(SHOP, 'w-bob-1'), key(OTHER_SHOP, 'w-other-1')]));
    expect([...(await objects('compliance/')).keys()]).toEqual([]);
    // The claims of removed events say by which request, and when; Bob's says nothing.
    expect(await claim(key(SHOP, 'w-alice-1'))).toMatchObject({
      redactedBy: key(SHOP, 'w-redact-1'),
      redactedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect((await claim(key(SHOP, 'w-bob-1')))?.redactedBy).toBeUndefined();
    const inspected = await webhooks('inspect', '--key', key(SHOP, 'w-alice-1'));
    expect(inspected.code).toBe(0);
    expect(inspected.stdout).toMatch(
      new RegExp(`redacted +payload removed from the archive \\S+ by ${key(SHOP, 'w-redact-1')}`),
    );
    const inspectedJson = JSON.parse(
      (await webhooks('inspect', '--key', key(SHOP, 'w-alice-1'), '--json')).stdout,
    );
    expect(JSON.stringify(inspectedJson)).toContain(`"redacted":{"by":"${key(SHOP, 'w-redact-1')}"`);

    const audit = stack
      .log()
      .split('\n')
      .filter((line) => line.includes('compliance request applied') && line.includes('w-redact-1'));
    expect(audit).toHaveLength(1);
    expect(audit[0]).toContain('"customerId":"7001"');
    expect(audit[0]).not.toContain('alice@example.com');
    expect(audit[0]).not.toContain('+15550007001');
  });

  it('shop/redact removes every remaining event of the shop, and no other shop', async () => {
    expect(await post('shop/redact', { shop_id: 954889, shop_domain: SHOP }, 'w-shop-1')).toMatchObject({
      status: 200,
    });
    await done(key(SHOP, 'w-shop-1'));
    const archived = await archivedKeys();
    expect(archived.filter((k) => k.startsWith(`shopify:${SHOP}:`) && k !== key(SHOP, 'w-shop-1'))).toEqual(
      [],
    );
    expect(archived).toContain(key(OTHER_SHOP, 'w-other-1'));
  });
});
