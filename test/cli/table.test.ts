import { describe, expect, it } from 'vitest';
import { formatFields, formatTable, indent } from '../../cli/table.js';

interface Row {
  name: string;
  count?: number;
  note?: string | null;
}

const columns = [
  { header: 'name', value: (r: Row) => r.name },
  { header: 'count', value: (r: Row) => r.count },
  { header: 'note', value: (r: Row) => r.note },
];

describe('formatTable', () => {
  it('pads columns to the widest cell under an upper-case header, right-aligning numbers', () => {
    const text = formatTable(columns, [
      { name: 'stripe', count: 2, note: 'ok' },
      { name: 'github', count: 10, note: 'fine' },
    ]);
    expect(text.split('\n')).toEqual(['NAME    COUNT  NOTE', 'stripe      2  ok', 'github     10  fine']);
  });

  it('shows - for empty cells and left-aligns a column that is not all numbers', () => {
    const text = formatTable(columns, [
      { name: 'a', note: null },
      { name: 'bb', count: 3, note: '' },
    ]);
    expect(text.split('\n')).toEqual(['NAME  COUNT  NOTE', 'a     -      -', 'bb    3      -']);
  });

  it('prints only the header for no rows, and never a trailing space', () => {
    expect(formatTable(columns, [])).toBe('NAME  COUNT  NOTE');
    const text = formatTable(columns, [{ name: 'x', count: 1 }]);
    for (const line of text.split('\n')) expect(line).toBe(line.trimEnd());
  });

  it('honours an explicit alignment', () => {
    const text = formatTable(
      [{ header: 'id', value: (r: { id: string }) => r.id, align: 'right' as const }],
      [{ id: 'a' }, { id: 'abc' }],
    );
    expect(text.split('\n')).toEqual([' ID', '  a', 'abc']);
  });
});

describe('formatFields', () => {
  it('aligns values after the longest name', () => {
    expect(
      formatFields([
        ['status', 'DONE'],
        ['deliveries', 2],
        ['lease', undefined],
      ]),
    ).toBe('status      DONE\ndeliveries  2\nlease       -');
  });
});

describe('indent', () => {
  it('indents non-empty lines only', () => {
    expect(indent('a\n\nb')).toBe('  a\n\n  b');
  });
});
