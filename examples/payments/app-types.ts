/**
 * What the example app tells the compiler (docs/processor.md, "Types"): its providers (the built-in
 * ones and Onfido, configured by examples/providers/onfido.json), its tables and its adapters. Its
 * processor module and its stack both use it, so a table or an adapter that one names and the other
 * lacks does not compile.
 */
import type { WithProviders } from '../../lambdas/processor/sdk/index.js';

/** The example's business tables, by the names its appliers use. */
export const EXAMPLE_TABLES = ['payments', 'orders', 'resources'] as const;

/**
 * The effect adapters the example's appliers call: a ledger that honours `Idempotency-Key` (a repeat
 * returns the first posting) and a mailer that does not (a repeat is a second email). Locally both
 * are the effects sink (`LocalEffectsUrl`); deployed, give each a `url`.
 */
export const EXAMPLE_EFFECTS = {
  ledger: { honoursIdempotencyKey: true },
  mailer: { honoursIdempotencyKey: false },
} as const;

export interface ExampleApp {
  readonly events: WithProviders<'onfido'>;
  readonly tables: (typeof EXAMPLE_TABLES)[number];
  readonly adapters: keyof typeof EXAMPLE_EFFECTS;
}
