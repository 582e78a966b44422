/**
 * The names a user gives business tables and effect adapters: the rules the construct (at synth)
 * and the processor (at start) both apply, and the stack output a table's name gives.
 */
import { describe, expect, it } from 'vitest';
import {
  adapterNameProblem,
  tableNameProblem,
  tableOutputName,
} from '../../lambdas/processor/extension-names.js';

describe('business table names', () => {
  it.each(['a', 'invoices', 'order-lines', 'order_lines', 'v2Rows', `a${'b'.repeat(62)}`])(
    'accepts %s',
    (name) => {
      expect(tableNameProblem(name)).toBeUndefined();
    },
  );

  it.each([
    '',
    'Invoices',
    '2rows',
    '-rows',
    '_rows',
    'rows:x',
    'rows x',
    'rows.x',
    'rows/x',
    'röws',
    `a${'b'.repeat(63)}`,
    'rows\n',
  ])('refuses %j, saying what a name may hold', (name) => {
    expect(tableNameProblem(name)).toBe(
      `business table name ${JSON.stringify(name)} must start with a lower-case letter and hold only letters, digits, _ or - (at most 63 characters)`,
    );
  });

  it("refuses the claims table's own name", () => {
    expect(tableNameProblem('claims')).toBe('business table name "claims" is the claims table\'s own');
    expect(tableNameProblem('claimsx')).toBeUndefined();
  });
});

describe('effect adapter names', () => {
  it.each(['a', 'mailer', 'crm2', 'slackNotify', `a${'b'.repeat(62)}`])('accepts %s', (name) => {
    expect(adapterNameProblem(name)).toBeUndefined();
  });

  it.each(['', 'Mailer', '2crm', 'my-crm', 'my_crm', 'crm.v2', 'crm/x', `a${'b'.repeat(63)}`, 'crm\n'])(
    'refuses %j, saying what a name may hold',
    (name) => {
      expect(adapterNameProblem(name)).toBe(
        `effect adapter name ${JSON.stringify(name)} must start with a lower-case letter and hold only letters and digits (at most 63 characters)`,
      );
    },
  );
});

describe('tableOutputName', () => {
  it.each([
    ['invoices', 'InvoicesTableName'],
    ['order-lines', 'OrderLinesTableName'],
    ['order_lines', 'OrderLinesTableName'],
    ['a--b__c', 'ABCTableName'],
    ['v2Rows', 'V2RowsTableName'],
    ['x', 'XTableName'],
  ])('names the output of %s %s', (name, output) => {
    expect(tableOutputName(name)).toBe(output);
  });
});
