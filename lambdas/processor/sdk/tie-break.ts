/**
 * Tie-breaks for two events about one object in the same second: a handler composes its rank from
 * ordered lists (a status progression, then the event type, ...), most significant first, so the
 * further-along state wins and the rank stays one plain number in the DynamoDB condition
 * (`lastEventRank < :rank`). See docs/processor.md, "Same-second tie-breaks".
 */

/** One rank component: its position in a progression (0 = unknown) and how many positions it has. */
export interface RankPart {
  readonly value: number;
  readonly size: number;
}

/** The position of `value` in `progression` (1-based), 0 when absent or unknown. */
export function progressionRank(progression: readonly string[], value: unknown): RankPart {
  const index = typeof value === 'string' ? progression.indexOf(value) : -1;
  return { value: index + 1, size: progression.length + 1 };
}

/** A number already ordered (an amount that only grows), as a rank part below `size`. */
export function amountRank(value: number | undefined, size: number): RankPart {
  const safe =
    value === undefined || !Number.isSafeInteger(value) || value < 0 ? 0 : Math.min(value, size - 1);
  return { value: safe, size };
}

/**
 * Lexicographic composition: the first part decides, the next breaks its ties, and so on. Throws if
 * the product of the sizes could pass 2^53 (the rank would lose precision).
 */
export function composeRank(parts: readonly RankPart[]): number {
  let rank = 0;
  let span = 1;
  for (const part of parts) {
    span *= part.size;
    if (!Number.isSafeInteger(span)) throw new Error('rank parts exceed 2^53: use fewer or smaller parts');
    rank = rank * part.size + Math.max(0, Math.min(part.value, part.size - 1));
  }
  return rank;
}
