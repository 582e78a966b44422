/** Realistic event payloads in the providers' documented shapes, with fresh ids. */
import { randomBytes } from 'node:crypto';

const id = (prefix: string): string => `${prefix}_${randomBytes(12).toString('hex')}`;

export interface StripeEventOptions {
  readonly eventId?: string;
  readonly type?: string;
  readonly account?: string;
  readonly intentId?: string;
  readonly status?: string;
  readonly created?: number;
}

export function stripePaymentIntentEvent(options: StripeEventOptions = {}) {
  const intentId = options.intentId ?? id('pi');
  return {
    id: options.eventId ?? id('evt'),
    object: 'event',
    api_version: '2024-06-20',
    created: options.created ?? Math.floor(Date.now() / 1000),
    ...(options.account === undefined ? {} : { account: options.account }),
    livemode: false,
    pending_webhooks: 1,
    request: { id: id('req'), idempotency_key: randomBytes(8).toString('hex') },
    type: options.type ?? 'payment_intent.succeeded',
    data: {
      object: {
        id: intentId,
        object: 'payment_intent',
        amount: 2000,
        amount_received: 2000,
        currency: 'usd',
        status: options.status ?? 'succeeded',
        customer: id('cus'),
        latest_charge: id('ch'),
        metadata: { order_id: '6735' },
      },
    },
  };
}

export function stripeCustomerEvent(options: { eventId?: string; account?: string } = {}) {
  return {
    id: options.eventId ?? id('evt'),
    object: 'event',
    created: Math.floor(Date.now() / 1000),
    ...(options.account === undefined ? {} : { account: options.account }),
    livemode: false,
    type: 'customer.created',
    data: { object: { id: id('cus'), object: 'customer', email: 'jenny.rosen@example.com' } },
  };
}

export function githubPushEvent() {
  return {
    ref: 'refs/heads/main',
    before: '0000000000000000000000000000000000000000',
    after: randomBytes(20).toString('hex'),
    repository: { id: 17273051, full_name: 'octo-org/octo-repo', name: 'octo-repo' },
    pusher: { name: 'octocat', email: 'octocat@github.com' },
    sender: { login: 'octocat', id: 583231 },
  };
}

export function shopifyOrder(orderId = Number.parseInt(randomBytes(4).toString('hex'), 16)) {
  return {
    id: orderId,
    admin_graphql_api_id: `gid://shopify/Order/${orderId}`,
    name: '#1001',
    email: 'bob.norman@mail.example.com',
    created_at: '2026-11-30T10:00:00-05:00',
    updated_at: '2026-11-30T10:00:05-05:00',
    financial_status: 'paid',
    total_price: '199.00',
    currency: 'USD',
  };
}

export function asaasPaymentEvent(options: { eventId?: string; accountId?: string } = {}) {
  return {
    id:
      options.eventId ??
      `evt_${randomBytes(16).toString('hex')}&${Number.parseInt(randomBytes(3).toString('hex'), 16)}`,
    event: 'PAYMENT_RECEIVED',
    dateCreated: '2026-11-30 16:45:03',
    account: { id: options.accountId ?? 'acc_0a1b2c3d', ownerId: null },
    payment: {
      object: 'payment',
      id: id('pay'),
      customer: id('cus'),
      value: 100,
      netValue: 94.51,
      billingType: 'PIX',
      status: 'RECEIVED',
      dueDate: '2026-12-05',
    },
  };
}

export function standardEvent() {
  return {
    type: 'invoice.paid',
    timestamp: new Date().toISOString(),
    data: { id: id('inv'), amount: 4200, currency: 'EUR', status: 'paid' },
  };
}

/** A `charge.refunded` event: `amountRefunded` is the charge's refunded total so far. */
export function stripeChargeRefundedEvent(options: {
  intentId: string;
  amountRefunded: number;
  created?: number;
  eventId?: string;
}) {
  return {
    id: options.eventId ?? id('evt'),
    object: 'event',
    api_version: '2024-06-20',
    created: options.created ?? Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    type: 'charge.refunded',
    data: {
      object: {
        id: id('ch'),
        object: 'charge',
        amount: 2000,
        amount_refunded: options.amountRefunded,
        refunded: options.amountRefunded >= 2000,
        currency: 'usd',
        payment_intent: options.intentId,
      },
    },
  };
}
