/**
 * Deliveries for tests: a provider's sample (or a body of your own) signed by the provider module's
 * own `dev.sign`, and what the deployed pipeline makes of it. The delivery goes through the real
 * receiver core (`verify`, `extract`, the key rules, the queue message) with an in-memory claim
 * store and queue, and the message through the processor's own `readEvent`: the event an applier
 * sees in a test is the one it sees in production, field for field.
 */

import { ownDelivery, sampleDelivery } from '../../local/samples.js';
import { readEvent } from '../processor/core.js';
import type { ProcessingEvent } from '../processor/types.js';
import { discordPublicKeyOf } from '../providers/discord.js';
import { requireProvider } from '../providers/index.js';
import type { KeyRule, ProviderId } from '../providers/types.js';
import type { EventMessage } from '../queue/event-message.js';
import { type DeliveryResult, type IncomingDelivery, receiveDelivery } from '../receiver/core.js';
import { ENV, loadReceiverSettings, type ProviderSettingsOverride } from '../receiver/settings.js';
import { SQS_MAX_MESSAGE_BYTES } from '../shared/payload-limits.js';
import { publicWebhookUrl } from '../shared/public-url.js';
import { ClaimStatus, type ClaimStore, newClaimRecord } from '../store/claim.js';

/** Where test deliveries are posted, for the providers that sign the URL (Square, Twilio). */
export const TEST_PUBLIC_BASE_URL = 'https://webhooks.test.invalid';

export interface SignedDeliveryOptions {
  /**
   * The body to send, exactly (a string), or an object sent as its JSON. @default the provider's
   * sample of `type` (its documented shape)
   */
  readonly body?: string | Buffer | object;
  /**
   * The event type: the sample's type, or, with a `body`, the type a header carries (GitHub's
   * `X-GitHub-Event`, Shopify's topic); a body-typed provider reads it from the body.
   * @default the provider's first sample type
   */
  readonly type?: string;
  /**
   * The signing secret. @default the provider's development secret (`secret.devSecret`). Discord: a
   * 32-byte Ed25519 seed in hex (the development public key signs with its own seed).
   */
  readonly secret?: string;
  /** The provider's event id, where the sample or a header carries it (same id: same event). */
  readonly eventId?: string;
  /** The business object's id (sample only: a `body` of your own names its own). */
  readonly objectId?: string;
  /** The signed timestamp and the sample's times, epoch seconds. @default now */
  readonly nowSeconds?: number;
}

/** A signed delivery: post `body` with `headers` to `url`, or hand it to `processingEvent` or `process`. */
export interface SignedDelivery {
  readonly provider: ProviderId;
  /** Header names lower-case, signature headers included. */
  readonly headers: Readonly<Record<string, string>>;
  /** The exact body that was signed (UTF-8 text). */
  readonly body: string;
  /** Where it is signed to be posted: `<base>/webhooks/<provider>` (URL-signing providers sign it). */
  readonly url: string;
  /** The secret the receiver must hold to accept it (what `verify` is given). */
  readonly verifySecret: string;
}

/** Thrown when the receiver would not accept a delivery: `result` is its answer. */
export class DeliveryRefusedError extends Error {
  override readonly name = 'DeliveryRefusedError';
  constructor(readonly result: DeliveryResult) {
    super(
      `the receiver would answer ${result.statusCode} ${result.outcome}${result.reason ? ` (${result.reason})` : ''}: ${result.message}`,
    );
  }
}

/** `body` option -> the exact bytes. */
function bodyBytes(body: string | Buffer | object): Buffer {
  if (typeof body === 'string') return Buffer.from(body);
  if (Buffer.isBuffer(body)) return body;
  return Buffer.from(JSON.stringify(body));
}

/** The secret `verify` takes for a delivery signed with `secret` (Discord verifies with the public key). */
function verifySecretOf(provider: ProviderId, secret: string): string {
  if (provider === 'discord' && secret !== requireProvider(provider).secret.devSecret)
    return discordPublicKeyOf(secret);
  return secret;
}

/**
 * A delivery of `provider`, signed by its module's `dev.sign` as the provider signs it: its sample
 * of `options.type`, or `options.body` exactly, with the sample's headers matched to it (the
 * `webhooks send --file` rules). Any registered provider: the built-in ones, and configured HMAC
 * providers when `WEBHOOK_HMAC_PROVIDERS` is set before this module loads.
 */
export function signedDelivery(provider: ProviderId, options: SignedDeliveryOptions = {}): SignedDelivery {
  const definition = requireProvider(provider);
  const secret = options.secret ?? definition.secret.devSecret;
  const url = publicWebhookUrl(TEST_PUBLIC_BASE_URL, provider);
  const common = {
    secret,
    url,
    ...(options.type === undefined ? {} : { type: options.type }),
    ...(options.eventId === undefined ? {} : { eventId: options.eventId }),
    ...(options.nowSeconds === undefined ? {} : { nowSeconds: options.nowSeconds }),
  };
  if (options.body === undefined) {
    const sample = sampleDelivery(provider, {
      ...common,
      ...(options.objectId === undefined ? {} : { objectId: options.objectId }),
    });
    return {
      provider,
      headers: sample.headers,
      body: sample.body,
      url,
      verifySecret: verifySecretOf(provider, secret),
    };
  }
  const own = ownDelivery(provider, bodyBytes(options.body), common);
  return {
    provider,
    headers: own.headers,
    body: own.body.toString('utf8'),
    url,
    verifySecret: verifySecretOf(provider, secret),
  };
}

export interface ReceiveOptions {
  /**
   * Key rules over the provider module's, as the construct's `providers.<id>.keyRules` prop sets them.
   * @default the provider's (docs/rules.md)
   */
  readonly keyRules?: {
    readonly default?: KeyRule['kind'];
    readonly byEventType?: Readonly<Record<string, KeyRule['kind']>>;
  };
  /** The receiver's clock, epoch milliseconds (the signed timestamp is checked against it). @default now */
  readonly nowMs?: number;
}

/** A claim store that claims every key: each call is a first delivery. */
function firstDeliveryStore(): ClaimStore {
  const unused = (name: string) => () => {
    throw new Error(`the testing receiver's claim store does not ${name}`);
  };
  return {
    createClaim: async (claim, lease, nowMs) => ({
      created: true,
      claim: newClaimRecord(claim, lease, ClaimStatus.Received, nowMs),
    }),
    markEnqueued: async () => true,
    recordDuplicate: unused('count duplicates'),
    getClaim: unused('read claims'),
    takeOver: unused('take claims over'),
    releaseClaim: async () => true,
  };
}

/**
 * The queue message the receiver sends for `delivery`: the real receiver core, with the delivery's
 * `verifySecret` as the provider's only secret, a claim store that claims every key and a queue that
 * keeps the message. Throws {@link DeliveryRefusedError} when the receiver would not queue it (a bad
 * signature, a body it cannot read, a handshake).
 */
export async function queueMessage(
  delivery: SignedDelivery,
  options: ReceiveOptions = {},
): Promise<EventMessage> {
  const override: ProviderSettingsOverride | undefined =
    options.keyRules === undefined ? undefined : { keyRules: options.keyRules };
  const settings = loadReceiverSettings({
    [ENV.claimsTableName]: 'testing-claims',
    [ENV.eventQueueUrl]: 'testing://event-queue',
    [ENV.publicBaseUrl]: TEST_PUBLIC_BASE_URL,
    // Never a claim check: the message carries its body, whatever its size up to SQS's limit.
    [ENV.claimCheckThresholdBytes]: String(SQS_MAX_MESSAGE_BYTES),
    ...(override === undefined ? {} : { [ENV.providers]: JSON.stringify({ [delivery.provider]: override }) }),
  });
  const sent: string[] = [];
  const silent = { warn: () => {}, error: () => {} };
  const incoming: IncomingDelivery = {
    providerId: delivery.provider,
    method: 'POST',
    headers: Object.fromEntries(
      Object.entries(delivery.headers).map(([name, value]) => [name.toLowerCase(), value]),
    ),
    body: delivery.body,
    isBase64Encoded: false,
    ...queryOf(delivery.url),
  };
  const result = await receiveDelivery(incoming, {
    settings,
    store: firstDeliveryStore(),
    queue: {
      send: async (body) => {
        sent.push(body);
        return { messageId: `testing-${sent.length}` };
      },
    },
    secrets: { getSecrets: async () => [delivery.verifySecret] },
    log: silent,
    ...(options.nowMs === undefined ? {} : { clock: () => options.nowMs as number }),
  });
  const [body] = sent;
  if (result.outcome !== 'accepted' || body === undefined) throw new DeliveryRefusedError(result);
  return JSON.parse(body) as EventMessage;
}

/** The raw query of the URL the delivery was signed for, as API Gateway hands it over. */
function queryOf(url: string): { rawQuery?: string } {
  const query = new URL(url).search.slice(1);
  return query === '' ? {} : { rawQuery: query };
}

/** What `processingEvent` and the test processor take: a signed delivery, or a body to sign. */
export type DeliveryInput = SignedDelivery | string | Buffer | object;

function isSignedDelivery(input: DeliveryInput): input is SignedDelivery {
  const candidate = input as Partial<SignedDelivery>;
  return (
    typeof input === 'object' &&
    !Buffer.isBuffer(input) &&
    typeof candidate.provider === 'string' &&
    typeof candidate.body === 'string' &&
    typeof candidate.headers === 'object' &&
    typeof candidate.verifySecret === 'string'
  );
}

/** A signed delivery from a delivery or a body (signed with the provider's development secret). */
export function deliveryOf(
  provider: ProviderId,
  input: DeliveryInput,
  options: SignedDeliveryOptions = {},
): SignedDelivery {
  if (isSignedDelivery(input)) {
    if (input.provider !== provider)
      throw new Error(`the delivery is ${input.provider}'s, not ${provider}'s`);
    return input;
  }
  return signedDelivery(provider, { ...options, body: input });
}

/**
 * The event an applier's `plan` sees for a delivery (before its `schema`, which the processor
 * applies): the receiver's queue message read by the processor's `readEvent`. `input` is a
 * {@link signedDelivery}, or a body (a string, or an object sent as JSON) signed here.
 */
export async function processingEvent<Payload = Readonly<Record<string, unknown>>>(
  provider: ProviderId,
  input: DeliveryInput,
  options: ReceiveOptions & SignedDeliveryOptions = {},
): Promise<ProcessingEvent<Payload>> {
  const message = await queueMessage(deliveryOf(provider, input, options), options);
  return readEvent(message) as ProcessingEvent<unknown> as ProcessingEvent<Payload>;
}
