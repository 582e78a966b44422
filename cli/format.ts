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

/** Cuts `text` to `max` characters, saying how much was left out: `abc… (+1200 chars)`. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (+${text.length - max} chars)`;
}

/**
 * A stored attribute value on one line, as DynamoDB holds it: strings as they are (control
 * characters escaped), numbers and booleans as written, `null`, sets, lists and maps as compact
 * JSON, binary as its size; cut to `max` characters (`--json` prints it whole).
 */
export function formatValue(value: unknown, max = 100): string {
  return truncate(valueText(value), max);
}

function valueText(value: unknown): string {
  if (value === undefined) return '';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is escaped
    return value === '' || /[\u0000-\u001f\u007f]/.test(value) ? JSON.stringify(value) : value;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (value instanceof Uint8Array) return `<binary, ${plural(value.length, 'byte')}>`;
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner instanceof Set
      ? [...inner]
      : inner instanceof Uint8Array
        ? `<binary, ${plural(inner.length, 'byte')}>`
        : typeof inner === 'bigint'
          ? inner.toString()
          : inner,
  );
}
