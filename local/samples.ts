/**
 * Realistic sample deliveries for `npm run send`: each provider module's `dev.sample` (its
 * documented shape), signed by its `dev.sign` (the tests cross-check these rules against the
 * official libraries). A thin dispatcher over the registry.
 */
import { type ProviderTable, perProvider, requireProvider } from '../lambdas/providers/index.js';
import type {
  DevSample,
  ExtractFailureReason,
  ProviderEvent,
  ProviderId,
} from '../lambdas/providers/types.js';

export type SampleDelivery = DevSample & { readonly headers: Record<string, string> };

/** Event types with a tailored sample, per provider (the first is the default). */
export const SAMPLE_TYPES: ProviderTable<readonly string[]> = perProvider((p) => p.dev.sampleTypes);

export interface SampleOptions {
  readonly type?: string;
  /** Fixes the provider event id (for redelivering "the same" event). */
  readonly eventId?: string;
  /** Fixes the business object id (payment intent, order, payment, invoice). */
  readonly objectId?: string;
  readonly secret: string;
  readonly nowSeconds?: number;
  /** Only for the provider's `dev.sizedTypes` (GitHub push): grow the body to exactly this many bytes. */
  readonly bytes?: number;
  /** Where it will be posted: providers that sign the URL (Square) need it. */
  readonly url?: string;
}

/** The sample delivery of `provider`, signed with `options.secret`. */
export function sampleDelivery(provider: ProviderId, options: SampleOptions): SampleDelivery {
  const { dev } = requireProvider(provider);
  const nowSeconds = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const type = options.type ?? dev.sampleTypes[0];
  const sample = dev.sample(type, {
    nowSeconds,
    ...(options.eventId === undefined ? {} : { eventId: options.eventId }),
    ...(options.objectId === undefined ? {} : { objectId: options.objectId }),
    ...(options.bytes === undefined ? {} : { bytes: options.bytes }),
  });
  return {
    ...sample,
    headers: {
      ...sample.headers,
      ...dev.sign(sample.body, options.secret, nowSeconds, sample.headers, options.url),
    },
  };
}

/** What the provider's own `handshake` / `extract` read of a delivery, as the receiver reads it. */
export type DeliveryReading =
  | { readonly kind: 'event'; readonly event: ProviderEvent }
  | { readonly kind: 'handshake'; readonly name: string }
  | { readonly kind: 'refused'; readonly reason: ExtractFailureReason; readonly detail?: string };

/** A delivery of a body of your own (`send --file`, `--body`): its exact bytes, signed as a sample is. */
export interface OwnDelivery {
  readonly body: Buffer;
  readonly headers: Record<string, string>;
  /** What the provider's `handshake` / `extract` read of it (the receiver reads the same). */
  readonly reading: DeliveryReading;
}

export interface OwnDeliveryOptions {
  /**
   * For a provider that reads the type from a header (GitHub `X-GitHub-Event`, Shopify's topic): the
   * type to send (default: the provider's first sample type). Body-typed providers ignore it.
   */
  readonly type?: string;
  /** For a provider that reads the event id from a header (GitHub, Shopify, Standard Webhooks). */
  readonly eventId?: string;
  readonly secret: string;
  readonly nowSeconds?: number;
  readonly url?: string;
}

/**
 * Headers of a sample that describe the sample's own account, matched to a body of your own. GitHub
 * checks its unsigned hook-target headers against the body's ids (`scope_mismatch`): a real
 * delivery from a repository hook names `repository.id`, from an organization hook
 * `organization.id`, and a GitHub App's (`installation` in the body) names the App, which the body
 * does not carry.
 */
const OWN_BODY_HEADERS: Readonly<
  Partial<
    Record<
      string,
      (headers: Record<string, string>, payload: Record<string, unknown>) => Record<string, string>
    >
  >
> = {
  github: (headers, payload) => {
    const idOf = (value: unknown): string | undefined => {
      const id = (value as { id?: unknown } | undefined)?.id;
      return typeof id === 'number' || (typeof id === 'string' && id !== '') ? String(id) : undefined;
    };
    const {
      'x-github-hook-installation-target-id': _id,
      'x-github-hook-installation-target-type': _type,
      ...rest
    } = headers;
    if (idOf(payload.installation) !== undefined)
      return { ...rest, 'x-github-hook-installation-target-type': 'integration' };
    const repository = idOf(payload.repository);
    if (repository !== undefined)
      return {
        ...rest,
        'x-github-hook-installation-target-id': repository,
        'x-github-hook-installation-target-type': 'repository',
      };
    const organization = idOf(payload.organization);
    if (organization !== undefined)
      return {
        ...rest,
        'x-github-hook-installation-target-id': organization,
        'x-github-hook-installation-target-type': 'organization',
      };
    return rest;
  },
};

/**
 * `body`, exactly as given, with the headers of the provider's sample of `type` (content type,
 * event id and type headers where the provider has them, timestamps) and signed by its `dev.sign`
 * as a sample is; then read by the provider's own `handshake` and `extract`, so the caller can
 * refuse what the receiver would refuse before anything is posted.
 */
export function ownDelivery(provider: ProviderId, body: Buffer, options: OwnDeliveryOptions): OwnDelivery {
  const definition = requireProvider(provider);
  const { dev } = definition;
  const nowSeconds = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const sample = dev.sample(options.type ?? dev.sampleTypes[0], {
    nowSeconds,
    ...(options.eventId === undefined ? {} : { eventId: options.eventId }),
  });
  let unsigned: Record<string, string> = { ...sample.headers };
  const adjust = OWN_BODY_HEADERS[provider];
  if (adjust) {
    const payload = definition.readPayload({
      headers: unsigned,
      rawBody: body,
      ...(options.url === undefined ? {} : { url: options.url }),
    });
    if (payload !== undefined) unsigned = adjust(unsigned, payload);
  }
  const headers = { ...unsigned, ...dev.sign(body, options.secret, nowSeconds, unsigned, options.url) };
  const request = { headers, rawBody: body, ...(options.url === undefined ? {} : { url: options.url }) };
  const handshake = definition.handshake?.(request);
  if (handshake !== undefined) return { body, headers, reading: { kind: 'handshake', name: handshake.name } };
  const extracted = definition.extract(request);
  return {
    body,
    headers,
    reading: extracted.ok
      ? { kind: 'event', event: extracted.event }
      : {
          kind: 'refused',
          reason: extracted.reason,
          ...(extracted.detail === undefined ? {} : { detail: extracted.detail }),
        },
  };
}
