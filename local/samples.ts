/**
 * Realistic sample deliveries for `npm run send`: each provider module's `dev.sample` (its
 * documented shape), signed by its `dev.sign` (the tests cross-check these rules against the
 * official libraries). A thin dispatcher over the registry.
 */
import { type ProviderTable, perProvider, requireProvider } from '../lambdas/providers/index.js';
import type { DevSample, ProviderId } from '../lambdas/providers/types.js';

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
