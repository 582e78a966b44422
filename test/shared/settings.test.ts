import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  defineSettings,
  flag,
  integer,
  optionalInteger,
  optionalText,
  parsed,
  requiredText,
  ruleBroken,
} from '../../lambdas/shared/settings.js';

const example = defineSettings({
  table: requiredText('TABLE'),
  limit: integer('LIMIT', { default: 10, min: 1, max: 100 }),
  override: optionalInteger('OVERRIDE'),
  label: optionalText('LABEL'),
  verbose: flag('VERBOSE'),
  list: parsed(
    'LIST',
    (raw) => {
      if (raw?.includes(';')) throw new ConfigError('LIST separates its entries with commas, not semicolons');
      return raw ? raw.split(',') : [];
    },
    (list: readonly string[]) => (list.length ? list.join(',') : undefined),
  ),
});

describe('defineSettings', () => {
  it('maps each variable to its setting, blank meaning unset', () => {
    expect(example.ENV).toEqual({
      table: 'TABLE',
      limit: 'LIMIT',
      override: 'OVERRIDE',
      label: 'LABEL',
      verbose: 'VERBOSE',
      list: 'LIST',
    });
    expect(example.load({ TABLE: ' t ', LIMIT: ' ', LABEL: '', OVERRIDE: '7' })).toEqual({
      table: 't',
      limit: 10,
      override: 7,
      label: undefined,
      verbose: false,
      list: [],
    });
  });

  it('reads only the exact value true as on, as the functions always have', () => {
    expect(example.load({ TABLE: 't', VERBOSE: 'true' }).verbose).toBe(true);
    expect(example.load({ TABLE: 't', VERBOSE: 'TRUE' }).verbose).toBe(false);
  });

  it('throws one ConfigError naming each bad variable with its rule and the value given', () => {
    expect(() => example.load({ LIMIT: '101', OVERRIDE: 'x', LIST: 'a;b' })).toThrow(
      new ConfigError(
        'environment variable TABLE is required; ' +
          'environment variable LIMIT must be an integer from 1 to 100, got "101"; ' +
          'environment variable OVERRIDE must be a positive integer, got "x"; ' +
          'LIST separates its entries with commas, not semicolons',
      ),
    );
  });

  it('writes only what it is given, and nothing for a value that means unset', () => {
    expect(example.toEnvironment({ table: 't', verbose: false, list: [], override: undefined })).toEqual({
      TABLE: 't',
    });
    const all = { table: 't', limit: 50, override: 3, label: 'x', verbose: true, list: ['a', 'b'] };
    expect(example.toEnvironment(all)).toEqual({
      TABLE: 't',
      LIMIT: '50',
      OVERRIDE: '3',
      LABEL: 'x',
      VERBOSE: 'true',
      LIST: 'a,b',
    });
    expect(example.load(example.toEnvironment(all))).toEqual(all);
  });

  it('exposes a numeric setting’s rule for values known before run time', () => {
    expect(ruleBroken(example.settings.limit, 100)).toBeUndefined();
    expect(ruleBroken(example.settings.limit, 0)).toBe('must be an integer from 1 to 100');
    expect(ruleBroken(example.settings.limit, 2.5)).toBe('must be an integer from 1 to 100');
    expect(ruleBroken(integer('N', { default: 1 }), Number.MAX_SAFE_INTEGER + 2)).toBe(
      'must be a positive integer',
    );
  });
});
