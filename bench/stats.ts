/** Small statistics helpers: nearest-rank percentiles over a sample, never interpolated. */

export interface LatencySummary {
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  readonly max: number;
  readonly n: number;
}

/** Nearest-rank percentile (the value at rank ceil(p/100 * n)); NaN for an empty sample. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Rounded to 3 decimals: sub-millisecond detail without float noise in the results file. */
export const round3 = (value: number): number => Math.round(value * 1000) / 1000;

export function summarize(values: readonly number[]): LatencySummary {
  return {
    p50: round3(percentile(values, 50)),
    p99: round3(percentile(values, 99)),
    mean: round3(mean(values)),
    max: round3(values.length === 0 ? Number.NaN : Math.max(...values)),
    n: values.length,
  };
}

/** A small seeded PRNG (mulberry32), so a run's mix of duplicates can be reproduced with --seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
