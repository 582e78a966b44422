/**
 * The message the receiver puts on the event queue and the processor reads: everything the
 * processor needs, so it never has to go back to the provider or the receiver.
 */
import { isUtf8 } from 'node:buffer';
import { PROVIDER_LIST } from '../providers/index.js';
import type { BodyFormat, ProviderEvent, ProviderId } from '../providers/types.js';

export { SQS_MAX_MESSAGE_BYTES } from '../shared/payload-limits.js';

export const EVENT_MESSAGE_VERSION = 1;

/** What every queue message says about its event, whether it carries the body or points to it. */
export interface EventEnvelope extends ProviderEvent {
  readonly v: typeof EVENT_MESSAGE_VERSION;
  /** The idempotency key the receiver claimed. */
  readonly key: string;
  readonly provider: ProviderId;
  /** ISO-8601 time the receiver accepted the delivery. */
  readonly receivedAt: string;
  /** The claim's `expiresAt` (epoch seconds), so a processor that must re-create the claim keeps its window. */
  readonly claimExpiresAt: number;
  /** The delivery's headers the processor may need; signature and token headers are never included. */
  readonly headers: Readonly<Record<string, string>>;
}

/** The event with its body: a queue message of a small event, and every archived event. */
export interface EventMessage extends EventEnvelope {
  /** The raw body exactly as received: text when it is valid UTF-8, base64 otherwise. */
  readonly body: string;
  readonly bodyEncoding: 'utf8' | 'base64';
  /**
   * How the receiver read the body, for a provider whose format the headers alone do not tell
   * (Twilio: a JSON body signed by its hash in the URL). Absent in messages from before it existed
   * and for every other provider: the forwarded headers decide, as they did.
   */
  readonly bodyFormat?: BodyFormat;
}

/** Whether a queue message's `bodyFormat` is one this code reads (absent is: the headers decide). */
export function isBodyFormat(value: unknown): value is BodyFormat {
  return value === 'json' || value === 'form';
}

/**
 * A claim check: the event whose body was too large for the message. The body is in the archive
 * bucket at `payloadKey`, as the archived event (an {@link EventMessage} plus `archivedAt`), written
 * before this message was sent.
 */
export interface ClaimCheckMessage extends EventEnvelope {
  /** The archive object holding the event with its body (lambdas/shared/archive-layout.ts). */
  readonly payloadKey: string;
  /** The raw body's size, for logs and `webhooks dlq list`. */
  readonly bodyBytes: number;
}

/** What the queue carries: the event with its body, or a claim check for it. */
export type QueueMessage = EventMessage | ClaimCheckMessage;

export function isClaimCheck(message: QueueMessage): message is ClaimCheckMessage {
  return typeof (message as Partial<ClaimCheckMessage>).payloadKey === 'string';
}

/** The claim check for `message` whose full form is archived at `payloadKey`. */
export function claimCheckOf(
  message: EventMessage,
  payloadKey: string,
  bodyBytes: number,
): ClaimCheckMessage {
  const { body: _body, bodyEncoding: _encoding, bodyFormat: _format, ...envelope } = message;
  return { ...envelope, payloadKey, bodyBytes };
}

const providers = PROVIDER_LIST;
/**
 * Headers that prove authenticity: they never leave the receiver. Every provider's (its module's
 * `headers.secret`), whichever route a delivery came by, and the generic credentials.
 */
const SECRET_HEADERS: ReadonlySet<string> = new Set([
  ...providers.flatMap((provider) => provider.headers.secret),
  'authorization',
  'cookie',
  'proxy-authorization',
]);
/**
 * Provider headers worth keeping (ids, topics, delivery times: each module's `headers.forward`),
 * besides the generic ones below; everything else is transport noise.
 */
const KEPT_HEADER_PREFIXES: readonly string[] = [
  ...new Set(providers.flatMap((provider) => provider.headers.forward)),
];
const KEPT_HEADERS: ReadonlySet<string> = new Set(['content-type', 'user-agent']);

export function forwardedHeaders(
  headers: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || SECRET_HEADERS.has(name)) continue;
    if (KEPT_HEADERS.has(name) || KEPT_HEADER_PREFIXES.some((p) => name.startsWith(p))) {
      kept[name] = value;
    }
  }
  return kept;
}

export function encodeBody(rawBody: Buffer): Pick<EventMessage, 'body' | 'bodyEncoding'> {
  return isUtf8(rawBody)
    ? { body: rawBody.toString('utf8'), bodyEncoding: 'utf8' }
    : { body: rawBody.toString('base64'), bodyEncoding: 'base64' };
}

export function decodeBody(message: Pick<EventMessage, 'body' | 'bodyEncoding'>): Buffer {
  return Buffer.from(message.body, message.bodyEncoding === 'base64' ? 'base64' : 'utf8');
}
