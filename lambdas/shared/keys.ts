/**
 * Idempotency keys. A key names one business fact, scoped by provider and account, so the same
 * event id from two providers or two accounts never collides. It is never built from the signature
 * or the delivery timestamp (both change between attempts) nor from a hash of the payload
 * (providers add fields between attempts). Rules are documented in docs/rules.md.
 */
import type { KeyRule, KeyRules, ProviderEvent, ProviderId } from '../providers/types.js';
import { archiveObjectKey } from './archive-layout.js';

/**
 * The longest idempotency key, in bytes (a key is ASCII: every part is percent-encoded). A key is the
 * claim's partition key, which DynamoDB caps at 2,048 bytes, and, percent-encoded once more, the name
 * of its archive object (`events/<provider>/<day>/<key>.json`), which S3 caps at 1,024 bytes. The
 * second encoding grows a key by at most 5/3 (`%3A` becomes `%253A`): 512 bytes become at most 854,
 * which leaves room for the prefix. No provider issues ids anywhere near this long; a key past it
 * comes from a forged or replayed delivery (GitHub's and Shopify's ids are unsigned headers).
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-keys.html
 */
export const MAX_KEY_BYTES = 512;

/** S3's limit on an object name, in UTF-8 bytes. */
const S3_MAX_OBJECT_KEY_BYTES = 1024;

export type KeyResult =
  | { readonly ok: true; readonly key: string; readonly rule: KeyRule['kind'] }
  | { readonly ok: false; readonly reason: 'missing_object_id'; readonly rule: KeyRule['kind'] }
  | {
      readonly ok: false;
      readonly reason: 'key_too_long';
      readonly rule: KeyRule['kind'];
      /** The key's length in bytes. */
      readonly bytes: number;
    };

/**
 * Looks an event type up in a table keyed by exact types and `prefix*` patterns: the exact type
 * wins, then the longest matching prefix.
 */
export function matchEventType<T>(table: Readonly<Record<string, T>>, eventType: string): T | undefined {
  if (Object.hasOwn(table, eventType)) return table[eventType];
  let best: { length: number; value: T } | undefined;
  for (const [pattern, value] of Object.entries(table)) {
    if (!pattern.endsWith('*')) continue;
    const prefix = pattern.slice(0, -1);
    if (eventType.startsWith(prefix) && (best === undefined || prefix.length > best.length)) {
      best = { length: prefix.length, value };
    }
  }
  return best?.value;
}

/** The exact event type's rule wins, then the longest matching `prefix*` pattern, then the default. */
export function resolveKeyRule(rules: KeyRules, eventType: string): KeyRule {
  return matchEventType(rules.byEventType ?? {}, eventType) ?? rules.default;
}

/**
 * Each part is percent-encoded, so a `:` (or Asaas' `&`) inside an id can never make two different
 * facts share a key, and keys stay printable in logs.
 */
export function joinKey(parts: readonly string[]): string {
  return parts.map((part) => encodeURIComponent(part)).join(':');
}

/** The key's parts under its rule, or undefined when the rule needs an object id the event lacks. */
function keyParts(provider: ProviderId, event: ProviderEvent, rule: KeyRule): string[] | undefined {
  switch (rule.kind) {
    case 'event-id':
      return [provider, event.account, event.eventId];
    case 'composite':
      return event.objectId ? [provider, event.account, event.objectId, event.eventType] : undefined;
    case 'business-object':
      return event.objectId
        ? [provider, event.account, event.objectKind ?? 'object', event.objectId]
        : undefined;
  }
}

/**
 * Whether a key fits everywhere it is stored: at most {@link MAX_KEY_BYTES}, and its archive object's
 * name within S3's limit (which only a provider id of over 140 characters could break first).
 */
function fits(provider: ProviderId, key: string): boolean {
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) return false;
  // With the longest day part there is (`unknown-date`, for a time that is not ISO-8601).
  return Buffer.byteLength(archiveObjectKey(provider, '', key)) <= S3_MAX_OBJECT_KEY_BYTES;
}

export function buildIdempotencyKey(provider: ProviderId, event: ProviderEvent, rule: KeyRule): KeyResult {
  const parts = keyParts(provider, event, rule);
  if (parts === undefined) return { ok: false, reason: 'missing_object_id', rule: rule.kind };
  const key = joinKey(parts);
  // Refused, never shortened or hashed: every delivery of the event gets the same 400, and no two
  // events can share a key.
  if (!fits(provider, key))
    return { ok: false, reason: 'key_too_long', rule: rule.kind, bytes: Buffer.byteLength(key) };
  return { ok: true, rule: rule.kind, key };
}
