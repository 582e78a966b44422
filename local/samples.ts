/**
 * Realistic sample deliveries for `npm run send`, in the providers' documented shapes, signed by the
 * providers' documented rules (the tests cross-check these rules against the official libraries).
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { ProviderId } from '../lambdas/providers/types.js';

export interface SampleDelivery {
  readonly body: string;
  readonly headers: Record<string, string>;
  /** What the delivery is about, for printing. */
  readonly summary: string;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

export const SAMPLE_TYPES: Readonly<Record<ProviderId, readonly string[]>> = {
  stripe: [
    'payment_intent.succeeded',
    'payment_intent.processing',
    'payment_intent.payment_failed',
    'charge.refunded',
    'customer.created',
  ],
  github: ['push', 'ping'],
  shopify: ['orders/create', 'orders/updated'],
  asaas: ['PAYMENT_RECEIVED', 'PAYMENT_CREATED', 'PAYMENT_CONFIRMED'],
  standard: ['invoice.paid', 'invoice.created'],
};

export interface SampleOptions {
  readonly type?: string;
  /** Fixes the provider event id (for redelivering "the same" event). */
  readonly eventId?: string;
  /** Fixes the business object id (payment intent, order, payment, invoice). */
  readonly objectId?: string;
  readonly secret: string;
  readonly nowSeconds?: number;
  /** GitHub push only: grow the body to exactly this many bytes with commits (payload-size tests). */
  readonly bytes?: number;
}

export function sampleDelivery(provider: ProviderId, options: SampleOptions): SampleDelivery {
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const type = options.type ?? SAMPLE_TYPES[provider][0] ?? '';
  switch (provider) {
    case 'stripe':
      return stripe(type, options, now);
    case 'github':
      return github(type, options);
    case 'shopify':
      return shopify(type, options);
    case 'asaas':
      return asaas(type, options);
    case 'standard':
      return standard(type, options, now);
  }
}

function stripe(type: string, options: SampleOptions, now: number): SampleDelivery {
  const intentId = options.objectId ?? `pi_${hex(12)}`;
  const statusByType: Record<string, string> = {
    'payment_intent.succeeded': 'succeeded',
    'payment_intent.processing': 'processing',
    'payment_intent.payment_failed': 'requires_payment_method',
    'payment_intent.canceled': 'canceled',
  };
  const object = type.startsWith('charge.')
    ? {
        id: `ch_${hex(12)}`,
        object: 'charge',
        payment_intent: intentId,
        amount: 2000,
        amount_refunded: 2000,
        refunded: true,
        currency: 'usd',
      }
    : type.startsWith('payment_intent.')
      ? {
          id: intentId,
          object: 'payment_intent',
          amount: 2000,
          amount_received: type === 'payment_intent.succeeded' ? 2000 : 0,
          currency: 'usd',
          status: statusByType[type] ?? 'requires_action',
          receipt_email: 'jenny.rosen@example.com',
          customer: 'cus_NffrFeUfNV2Hib',
        }
      : { id: `cus_${hex(8)}`, object: 'customer', email: 'jenny.rosen@example.com' };
  const event = {
    id: options.eventId ?? `evt_${hex(12)}`,
    object: 'event',
    api_version: '2024-06-20',
    created: now,
    livemode: false,
    pending_webhooks: 1,
    type,
    data: { object },
  };
  const body = JSON.stringify(event);
  const signature = createHmac('sha256', options.secret).update(`${now}.${body}`).digest('hex');
  return {
    body,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'stripe-signature': `t=${now},v1=${signature}`,
    },
    summary: `${type} ${event.id} about ${object.id}`,
  };
}

function github(type: string, options: SampleOptions): SampleDelivery {
  const payload =
    type === 'ping'
      ? {
          zen: 'Design for failure.',
          hook_id: 42,
          repository: { id: 17273051, full_name: 'octo-org/octo-repo' },
        }
      : {
          ref: 'refs/heads/main',
          before: hex(20),
          after: hex(20),
          repository: {
            id: 17273051,
            full_name: 'octo-org/octo-repo',
            pushed_at: Math.floor(Date.now() / 1000),
          },
          pusher: { name: 'octocat', email: 'octocat@github.com' },
        };
  const body =
    type === 'push' && options.bytes !== undefined
      ? largePushBody(payload, options.bytes)
      : githubJson(payload);
  const delivery = options.eventId ?? randomUUID();
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/local',
      'x-github-event': type,
      'x-github-delivery': delivery,
      'x-github-hook-id': '42',
      'x-github-hook-installation-target-id': '17273051',
      'x-github-hook-installation-target-type': 'repository',
      'x-hub-signature-256': `sha256=${createHmac('sha256', options.secret).update(body).digest('hex')}`,
    },
    summary: `${type} delivery ${delivery}`,
  };
}

/** GitHub sends pretty-printed JSON with a trailing newline. */
const githubJson = (payload: unknown): string => `${JSON.stringify(payload, null, 2)}\n`;

function commit(index: number, message: string) {
  const sha = hex(20);
  const person = { name: 'Octo Cat', email: 'octocat@github.com', username: 'octocat' };
  return {
    id: sha,
    tree_id: hex(20),
    distinct: true,
    message,
    timestamp: '2026-12-02T10:00:00Z',
    url: `https://github.com/octo-org/octo-repo/commit/${sha}`,
    author: person,
    committer: person,
    added: [],
    removed: [],
    modified: [`src/module-${index}.ts`],
  };
}

/**
 * A push whose body is exactly `bytes` long: commits until it is nearly there, then the last
 * commit's message padded to the byte (a push with many commits is how GitHub bodies get large).
 */
export function largePushBody(payload: Record<string, unknown>, bytes: number): string {
  const commits: ReturnType<typeof commit>[] = [];
  const sized = () => Buffer.byteLength(githubJson({ ...payload, commits }));
  // Each commit adds about 700 bytes; grow in steps, then pad the last message to the exact size.
  while (sized() < bytes - 2_000) {
    const missing = bytes - 2_000 - sized();
    const step = Math.max(1, Math.floor(missing / 800));
    for (let i = 0; i < step; i++) commits.push(commit(commits.length, `Change ${commits.length}`));
  }
  commits.push(commit(commits.length, ''));
  const last = commits.length - 1;
  const padding = bytes - sized();
  if (padding < 0) throw new Error(`a push cannot be made as small as ${bytes} bytes`);
  commits[last] = { ...(commits[last] as ReturnType<typeof commit>), message: 'x'.repeat(padding) };
  const body = githubJson({ ...payload, commits });
  if (Buffer.byteLength(body) !== bytes) throw new Error('push body size mismatch');
  return body;
}

function shopify(type: string, options: SampleOptions): SampleDelivery {
  const orderId = options.objectId ?? String(5_000_000_000_000 + Number.parseInt(hex(3), 16));
  const order = {
    id: Number(orderId),
    admin_graphql_api_id: `gid://shopify/Order/${orderId}`,
    name: '#1001',
    email: 'bob.norman@mail.example.com',
    created_at: new Date(Date.now() - 60_000).toISOString(),
    updated_at: new Date().toISOString(),
    financial_status: type === 'orders/create' ? 'pending' : 'paid',
    fulfillment_status: null,
    total_price: '199.00',
    currency: 'USD',
  };
  const body = JSON.stringify(order);
  const webhookId = options.eventId ?? randomUUID();
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-shopify-topic': type,
      'x-shopify-shop-domain': 'example-shop.myshopify.com',
      'x-shopify-webhook-id': webhookId,
      'x-shopify-event-id': webhookId,
      'x-shopify-triggered-at': new Date().toISOString(),
      'x-shopify-api-version': '2025-10',
      'x-shopify-hmac-sha256': createHmac('sha256', options.secret).update(body).digest('base64'),
    },
    summary: `${type} order ${orderId}`,
  };
}

function asaas(type: string, options: SampleOptions): SampleDelivery {
  const paymentId = options.objectId ?? `pay_${hex(8)}`;
  const status: Record<string, string> = {
    PAYMENT_RECEIVED: 'RECEIVED',
    PAYMENT_CREATED: 'PENDING',
    PAYMENT_CONFIRMED: 'CONFIRMED',
  };
  const event = {
    id: options.eventId ?? `evt_${hex(16)}&${Number.parseInt(hex(3), 16)}`,
    event: type,
    dateCreated: new Date(Date.now() - 3 * 3600_000).toISOString().replace('T', ' ').slice(0, 19),
    account: { id: 'acc_local_0001', ownerId: null },
    payment: {
      object: 'payment',
      id: paymentId,
      customer: 'cus_000005113026',
      value: 100,
      netValue: 94.51,
      billingType: 'PIX',
      status: status[type] ?? 'PENDING',
      dueDate: new Date().toISOString().slice(0, 10),
    },
  };
  return {
    body: JSON.stringify(event),
    headers: { 'content-type': 'application/json', 'asaas-access-token': options.secret },
    summary: `${type} ${event.id} about ${paymentId}`,
  };
}

function standard(type: string, options: SampleOptions, now: number): SampleDelivery {
  const invoiceId = options.objectId ?? `inv_${hex(8)}`;
  const body = JSON.stringify({
    type,
    timestamp: new Date(now * 1000).toISOString(),
    data: { id: invoiceId, amount: 4200, currency: 'EUR', status: type.split('.').at(-1) },
  });
  const id = options.eventId ?? `msg_${hex(12)}`;
  const key = Buffer.from(options.secret.replace(/^whsec_/, ''), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${now}.${body}`).digest('base64');
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(now),
      'webhook-signature': `v1,${signature}`,
    },
    summary: `${type} ${id} about ${invoiceId}`,
  };
}
