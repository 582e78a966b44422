/**
 * The example's effect adapters as objects, for code that wires a processor in-process (the tests'
 * pipeline harness, the benchmark) rather than through the construct's `effects` prop.
 */
import { HttpEffect } from '../../lambdas/processor/effects.js';
import type { EffectAdapter } from '../../lambdas/processor/types.js';
import { EXAMPLE_EFFECTS } from './appliers/index.js';

/** An HTTP adapter for each of the example's effects, at `urlOf(name)`. */
export function exampleEffectAdapters(
  urlOf: (name: string) => string,
  options: { readonly timeoutMs?: number } = {},
): Record<string, EffectAdapter> {
  return Object.fromEntries(
    Object.entries(EXAMPLE_EFFECTS).map(([name, effect]) => [
      name,
      new HttpEffect({ name, url: urlOf(name), ...effect, ...options }),
    ]),
  );
}
