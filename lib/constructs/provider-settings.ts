/**
 * Typed per-provider props -> the receiver's `PROVIDER_SETTINGS` JSON. Only overrides are written;
 * everything else stays at the provider module's default (lambdas/providers/*), the one source of
 * those rules. The JSON is checked at synth time with the receiver's own parser, so a bad setting
 * fails `cdk synth` instead of every delivery.
 */
import type { Duration } from 'aws-cdk-lib';
import type { ProviderRegistry } from '../../lambdas/providers/index.js';
import type { KeyRule, ProviderId } from '../../lambdas/providers/types.js';
import { parseProviderSettings } from '../../lambdas/receiver/settings.js';

export type KeyRuleKind = KeyRule['kind'];

export interface ProviderKeyRules {
  /** Rule for event types not listed in `byEventType`. @default the provider module's (`event-id`) */
  readonly default?: KeyRuleKind;
  /**
   * Per event type: exact (`charge.refunded`) or a prefix ending in `*` (`charge.*`). Merged over
   * the provider module's own `defaults.keyRules.byEventType`.
   * @default the provider module's
   */
  readonly byEventType?: Readonly<Record<string, KeyRuleKind>>;
}

export interface ProviderSettingsOptions {
  /**
   * How long a claim blocks duplicates: the provider's retry window plus a margin for replays.
   * @default the provider module's `defaults.claimTtlSeconds` (lambdas/providers/<id>.ts; docs/rules.md lists them)
   */
  readonly claimTtl?: Duration;
  /**
   * Signed-timestamp tolerance, for providers that sign a timestamp (the others ignore it).
   * @default the provider module's `defaults.toleranceSeconds`
   */
  readonly signatureTolerance?: Duration;
  /** @default the provider module's key rules (docs/rules.md) */
  readonly keyRules?: ProviderKeyRules;
}

export class ProviderSettingsError extends Error {
  override readonly name = 'ProviderSettingsError';
}

export function providerSettingsJson(
  registry: ProviderRegistry<string>,
  providers: Partial<Readonly<Record<ProviderId, ProviderSettingsOptions>>> = {},
): string {
  const overrides: Record<string, Record<string, unknown>> = {};
  for (const id of registry.PROVIDER_IDS) {
    const options = providers[id];
    if (!options) continue;
    const entry: Record<string, unknown> = {};
    if (options.claimTtl) entry.claimTtlSeconds = options.claimTtl.toSeconds();
    if (options.signatureTolerance) entry.toleranceSeconds = options.signatureTolerance.toSeconds();
    if (options.keyRules) {
      entry.keyRules = {
        ...(options.keyRules.default ? { default: options.keyRules.default } : {}),
        ...(options.keyRules.byEventType ? { byEventType: { ...options.keyRules.byEventType } } : {}),
      };
    }
    if (Object.keys(entry).length > 0) overrides[id] = entry;
  }
  const json = JSON.stringify(overrides);
  try {
    parseProviderSettings(json, Object.values(registry.PROVIDERS));
  } catch (error) {
    throw new ProviderSettingsError(`invalid providers prop: ${(error as Error).message}`);
  }
  return json;
}
