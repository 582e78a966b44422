/**
 * A planned event as the provider would post it: the provider module's documented sample (its
 * `dev.sample`) with the soak's ids and state written in, signed by its `dev.sign` (which the tests
 * cross-check against each provider's official library) at the moment of sending, as a provider
 * signs each attempt.
 */
import { requireProvider } from '../lambdas/providers/index.js';
import { GITHUB_REPOSITORY_ID, type SoakEvent } from './workload.js';

export interface SignedDelivery {
  readonly body: string;
  readonly headers: Record<string, string>;
}

export interface DeliveryOptions {
  readonly secret: string;
  /** Where it is posted: Square signs the URL. */
  readonly url: string;
  readonly nowSeconds: number;
  /** A re-created event's id (the same fact under another id). */
  readonly eventId?: string;
}

type Json = Record<string, unknown>;
const objectAt = (value: unknown, key: string): Json => (value as Json)[key] as Json;

/** The body of the event: the sample with the soak's fields (stable across sends of one event). */
function bodyOf(event: SoakEvent, eventId: string, nowSeconds: number): { body: string; headers: Json } {
  const { dev } = requireProvider(event.provider);
  const f = event.fields;
  const objectId =
    event.provider === 'stripe'
      ? String(f.intent)
      : event.provider === 'shopify'
        ? String(event.type === 'customers/redact' ? f.customer : f.orderId)
        : event.provider === 'square'
          ? String(f.paymentId)
          : event.provider === 'discord'
            ? String(f.messageId)
            : undefined;
  const sample = dev.sample(event.type, {
    nowSeconds,
    eventId,
    ...(objectId === undefined ? {} : { objectId }),
    ...(event.bytes === undefined ? {} : { bytes: event.bytes }),
  });
  const payload = JSON.parse(sample.body) as Json;
  switch (event.provider) {
    case 'stripe':
      payload.created = event.at;
      objectAt(payload.data, 'object').status = f.status;
      break;
    case 'shopify':
      if (event.type !== 'customers/redact') {
        payload.updated_at = f.updatedAt;
        payload.financial_status = f.financial;
        objectAt(payload, 'customer').id = f.customer;
      }
      break;
    case 'github': {
      payload.ref = f.ref;
      payload.before = f.before;
      payload.after = f.after;
      const repository = objectAt(payload, 'repository');
      repository.pushed_at = f.pushedAt;
      repository.id = Number(GITHUB_REPOSITORY_ID);
      break;
    }
    case 'square': {
      const payment = objectAt(objectAt(objectAt(payload, 'data'), 'object'), 'payment');
      payment.status = f.status;
      payment.updated_at = f.updatedAt;
      payment.version = f.version;
      break;
    }
    case 'discord':
      break;
  }
  return { body: JSON.stringify(payload), headers: { ...sample.headers } };
}

export function signedDelivery(event: SoakEvent, options: DeliveryOptions): SignedDelivery {
  const eventId = options.eventId ?? event.eventId;
  const { body, headers } = bodyOf(event, eventId, options.nowSeconds);
  const plain = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)]));
  const { dev } = requireProvider(event.provider);
  return {
    body,
    headers: { ...plain, ...dev.sign(body, options.secret, options.nowSeconds, plain, options.url) },
  };
}
