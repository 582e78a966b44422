/**
 * `webhooks inspect`'s business rows: each written row's attributes as stored, whatever the
 * application's tables hold (not a fixed set of the example's columns), the processor's guard
 * attributes last, long values cut.
 */
import { describe, expect, it } from 'vitest';
import { type RowView, rowsText, rowText } from '../../cli/commands/inspect.js';
import { formatValue, truncate } from '../../cli/format.js';

const row = (
  item: Record<string, unknown> | null,
  table = 'subscriptions',
  pk = 'stripe:platform:sub_1',
): RowView => ({
  table,
  pk,
  found: item !== null,
  item,
});

describe('rowText', () => {
  it("shows an application's own attributes, sorted, then each guard's and updatedAt", () => {
    const text = rowText(
      row({
        pk: 'stripe:platform:sub_1',
        status: 'active',
        cancelAtPeriodEnd: true,
        currentPeriodEnd: 1_798_761_600,
        customer: 'cus_1',
        plan: { id: 'price_1', interval: 'month' },
        lastEventRank: 2,
        lastEventId: 'evt_2',
        lastEventCreated: 1_796_229_066,
        lastEventEffects: ['crm'],
        updatedAt: '2026-12-02T16:31:07.795Z',
        seats: 3,
      }),
    );
    expect(text.split('\n')).toEqual([
      'subscriptions  stripe:platform:sub_1',
      '  cancelAtPeriodEnd  true',
      '  currentPeriodEnd   1798761600',
      '  customer           cus_1',
      '  plan               {"id":"price_1","interval":"month"}',
      '  seats              3',
      '  status             active',
      '  lastEventId        evt_2',
      '  lastEventCreated   1796229066 (2026-12-02T16:31:06.000Z)',
      '  lastEventRank      2',
      '  lastEventEffects   ["crm"]',
      '  updatedAt          2026-12-02T16:31:07.795Z',
    ]);
  });

  it("keeps the example app's payment row readable: status and amount by name, its refund guard with the guards", () => {
    const lines = rowText(
      row(
        {
          pk: 'stripe:platform:pi_1',
          amount: 2000,
          currency: 'usd',
          status: 'succeeded',
          lastEventId: 'evt_1',
          lastEventCreated: 1_796_229_066,
          lastEventRank: 7,
          refundEventId: 'evt_r',
          refundEventCreated: 1_796_229_100,
          refundEventRank: 1,
          amountRefunded: 2000,
          updatedAt: '2026-12-02T16:31:07.795Z',
        },
        'payments',
        'stripe:platform:pi_1',
      ),
    ).split('\n');
    expect(lines[0]).toBe('payments  stripe:platform:pi_1');
    expect(lines.slice(1).map((line) => line.trim().split(/\s+/)[0])).toEqual([
      'amount',
      'amountRefunded',
      'currency',
      'status',
      'lastEventId',
      'lastEventCreated',
      'lastEventRank',
      'refundEventId',
      'refundEventCreated',
      'refundEventRank',
      'updatedAt',
    ]);
    expect(lines).toContain('  status              succeeded');
  });

  it('cuts long values and escapes control characters, and shows empty strings, nulls, sets and binary', () => {
    const text = rowText(
      row({
        pk: 'k',
        notes: 'x'.repeat(150),
        multiline: 'a\nb',
        empty: '',
        gone: null,
        tags: new Set(['a', 'b']),
        blob: new Uint8Array(3),
      }),
      40,
    );
    expect(text.split('\n').slice(1)).toEqual([
      '  blob       <binary, 3 bytes>',
      '  empty      ""',
      '  gone       null',
      '  multiline  "a\\nb"',
      `  notes      ${'x'.repeat(40)}… (+110 chars)`,
      '  tags       ["a","b"]',
    ]);
  });

  it('says when a row is missing, has no attributes, or the reference is not table:pk', () => {
    expect(rowText(row(null))).toBe(
      'subscriptions  stripe:platform:sub_1  (missing: no such row in the table now)',
    );
    expect(rowText(row({ pk: 'stripe:platform:sub_1' }))).toBe(
      'subscriptions  stripe:platform:sub_1  (no attributes)',
    );
    expect(rowText({ table: 'nocolon', pk: '', found: false, item: null })).toBe(
      'nocolon  (not a <table>:<pk> reference: nothing to read)',
    );
  });

  it('does not take an attribute that merely ends in Created for a guard', () => {
    const lines = rowText(row({ pk: 'k', accountCreated: 1_700_000_000, status: 'x' })).split('\n');
    expect(lines.slice(1)).toEqual(['  accountCreated  1700000000', '  status          x']);
  });
});

describe('rowsText', () => {
  it('lists every row, or says none were written', () => {
    expect(rowsText([])).toBe('rows: none written');
    const text = rowsText([row({ pk: 'a', status: 'active' }), row(null, 'orders', 'shopify:shop:1')]);
    expect(text.split('\n')).toEqual([
      'rows: 2 written (attributes as stored; --json for whole values)',
      '  subscriptions  stripe:platform:sub_1',
      '    status  active',
      '  orders  shopify:shop:1  (missing: no such row in the table now)',
    ]);
  });
});

describe('formatValue', () => {
  it('prints values on one line as stored', () => {
    expect(formatValue('plain')).toBe('plain');
    expect(formatValue(12.5)).toBe('12.5');
    expect(formatValue(false)).toBe('false');
    expect(formatValue([1, 'a'])).toBe('[1,"a"]');
    expect(formatValue(new Set([1, 2]))).toBe('[1,2]');
    expect(formatValue(undefined)).toBe('');
  });

  it('truncates to the limit and says by how much', () => {
    expect(truncate('abcdef', 6)).toBe('abcdef');
    expect(truncate('abcdefg', 6)).toBe('abcdef… (+1 chars)');
    expect(formatValue({ a: 'x'.repeat(200) }, 10)).toBe('{"a":"xxxx… (+198 chars)');
  });
});
