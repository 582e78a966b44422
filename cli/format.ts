/** Small formatting helpers for the human-readable output. */

/** `6 d 23 h`, `4 min 2 s`, `350 ms`: the two largest units of a duration. */
export function formatDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(abs)} ms`;
  const units: Array<[string, number]> = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['min', 60_000],
    ['s', 1000],
  ];
  const parts: string[] = [];
  let rest = abs;
  for (const [name, size] of units) {
    const count = Math.floor(rest / size);
    if (count > 0 || parts.length > 0) {
      if (count > 0) parts.push(`${count} ${name}`);
      rest -= count * size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

/** `in 6 d 23 h` or `3 min 4 s ago`, relative to now. */
export function relativeTime(atMs: number, nowMs: number): string {
  const delta = atMs - nowMs;
  return delta >= 0 ? `in ${formatDuration(delta)}` : `${formatDuration(delta)} ago`;
}

/** An ISO time with its distance from now: `2026-12-09T10:00:00.000Z (in 6 d 23 h)`. */
export function timeWithDistance(atMs: number, nowMs: number): string {
  return `${new Date(atMs).toISOString()} (${relativeTime(atMs, nowMs)})`;
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
