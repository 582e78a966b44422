/**
 * Idempotency keys. A key names one business fact, scoped by provider and account, so the same
 * event id from two providers or two accounts never collides. It is never built from the signature
 * or the delivery timestamp (both change between attempts) nor from a hash of the payload
 * (providers add fields between attempts). Rules are documented in docs/rules.md.
 */
import type { KeyRule, KeyRules, ProviderEvent, ProviderId } from '../providers/types.js';

export type KeyResult =
  | { readonly ok: true; readonly key: string; readonly rule: KeyRule['kind'] }
  | { readonly ok: false; readonly reason: 'missing_object_id'; readonly rule: KeyRule['kind'] };

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

export function buildIdempotencyKey(provider: ProviderId, event: ProviderEvent, rule: KeyRule): KeyResult {
  switch (rule.kind) {
    case 'event-id':
      return { ok: true, rule: rule.kind, key: joinKey([provider, event.account, event.eventId]) };
    case 'composite':
      if (!event.objectId) return { ok: false, reason: 'missing_object_id', rule: rule.kind };
      return {
        ok: true,
        rule: rule.kind,
        key: joinKey([provider, event.account, event.objectId, event.eventType]),
      };
    case 'business-object':
      if (!event.objectId) return { ok: false, reason: 'missing_object_id', rule: rule.kind };
      return {
        ok: true,
        rule: rule.kind,
        key: joinKey([provider, event.account, event.objectKind ?? 'object', event.objectId]),
      };
  }
}
