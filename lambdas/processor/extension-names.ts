/**
 * The names a user gives business tables and effect adapters (the construct's `tables` and
 * `effects` props), checked at synth time by the construct and again when the processor starts.
 *
 * - A table name is the `table` of an applier's reads and writes, and the prefix of the claim's
 *   `writtenRows` entries (`<table>:<pk>`): a lower-case letter, then letters, digits, `_` or `-`;
 *   no `:`; not `claims`.
 * - An effect adapter name is the `adapter` of an effect definition; it also names the local
 *   effects sink's path (`POST /<name>`): a lower-case letter, then letters and digits.
 */
const TABLE_NAME = /^[a-z][A-Za-z0-9_-]{0,62}$/;
const ADAPTER_NAME = /^[a-z][A-Za-z0-9]{0,62}$/;

/** Why `name` cannot name a business table, or undefined when it can. */
export function tableNameProblem(name: string): string | undefined {
  // Its output would be the claims table's own (`ClaimsTableName`).
  if (name === 'claims') return 'business table name "claims" is the claims table\'s own';
  return TABLE_NAME.test(name)
    ? undefined
    : `business table name ${JSON.stringify(name)} must start with a lower-case letter and hold only letters, digits, _ or - (at most 63 characters)`;
}

/** Why `name` cannot name an effect adapter, or undefined when it can. */
export function adapterNameProblem(name: string): string | undefined {
  return ADAPTER_NAME.test(name)
    ? undefined
    : `effect adapter name ${JSON.stringify(name)} must start with a lower-case letter and hold only letters and digits (at most 63 characters)`;
}

/**
 * The stack output holding a business table's real name: `<PascalName>TableName` (`invoices` ->
 * `InvoicesTableName`, `order-lines` -> `OrderLinesTableName`). The CLI finds a claim's
 * `writtenRows` tables through it.
 */
export function tableOutputName(name: string): string {
  // An empty part (`a--b`) adds nothing.
  const pascal = name
    .split(/[-_]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
  return `${pascal}TableName`;
}
