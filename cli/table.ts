/**
 * Plain-text tables for people: left-aligned columns padded to the widest cell, an upper-case
 * header, `-` for an empty cell. Numbers are right-aligned. No colours, so output can be pasted.
 */

export interface Column<Row> {
  readonly header: string;
  readonly value: (row: Row) => string | number | boolean | undefined | null;
  /** @default 'left', or 'right' when every value in the column is a number */
  readonly align?: 'left' | 'right';
}

const cell = (value: string | number | boolean | undefined | null): string =>
  value === undefined || value === null || value === '' ? '-' : String(value);

/** Renders rows under a header line; every line ends without trailing spaces. */
export function formatTable<Row>(columns: readonly Column<Row>[], rows: readonly Row[]): string {
  const raw = rows.map((row) => columns.map((column) => column.value(row)));
  const texts = raw.map((values) => values.map(cell));
  const aligns = columns.map(
    (column, i) =>
      column.align ??
      (raw.length > 0 && raw.every((values) => typeof values[i] === 'number') ? 'right' : 'left'),
  );
  const widths = columns.map((column, i) =>
    Math.max(column.header.length, ...texts.map((values) => values[i]?.length ?? 0)),
  );
  const line = (values: readonly string[]) =>
    values
      .map((value, i) =>
        aligns[i] === 'right' ? value.padStart(widths[i] ?? 0) : value.padEnd(widths[i] ?? 0),
      )
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header.toUpperCase())), ...texts.map(line)].join('\n');
}

/** A two-column `name  value` block, for one record. */
export function formatFields(
  fields: ReadonlyArray<readonly [string, string | number | undefined | null]>,
): string {
  const width = Math.max(0, ...fields.map(([name]) => name.length));
  return fields.map(([name, value]) => `${name.padEnd(width)}  ${cell(value)}`.trimEnd()).join('\n');
}

/** Indents every line of a block. */
export function indent(text: string, by = 2): string {
  const pad = ' '.repeat(by);
  return text
    .split('\n')
    .map((line) => (line ? pad + line : line))
    .join('\n');
}
