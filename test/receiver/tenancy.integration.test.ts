/**
 * Unsigned headers never decide tenancy (docs/rules.md, "Tenancy"): a captured, authentic delivery
 * replayed under another shop or hook target, through the receiver and the processor on DynamoDB
 * Local and the SQS emulator.
 */
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { orderRowKey } from '../../examples/payments/appliers/shopify.js';
import { StaticSecretSource } from '../../lambdas/shared/secrets.js';
import { scanAll } from '../helpers/aws.js';
import { githubPushEvent, shopifyOrder } from '../helpers/events.js';
import { createPipelineHarness, type PipelineHarness } from '../helpers/pipeline-harness.js';
import { createReceiverHarness } from '../helpers/receiver-harness.js';
import { githubHeaders, shopifyHeaders, TEST_SECRETS } from '../helpers/signing.js';

const SHOP_A = 'shop-a.myshopify.com';
const SHOP_B = 'shop-b.myshopify.com';

/** Per-account secrets as a custom app per shop and one secret per GitHub hook configure them. */
const perAccount = new StaticSecretSource(
  { shopify: [TEST_SECRETS.shopify], github: [TEST_SECRETS.github] },
  {
    shopify: { [SHOP_A]: ['shpss_shop_a'], [SHOP_B]: ['shpss_shop_b'] },
    github: { '17273051': ['hook-secret-17273051'] },
  },
);

describe('receiver: the account scope comes from signed content', () => {
  it('refuses a GitHub delivery replayed under another hook target: 401 scope_mismatch, nothing written', async () => {
    const h = await createReceiverHarness();
    const body = JSON.stringify(githubPushEvent());
    const original = await githubHeaders(body, { event: 'push' });
    expect(await h.deliver('github', body, original)).toMatchObject({ statusCode: 200, outcome: 'accepted' });
    const before = await h.claims();

    for (const replay of [
      { ...original, 'x-github-delivery': 'replayed-0001', 'x-github-hook-installation-target-id': '99' },
      {
        ...original,
        'x-github-delivery': 'replayed-0002',
        'x-github-hook-installation-target-id': '99',
        'x-github-hook-installation-target-type': 'organization',
      },
    ]) {
      const result = await h.deliver('github', body, replay);
      expect(result).toEqual({
        statusCode: 401,
        outcome: 'invalid_signature',
        reason: 'scope_mismatch',
        message: 'The unsigned account headers do not match the signed payload.',
        provider: 'github',
        enqueued: 0,
      });
    }
    expect(await h.claims()).toEqual(before);
    expect(await h.drain()).toHaveLength(1);
  });

  it("chooses the secret by the account: a shop's delivery fails under another shop, and a shop with its own secret accepts no other", async () => {
    const h = await createReceiverHarness();
    const deps = { secrets: perAccount };
    const body = JSON.stringify(shopifyOrder());
    const signed = shopifyHeaders(body, { shop: SHOP_A, secret: 'shpss_shop_a', topic: 'orders/create' });
    expect(await h.deliver('shopify', body, signed, { deps })).toMatchObject({ statusCode: 200 });

    const underB = { ...signed, 'x-shopify-shop-domain': SHOP_B, 'x-shopify-webhook-id': 'replay-b' };
    const underC = {
      ...signed,
      'x-shopify-shop-domain': 'shop-c.myshopify.com',
      'x-shopify-webhook-id': 'replay-c',
    };
    const appWide = shopifyHeaders(body, {
      shop: SHOP_A,
      secret: TEST_SECRETS.shopify,
      webhookId: 'app-wide',
    });
    for (const headers of [underB, underC, appWide]) {
      expect(await h.deliver('shopify', body, headers, { deps })).toMatchObject({
        statusCode: 401,
        reason: 'signature_mismatch',
      });
    }
    expect(await h.claims()).toHaveLength(1);
    expect(await h.drain()).toHaveLength(1);
  });

  it('verifies a GitHub hook with its own secret, and refuses that body under another hook', async () => {
    const h = await createReceiverHarness();
    const deps = { secrets: perAccount };
    const body = JSON.stringify(githubPushEvent());
    const headers = await githubHeaders(body, { secret: 'hook-secret-17273051' });
    expect(await h.deliver('github', body, headers, { deps })).toMatchObject({
      statusCode: 200,
      outcome: 'accepted',
    });
    // The provider-wide secret is not accepted for a hook that has its own.
    const wide = await githubHeaders(body, { secret: TEST_SECRETS.github });
    expect(await h.deliver('github', body, wide, { deps })).toMatchObject({ statusCode: 401 });
    const elsewhere = {
      ...headers,
      'x-github-delivery': 'x-1',
      'x-github-hook-installation-target-id': '555',
    };
    expect(await h.deliver('github', body, elsewhere, { deps })).toMatchObject({ statusCode: 401 });
    expect(await h.claims()).toHaveLength(1);
  });

  it('answers 401 unknown_account for an account with no secret when only per-account secrets exist', async () => {
    const h = await createReceiverHarness();
    const deps = { secrets: new StaticSecretSource({}, { shopify: { [SHOP_A]: ['shpss_shop_a'] } }) };
    const body = JSON.stringify(shopifyOrder());
    const headers = shopifyHeaders(body, { shop: 'nobody.myshopify.com', secret: 'shpss_shop_a' });
    expect(await h.deliver('shopify', body, headers, { deps })).toMatchObject({
      statusCode: 401,
      outcome: 'invalid_signature',
      reason: 'unknown_account',
    });
    expect(await h.claims()).toEqual([]);
  });

  it('answers 401 unknown_account, not 500 not_configured, to a delivery naming no account when only accounts have secrets', async () => {
    const h = await createReceiverHarness();
    const deps = { secrets: new StaticSecretSource({}, { shopify: { [SHOP_A]: ['shpss_shop_a'] } }) };
    const body = JSON.stringify(shopifyOrder());
    const { 'x-shopify-shop-domain': _shop, ...headers } = shopifyHeaders(body, { secret: 'shpss_shop_a' });
    expect(await h.deliver('shopify', body, headers, { deps })).toEqual({
      statusCode: 401,
      outcome: 'invalid_signature',
      reason: 'unknown_account',
      message: 'No secret is configured for the account this delivery names, or it names none.',
      provider: 'shopify',
      enqueued: 0,
    });
    // The configuration is not at fault: nothing says "every delivery is refused".
    expect(h.logs).toEqual([]);
    expect(await h.claims()).toEqual([]);
  });
});

let p: PipelineHarness;
afterEach(async () => {
  await p?.stop();
});

describe("processor: a public app's one secret, rows keyed by Shopify's global ids", () => {
  it('lets a delivery replayed under another shop domain neither create a row for that shop nor change the row', async () => {
    p = await createPipelineHarness();
    const order = shopifyOrder();
    const body = JSON.stringify(order);
    const original = shopifyHeaders(body, { shop: SHOP_A, topic: 'orders/create' });
    expect((await p.receiver.deliver('shopify', body, original)).statusCode).toBe(200);
    await p.drainQueue();
    const row = await p.row('orders', orderRowKey(String(order.id)));
    expect(row).toMatchObject({ shop: SHOP_A, financialStatus: 'paid' });

    // The same signed body under shop B's domain and a fresh webhook id: authentic, so accepted...
    const replay = {
      ...original,
      'x-shopify-shop-domain': SHOP_B,
      'x-shopify-webhook-id': 'replayed-under-b',
    };
    const replayed = await p.receiver.deliver('shopify', body, replay);
    expect(replayed).toMatchObject({ statusCode: 200, outcome: 'accepted' });
    await p.drainQueue();

    // ...but it writes nothing: no row for shop B, the order's row unchanged.
    expect(await p.receiver.claim(replayed.key ?? '')).toMatchObject({ status: 'DONE', outcome: 'noop' });
    const rows = await scanAll(p.receiver.doc, p.tables.orders);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toEqual(row);
  });

  it('refuses another shop in the DynamoDB condition too, even if a plan missed it', async () => {
    p = await createPipelineHarness();
    const order = shopifyOrder();
    const body = JSON.stringify(order);
    await p.receiver.deliver('shopify', body, shopifyHeaders(body, { shop: SHOP_A }));
    await p.drainQueue();
    const pk = orderRowKey(String(order.id));
    const { StateStore } = await import('../../lambdas/processor/state-store.js');
    const store = new StateStore(p.receiver.dynamo, p.tables);
    // Any claim update: the business row's condition fails first.
    const claimKey = createHmac('sha256', 'unused').digest('hex');
    await expect(
      store.commit(
        [
          {
            table: 'orders',
            pk,
            order: { at: Number.MAX_SAFE_INTEGER, rank: 0, eventId: 'evt_forged' },
            owner: { attribute: 'shop', value: SHOP_B },
            attributes: { financialStatus: 'refunded' },
          },
        ],
        [],
        {
          TableName: p.receiver.tableName,
          Key: { pk: claimKey },
          UpdateExpression: 'SET #x = :x',
          ConditionExpression: 'attribute_not_exists(pk)',
          ExpressionAttributeNames: { '#x': 'x' },
          ExpressionAttributeValues: { ':x': 1 },
        },
        Date.now(),
      ),
    ).rejects.toThrow(/business row changed/);
    expect(await p.row('orders', pk)).toMatchObject({ shop: SHOP_A, financialStatus: 'paid' });
  });
});
