/**
 * End to end, as a user runs it: `npm start` in a child process (synth, then the synthesized stack
 * on localhost), then HTTP only, with payloads signed by the providers' official libraries.
 * State is read back through the endpoints the stack publishes in its outputs file.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EffectEntry } from '../../local/effects-sink.js';
import { LOCAL_CREDENTIALS } from '../../local/emulators.js';
import { sampleDelivery } from '../../local/samples.js';
import {
  githubPushEvent,
  shopifyOrder,
  stripeChargeRefundedEvent,
  stripePaymentIntentEvent,
} from '../helpers/events.js';
import { type LocalStackProcess, REPO_ROOT, startLocalStackProcess } from '../helpers/local-stack-process.js';
import { githubHeaders, shopifyHeaders, stripeHeaders, TEST_SECRETS } from '../helpers/signing.js';

const GITHUB_VECTOR_SECRET = "It's a Secret to Everybody";
const CUSTOM_SHOP_A = 'custom-a.myshopify.com';
const CUSTOM_SHOP_B = 'custom-b.myshopify.com';

let stack: LocalStackProcess;
let outputs: Readonly<Record<string, string>>;
let env: NodeJS.ProcessEnv;
let doc: DynamoDBDocumentClient;
let sqs: SQSClient;

const waitFor = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs?: number) =>
  stack.waitFor(what, probe, timeoutMs);

beforeAll(async () => {
  stack = await startLocalStackProcess({
    // Short for the test; the leases move with it (6 s, the functions' timeouts to 5 s, the effects'
    // to 1 s), so an attempt can never outlive its lease however slow the machine (docs/rules.md,
    // "Leases and timeouts").
    LOCAL_VISIBILITY_TIMEOUT_SECONDS: '6',
    MAX_RECEIVE_COUNT: '3',
    FAULT_POINTS: [
      'receiver.afterClaim@crashrecv:1',
      'receiver.afterPayloadStored@crashstore:1',
      'processor.afterClaim@crashproc:1',
      'processor.afterLedger@crashledger:1',
      'processor.beforeReceiptMarker@crashreceipt:1',
      'processor.afterClaim@poison:*',
    ].join(','),
    // Two secrets: the documented vector's and ours (rotation).
    WEBHOOK_SECRET_GITHUB: `${GITHUB_VECTOR_SECRET},${TEST_SECRETS.github}`,
    // Two Shopify custom apps, one secret per shop (docs/rules.md, "Tenancy").
    WEBHOOK_ACCOUNT_SECRETS_SHOPIFY: JSON.stringify({
      [CUSTOM_SHOP_A]: 'shpss_custom_a',
      [CUSTOM_SHOP_B]: 'shpss_custom_b',
    }),
  });
  outputs = stack.outputs;
  env = stack.env;
  const config = { region: 'us-east-1', credentials: LOCAL_CREDENTIALS };
  doc = DynamoDBDocumentClient.from(
    new DynamoDBClient({ ...config, endpoint: outputs.LocalDynamoDbEndpoint }),
  );
  sqs = new SQSClient({ ...config, endpoint: outputs.LocalSqsEndpoint });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  doc?.destroy();
  sqs?.destroy();
}, 30_000);

const post = (provider: string, body: string, headers: Record<string, string>) =>
  fetch(
    outputs[`${provider[0]?.toUpperCase()}${provider.slice(1)}WebhookUrl`] ??
      `${outputs.StripeWebhookUrl}/../${provider}`,
    {
      method: 'POST',
      headers,
      body,
    },
  );

const effects = async (): Promise<EffectEntry[]> =>
  (await (await fetch(outputs.LocalEffectsUrl ?? '')).json()) as EffectEntry[];
const effectsFor = async (intentId: string) =>
  (await effects()).filter((e) => JSON.stringify(e.body).includes(intentId));
const claim = async (pk: string) =>
  (await doc.send(new GetCommand({ TableName: outputs.ClaimsTableName, Key: { pk }, ConsistentRead: true })))
    .Item;
const payment = async (intentId: string) =>
  (
    await doc.send(
      new GetCommand({
        TableName: outputs.PaymentsTableName,
        Key: { pk: `stripe:platform:${intentId}` },
        ConsistentRead: true,
      }),
    )
  ).Item;
const claimCount = async () =>
  (
    await doc.send(
      new ScanCommand({ TableName: outputs.ClaimsTableName, Select: 'COUNT', ConsistentRead: true }),
    )
  ).Count ?? 0;

/** The Resources row a DONE GitHub claim wrote (its first `writtenRows` entry). */
async function writtenResource(done: Record<string, unknown>) {
  const [row] = (done.writtenRows as string[] | undefined) ?? [];
  return (
    await doc.send(
      new GetCommand({
        TableName: outputs.ResourcesTableName,
        Key: { pk: row?.slice('resources:'.length) },
        ConsistentRead: true,
      }),
    )
  ).Item;
}

/** Waits until the payment's claim is DONE and its effects have settled. */
async function settled(key: string): Promise<Record<string, unknown>> {
  return waitFor(`claim ${key} DONE`, async () => {
    const item = await claim(key);
    return item?.status === 'DONE' ? item : undefined;
  });
}

const succeeded = (intentId: string, eventId?: string) => {
  const event = stripePaymentIntentEvent({ intentId, ...(eventId ? { eventId } : {}) });
  const body = JSON.stringify(event);
  return { event, body, key: `stripe:platform:${intentId}:payment_intent.succeeded` };
};

describe('npm start: the local stack end to end', () => {
  it('writes the outputs file in the shape of cdk deploy --outputs-file, pointing at local resources', () => {
    for (const name of ['Stripe', 'Github', 'Shopify', 'Asaas', 'Standard']) {
      expect(outputs[`${name}WebhookUrl`]).toMatch(
        new RegExp(`^http://127\\.0\\.0\\.1:\\d+/webhooks/${name.toLowerCase()}$`),
      );
    }
    for (const name of [
      'ClaimsTableName',
      'PaymentsTableName',
      'OrdersTableName',
      'EventQueueUrl',
      'DeadLetterQueueUrl',
    ]) {
      expect(outputs[name]).toEqual(expect.any(String));
    }
    expect(outputs.LocalDynamoDbEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(outputs.LocalSqsEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(outputs.LocalEffectsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('runs the deployed 100 concurrent batches as at most 10 locally, and says so', () => {
    expect(stack.log()).toMatch(
      /\[poller\] \S+: 10 batches at once locally \(deployed: 100; LOCAL_MAX_CONCURRENT_BATCHES\)/,
    );
  });

  it('1. sequential duplicate: both 200, one Payments row, one ledger posting, one receipt, deliveries = 2', async () => {
    const { body, key } = succeeded('pi_e2e_seq');
    const first = await post('stripe', body, stripeHeaders(body));
    const second = await post('stripe', body, stripeHeaders(body));
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(((await second.json()) as { outcome: string }).outcome).toBe('duplicate');

    expect(await settled(key)).toMatchObject({ deliveries: 2, lastCompletedStep: 'receipt' });
    expect(await payment('pi_e2e_seq')).toMatchObject({ status: 'succeeded', amount: 2000 });
    const calls = await effectsFor('pi_e2e_seq');
    expect(calls.map((e) => [e.service, e.replay])).toEqual([
      ['ledger', false],
      ['mailer', false],
    ]);
    expect(calls[0]?.idempotencyKey).toBe(`${key}:ledger`);
  });

  it('2. concurrent duplicate: 20 copies at once, all 200, effects once', async () => {
    const { body, key } = succeeded('pi_e2e_concurrent');
    const headers = stripeHeaders(body);
    const responses = await Promise.all(Array.from({ length: 20 }, () => post('stripe', body, headers)));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(await settled(key)).toMatchObject({ deliveries: 20 });
    // Let any extra redelivery run before counting.
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await effectsFor('pi_e2e_concurrent')).map((e) => e.service)).toEqual(['ledger', 'mailer']);
  });

  describe('3. crash mid-processing, then the retry', () => {
    it('receiver.afterClaim: the first delivery gets 500, the provider retry completes it once', async () => {
      const { body, key } = succeeded('pi_e2e_crashrecv', 'evt_e2e_crashrecv');
      const first = await post('stripe', body, stripeHeaders(body));
      expect(first.status).toBe(500);
      const retry = await post('stripe', body, stripeHeaders(body));
      expect(retry.status).toBe(200);
      await settled(key);
      expect((await effectsFor('pi_e2e_crashrecv')).map((e) => e.service)).toEqual(['ledger', 'mailer']);
    });

    it('processor.afterClaim: SQS redelivers and the event completes, effects once', async () => {
      const { body, key } = succeeded('pi_e2e_crashproc', 'evt_e2e_crashproc');
      expect((await post('stripe', body, stripeHeaders(body))).status).toBe(200);
      expect(await settled(key)).toMatchObject({ processingAttempts: 2 });
      expect((await effectsFor('pi_e2e_crashproc')).map((e) => e.service)).toEqual(['ledger', 'mailer']);
    });

    it('processor.afterLedger: the ledger is posted once and one receipt is sent', async () => {
      const { body, key } = succeeded('pi_e2e_crashledger', 'evt_e2e_crashledger');
      expect((await post('stripe', body, stripeHeaders(body))).status).toBe(200);
      expect(await settled(key)).toMatchObject({ processingAttempts: 2, lastCompletedStep: 'receipt' });
      // The ledger honours Idempotency-Key, so it has no marker: the retry calls it again and it
      // answers with its first posting (replay), then the receipt goes out once.
      expect((await effectsFor('pi_e2e_crashledger')).map((e) => [e.service, e.replay])).toEqual([
        ['ledger', false],
        ['ledger', true],
        ['mailer', false],
      ]);
    });
  });

  describe('a receipt whose call may have happened is sent at most once', () => {
    const inspect = async (key: string) =>
      promisify(execFile)('node', ['cli/webhooks.mjs', 'inspect', '--key', key], {
        cwd: REPO_ROOT,
        env,
        timeout: 30_000,
      });
    const mailerFault = (fault: Record<string, unknown>) =>
      fetch(`${outputs.LocalEffectsUrl}/_faults/mailer`, { method: 'PUT', body: JSON.stringify(fault) });

    it('a mailer that sends, then answers after the adapter gave up: one receipt, reported in doubt', async () => {
      // The local effect timeout here is 1 s (6 s lease, 5 s processor timeout): the mailer answers at 2.5 s.
      expect((await mailerFault({ kind: 'slow', delayMs: 2_500 })).status).toBe(200);
      const { body, key } = succeeded('pi_e2e_slowmailer', 'evt_e2e_slowmailer');
      expect((await post('stripe', body, stripeHeaders(body))).status).toBe(200);
      const done = await settled(key);
      expect(done).toMatchObject({
        outcome: 'applied',
        unresumedEffects: ['receipt'],
        processingAttempts: 1,
      });
      expect(done.unresumedReason).toMatch(/mailer did not answer within 1000 ms: it may have acted/);
      // Longer than the visibility timeout: no redelivery sends a second receipt.
      await new Promise((resolve) => setTimeout(resolve, 7_000));
      expect((await effectsFor('pi_e2e_slowmailer')).map((e) => e.service)).toEqual(['ledger', 'mailer']);
      const { stdout } = await inspect(key);
      expect(stdout).toMatch(/in doubt +receipt: may have acted, not run again/);
      expect(stdout).toContain('mailer did not answer within 1000 ms');
    }, 60_000);

    it('a worker stopped between the receipt and its marker: the retry does not send it again', async () => {
      const { body, key } = succeeded('pi_e2e_crashreceipt', 'evt_e2e_crashreceipt');
      expect((await post('stripe', body, stripeHeaders(body))).status).toBe(200);
      const done = await settled(key);
      expect(done).toMatchObject({ unresumedEffects: ['receipt'], processingAttempts: 2 });
      expect(done.unresumedReason).toMatch(/receipt was called at .* by an attempt that stopped/);
      // The ledger (no marker of its own) is called again and answers from its first posting.
      expect((await effectsFor('pi_e2e_crashreceipt')).map((e) => [e.service, e.replay])).toEqual([
        ['ledger', false],
        ['mailer', false],
        ['ledger', true],
      ]);
    });

    it('a mailer that refuses (429) is called again on the retry: one receipt, nothing in doubt', async () => {
      expect((await mailerFault({ kind: 'refuse', status: 429 })).status).toBe(200);
      const { body, key } = succeeded('pi_e2e_mailer429', 'evt_e2e_mailer429');
      expect((await post('stripe', body, stripeHeaders(body))).status).toBe(200);
      const done = await settled(key);
      expect(done).toMatchObject({ processingAttempts: 2, lastCompletedStep: 'receipt' });
      expect(done.unresumedEffects).toBeUndefined();
      expect((await effectsFor('pi_e2e_mailer429')).map((e) => e.service)).toEqual([
        'ledger',
        'ledger',
        'mailer',
      ]);
    });
  });

  it('4. stale ordering: payment_failed then an older processing leaves requires_payment_method', async () => {
    const t = Math.floor(Date.now() / 1000);
    const failed = JSON.stringify(
      stripePaymentIntentEvent({
        intentId: 'pi_e2e_stale',
        type: 'payment_intent.payment_failed',
        status: 'requires_payment_method',
        created: t,
      }),
    );
    expect((await post('stripe', failed, stripeHeaders(failed))).status).toBe(200);
    await settled('stripe:platform:pi_e2e_stale:payment_intent.payment_failed');
    const older = JSON.stringify(
      stripePaymentIntentEvent({
        intentId: 'pi_e2e_stale',
        type: 'payment_intent.processing',
        status: 'processing',
        created: t - 60,
      }),
    );
    expect((await post('stripe', older, stripeHeaders(older))).status).toBe(200);
    expect(await settled('stripe:platform:pi_e2e_stale:payment_intent.processing')).toMatchObject({
      outcome: 'stale',
    });
    expect(await payment('pi_e2e_stale')).toMatchObject({
      status: 'requires_payment_method',
      lastEventCreated: t,
    });
  });

  it('sends a poison event to the DLQ after MAX_RECEIVE_COUNT receives with its claim FAILED', async () => {
    const { body, key } = succeeded('pi_e2e_poison', 'evt_e2e_poison');
    expect((await post('stripe', body, stripeHeaders(body))).status).toBe(200);
    // SQS is at-least-once (an SDK retry of SendMessage can store a second copy), so wait for the
    // DLQ to hold the event and the queue to hold no copy of it, then look at the claim.
    const inDlq = await waitFor(
      'the DLQ message',
      async () => {
        const r = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: outputs.DeadLetterQueueUrl,
            WaitTimeSeconds: 1,
            MaxNumberOfMessages: 10,
            VisibilityTimeout: 0,
          }),
        );
        return r.Messages?.find((m) => m.Body?.includes('evt_e2e_poison'));
      },
      40_000,
    );
    expect(JSON.parse(inDlq.Body ?? '{}')).toMatchObject({ key, eventId: 'evt_e2e_poison' });
    const failed = await waitFor(
      'claim FAILED',
      async () => {
        const item = await claim(key);
        return item?.status === 'FAILED' ? item : undefined;
      },
      40_000,
    );
    // Usually 3; fewer when a receive found the previous attempt still running (busy) on a loaded machine.
    expect(Number(failed.processingAttempts)).toBeGreaterThanOrEqual(1);
    expect(String(failed.lastError)).toContain('injected fault at processor.afterClaim');
    expect(await effectsFor('pi_e2e_poison')).toEqual([]);
  }, 90_000);

  describe('same-second states: the later one wins, in either arrival order', () => {
    /** Posts each delivery, waits for its claim to settle, and returns the rows the claims wrote. */
    async function postInTurn(
      provider: string,
      deliveries: Array<{ body: string; headers: Record<string, string> }>,
    ) {
      const refs = new Set<string>();
      for (const d of deliveries) {
        const response = await post(provider, d.body, d.headers);
        expect(response.status).toBe(200);
        const { key } = (await response.json()) as { key: string };
        for (const ref of ((await settled(key)).writtenRows as string[] | undefined) ?? []) refs.add(ref);
      }
      return [...refs];
    }
    const rowAt = async (ref: string | undefined) => {
      const colon = (ref ?? '').indexOf(':');
      const table = { payments: outputs.PaymentsTableName, orders: outputs.OrdersTableName }[
        (ref ?? '').slice(0, colon) as 'payments' | 'orders'
      ];
      return (
        await doc.send(
          new GetCommand({
            TableName: table,
            Key: { pk: (ref ?? '').slice(colon + 1) },
            ConsistentRead: true,
          }),
        )
      ).Item;
    };

    it.each([
      ['pending then paid', ['pending', 'paid']],
      ['paid then pending', ['paid', 'pending']],
    ])('Shopify orders/updated with one updated_at: %s ends paid', async (_label, statuses) => {
      const base = shopifyOrder();
      const refs = await postInTurn(
        'shopify',
        statuses.map((financial_status) => {
          const body = JSON.stringify({ ...base, financial_status });
          return { body, headers: shopifyHeaders(body, { topic: 'orders/updated' }) };
        }),
      );
      expect(refs).toHaveLength(1);
      expect(await rowAt(refs[0])).toMatchObject({ financialStatus: 'paid' });
    });

    it.each([
      ['500 then 1500', [500, 1500]],
      ['1500 then 500', [1500, 500]],
    ])('Stripe charge.refunded twice in one second: %s ends at 1500', async (label, amounts) => {
      const intentId = `pi_e2e_refund_${label.startsWith('500') ? 'a' : 'b'}`;
      const created = Math.floor(Date.now() / 1000);
      const refs = await postInTurn(
        'stripe',
        amounts.map((amountRefunded) => {
          const body = JSON.stringify(stripeChargeRefundedEvent({ intentId, amountRefunded, created }));
          return { body, headers: stripeHeaders(body) };
        }),
      );
      expect(refs).toEqual([`payments:stripe:platform:${intentId}`]);
      expect(await rowAt(refs[0])).toMatchObject({ amountRefunded: 1500 });
    });
  });

  describe('2. unsigned headers never decide tenancy', () => {
    it('refuses a captured GitHub delivery replayed under another hook target, with nothing written', async () => {
      const body = JSON.stringify(githubPushEvent());
      const original = await githubHeaders(body, { event: 'push' });
      const accepted = await post('github', body, original);
      expect(accepted.status).toBe(200);
      await settled(((await accepted.json()) as { key: string }).key);
      const before = await claimCount();
      const replay = await post('github', body, {
        ...original,
        'x-github-delivery': 'e2e-replayed-under-99',
        'x-github-hook-installation-target-id': '99',
      });
      expect(replay.status).toBe(401);
      expect(await replay.json()).toMatchObject({ outcome: 'invalid_signature', reason: 'scope_mismatch' });
      expect(await claimCount()).toBe(before);
    });

    it('lets a public-app Shopify order replayed under another shop write no row for that shop', async () => {
      const order = shopifyOrder();
      const body = JSON.stringify(order);
      const original = shopifyHeaders(body, { shop: 'public-a.myshopify.com' });
      const first = await post('shopify', body, original);
      expect(first.status).toBe(200);
      await settled(((await first.json()) as { key: string }).key);
      const replay = await post('shopify', body, {
        ...original,
        'x-shopify-shop-domain': 'public-b.myshopify.com',
        'x-shopify-webhook-id': `replayed-${order.id}`,
      });
      expect(replay.status).toBe(200);
      const done = await settled(((await replay.json()) as { key: string }).key);
      expect(done).toMatchObject({ outcome: 'noop' });
      const rows =
        (await doc.send(new ScanCommand({ TableName: outputs.OrdersTableName, ConsistentRead: true })))
          .Items ?? [];
      const mine = rows.filter((row) => row.objectId === String(order.id));
      expect(mine).toEqual([
        expect.objectContaining({ pk: `shopify:order:${order.id}`, shop: 'public-a.myshopify.com' }),
      ]);
      expect(rows.filter((row) => row.shop === 'public-b.myshopify.com')).toEqual([]);
    });

    it("verifies a custom app's shop with its own secret, and refuses its body under another shop", async () => {
      const before = await claimCount();
      const body = JSON.stringify(shopifyOrder());
      const signed = shopifyHeaders(body, { shop: CUSTOM_SHOP_A, secret: 'shpss_custom_a' });
      const accepted = await post('shopify', body, signed);
      expect(accepted.status).toBe(200);
      const replay = await post('shopify', body, {
        ...signed,
        'x-shopify-shop-domain': CUSTOM_SHOP_B,
        'x-shopify-webhook-id': 'replayed-under-custom-b',
      });
      expect(replay.status).toBe(401);
      expect(await replay.json()).toMatchObject({ reason: 'signature_mismatch' });
      expect(await claimCount()).toBe(before + 1);
    });
  });

  describe('5. what the receiver accepted, the processor reads', () => {
    it('applies a Stripe delivery whose body starts with a UTF-8 byte-order mark', async () => {
      const { event, key } = succeeded('pi_e2e_bom', 'evt_e2e_bom');
      const body = `\uFEFF${JSON.stringify(event)}`;
      const response = await post('stripe', body, stripeHeaders(body));
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ outcome: 'accepted', key });
      expect(await settled(key)).toMatchObject({ outcome: 'applied', lastCompletedStep: 'receipt' });
      expect(await payment('pi_e2e_bom')).toMatchObject({ status: 'succeeded', lastEventId: 'evt_e2e_bom' });
      expect((await effectsFor('pi_e2e_bom')).map((e) => e.service)).toEqual(['ledger', 'mailer']);
    });

    it('applies a form-encoded GitHub push sent with a capitalised content type and a charset', async () => {
      const push = githubPushEvent();
      const body = `payload=${encodeURIComponent(JSON.stringify(push))}`;
      const headers = {
        ...(await githubHeaders(body, { event: 'push', delivery: 'e2e-form-push-0001' })),
        'content-type': 'Application/X-WWW-Form-Urlencoded; charset=UTF-8',
      };
      const response = await post('github', body, headers);
      expect(response.status).toBe(200);
      const { key } = (await response.json()) as { key: string };
      const done = await settled(key);
      expect(done).toMatchObject({ outcome: 'applied' });
      expect((done.writtenRows as string[])?.[0]).toMatch(/^resources:/);
      expect(await writtenResource(done)).toMatchObject({ headSha: push.after, ref: 'refs/heads/main' });
    });
  });

  describe('rejections, with nothing written', () => {
    it('answers bad signature 401, stale timestamp 401, unknown provider 404, malformed 400 and oversize 413', async () => {
      const before = await claimCount();
      const { body } = succeeded('pi_e2e_rejected');
      const badSignature = await post('stripe', body, stripeHeaders(body, 'whsec_someone_else'));
      const stale = await post(
        'stripe',
        body,
        stripeHeaders(body, TEST_SECRETS.stripe, Math.floor(Date.now() / 1000) - 600),
      );
      const unknown = await fetch(outputs.StripeWebhookUrl?.replace(/stripe$/, 'paypal') ?? '', {
        method: 'POST',
        body: '{}',
      });
      const notJson = '{"id": "evt_x", ';
      const malformed = await post('stripe', notJson, stripeHeaders(notJson));
      // Past Lambda's invocation limit: API Gateway refuses it, the receiver never runs.
      const huge = JSON.stringify({ ...JSON.parse(body), padding: 'x'.repeat(6_300_000) });
      const oversize = await post('stripe', huge, stripeHeaders(huge));

      expect([badSignature.status, stale.status, unknown.status, malformed.status, oversize.status]).toEqual([
        401, 401, 404, 400, 413,
      ]);
      expect(await badSignature.json()).toMatchObject({
        outcome: 'invalid_signature',
        reason: 'signature_mismatch',
      });
      expect(await stale.json()).toMatchObject({ reason: 'timestamp_outside_tolerance' });
      expect(await malformed.json()).toMatchObject({ outcome: 'malformed', reason: 'invalid_json' });
      expect(await oversize.json()).toEqual({ message: 'Request Too Long' });
      expect(await claimCount()).toBe(before);
      expect(await effectsFor('pi_e2e_rejected')).toEqual([]);
    });

    it('answers 400 key_too_long, every time, to a signed delivery whose key would pass the key limit', async () => {
      const before = await claimCount();
      // A captured push replayed with an over-long X-GitHub-Delivery (unsigned), and a Shopify order
      // with an over-long X-Shopify-Event-Id (unsigned): authentic bodies, ids no provider issues.
      const push = JSON.stringify(githubPushEvent());
      const github = await githubHeaders(push, { event: 'push', delivery: 'd'.repeat(3000) });
      const order = JSON.stringify(shopifyOrder());
      const shopify = shopifyHeaders(order, { eventId: 'e'.repeat(3000) });
      for (const attempt of [1, 2]) {
        for (const [provider, body, headers] of [
          ['github', push, github],
          ['shopify', order, shopify],
        ] as const) {
          const response = await post(provider, body, headers);
          expect({ attempt, provider, status: response.status }).toEqual({ attempt, provider, status: 400 });
          const answer = (await response.json()) as Record<string, unknown>;
          expect(answer).toEqual({
            outcome: 'malformed',
            reason: 'key_too_long',
            message: expect.stringContaining('over the 512-byte limit'),
          });
          expect(Number(/would be (\d+) bytes/.exec(String(answer.message))?.[1])).toBeGreaterThan(3000);
        }
      }
      expect(await claimCount()).toBe(before);
    });

    it("passes GitHub's documented vector through signature verification, then answers 400 for its body", async () => {
      const before = await claimCount();
      const response = await post('github', 'Hello, World!', {
        'content-type': 'text/plain',
        'x-github-event': 'push',
        'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
        'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ outcome: 'malformed', reason: 'invalid_json' });
      expect(await claimCount()).toBe(before);
    });
  });

  it('npm run send -- stripe shows an accepted event whose effects appear in the sink', async () => {
    const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'send', '--', 'stripe'], {
      cwd: REPO_ROOT,
      env,
      timeout: 30_000,
    });
    expect(stdout).toMatch(/200 {2}accepted {2}key=stripe:platform:pi_/);
    expect(stdout).toMatch(/ledger +applied/);
    expect(stdout).toMatch(/mailer +applied/);
  });
});

describe('npm start: payloads up to the platform limit (claim checks)', () => {
  const s3 = () =>
    new S3Client({
      region: 'us-east-1',
      credentials: LOCAL_CREDENTIALS,
      endpoint: outputs.LocalS3Endpoint,
      forcePathStyle: true,
    });

  const push = (bytes: number, delivery: string) => {
    const sample = sampleDelivery('github', { secret: TEST_SECRETS.github, bytes, eventId: delivery });
    return sample.body;
  };

  const archivedBody = async (objectKey: string): Promise<string> => {
    const client = s3();
    try {
      const object = await client.send(
        new GetObjectCommand({ Bucket: outputs.ArchiveBucketName, Key: objectKey }),
      );
      const archived = JSON.parse((await object.Body?.transformToString('utf8')) ?? '') as {
        body: string;
        bodyEncoding: string;
      };
      return Buffer.from(archived.body, archived.bodyEncoding === 'base64' ? 'base64' : 'utf8').toString(
        'utf8',
      );
    } finally {
      client.destroy();
    }
  };

  for (const [label, bytes] of [
    ['0.7 MB', 700_000],
    ['3 MB', 3_000_000],
    ['5.5 MB', 5_500_000],
  ] as const) {
    it(`accepts a signed ${label} GitHub push, applies it once, and answers its redelivery as a duplicate`, async () => {
      const delivery = `e2e-large-push-${bytes}`;
      const body = push(bytes, delivery);
      expect(Buffer.byteLength(body)).toBe(bytes);
      const headers = await githubHeaders(body, { event: 'push', delivery });

      const first = await post('github', body, headers);
      const answer = (await first.json()) as { outcome: string; key: string };
      expect(first.status).toBe(200);
      expect(answer.outcome).toBe('accepted');

      const done = await settled(answer.key);
      expect(done).toMatchObject({ outcome: 'applied', processingAttempts: 1 });
      // The claim check is the archive: the exact bytes, once, under the claim's archive key.
      expect(done.archiveKey).toEqual(expect.stringMatching(/^events\/github\//));
      expect(await archivedBody(String(done.archiveKey))).toBe(body);
      expect(await writtenResource(done)).toMatchObject({
        headSha: JSON.parse(body).after,
        lastEventId: delivery,
      });

      const again = await post('github', body, headers);
      expect(again.status).toBe(200);
      expect(await again.json()).toMatchObject({ outcome: 'duplicate', deliveries: 2 });
      // Give a wrongly queued copy time to be processed, then check nothing ran again.
      await new Promise((r) => setTimeout(r, 1_500));
      expect(await claim(answer.key)).toMatchObject({ status: 'DONE', processingAttempts: 1 });
    }, 90_000);
  }

  it('refuses a body past the platform limit as API Gateway does (413), writing nothing', async () => {
    const before = await claimCount();
    // A text body whose event is just over Lambda's 6,291,456-byte invocation limit.
    const overInvocation = push(6_250_000, 'e2e-push-over-invocation');
    const refused = await post(
      'github',
      overInvocation,
      await githubHeaders(overInvocation, { event: 'push', delivery: 'e2e-push-over-invocation' }),
    );
    expect(refused.status).toBe(413);
    expect(await refused.json()).toEqual({ message: 'Request Too Long' });
    // Over API Gateway's own 10 MiB.
    const overApi = push(10_500_000, 'e2e-push-over-api');
    const tooBig = await post(
      'github',
      overApi,
      await githubHeaders(overApi, { event: 'push', delivery: 'e2e-push-over-api' }),
    );
    expect(tooBig.status).toBe(413);
    expect(await tooBig.text()).toBe('HTTP content length exceeded 10485760 bytes.');
    expect(await claimCount()).toBe(before);
    expect(stack.log()).toContain('RequestEntityTooLargeException');
  }, 60_000);

  it('completes a claim-checked push once after a crash between the S3 write and the send', async () => {
    const delivery = 'e2e-crashstore-push-0001';
    const body = push(500_000, delivery);
    const headers = await githubHeaders(body, { event: 'push', delivery });

    const crashed = await post('github', body, headers);
    expect(crashed.status).toBe(500);
    expect(await crashed.json()).toMatchObject({ outcome: 'enqueue_failed' });
    const { key } = (await (await post('github', body, headers)).json()) as { key: string; outcome: string };

    const done = await settled(key);
    expect(done).toMatchObject({ outcome: 'applied', processingAttempts: 1, deliveries: 2 });
    expect(await archivedBody(String(done.archiveKey))).toBe(body);
    // One object for the event: the retry rewrote the crashed attempt's object, not a second one.
    const client = s3();
    const listed = await client.send(
      new ListObjectsV2Command({
        Bucket: outputs.ArchiveBucketName,
        Prefix: String(done.archiveKey).replace(/[^/]+$/, ''),
      }),
    );
    client.destroy();
    expect((listed.Contents ?? []).filter((o) => o.Key?.includes(encodeURIComponent(delivery)))).toHaveLength(
      1,
    );
  }, 60_000);
});
