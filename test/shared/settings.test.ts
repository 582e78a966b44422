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

  it('throws an error named ConfigError, which is how logs and the local runner tell it', () => {
    const error = (() => {
      try {
        example.load({});
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(String(error)).toBe('ConfigError: environment variable TABLE is required');
  });

  it('writes only what it is given, and nothing for a value that means unset', () => {
    // @ts-expect-error a required setting's value must be given (the type checker's rule)
    expect(example.toEnvironment({ limit: 5 })).toEqual({ LIMIT: '5' });
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
    const fromZero = integer('N', { default: 0, min: 0 });
    expect(ruleBroken(fromZero, 0)).toBeUndefined();
    expect(ruleBroken(fromZero, -1)).toBe('must be an integer of at least 0');
    expect(ruleBroken(integer('N', { default: 1, message: 'must be a port number' }), 0.5)).toBe(
      'must be a port number',
    );
  });

  it('tells a rule as one sentence whichever check fails, and the value given', () => {
    const limit = defineSettings({ limit: integer('LIMIT', { default: 10, min: 5, max: 100 }) });
    for (const raw of ['4', '101', '7.5', 'ten', '-1']) {
      expect(() => limit.load({ LIMIT: raw }), raw).toThrow(
        new ConfigError(`environment variable LIMIT must be an integer from 5 to 100, got "${raw}"`),
      );
    }
  });

  it('has no rule to break for a setting that is not a number', () => {
    expect(ruleBroken(flag('F'), 0)).toBeUndefined();
    expect(ruleBroken(requiredText('T'), -1)).toBeUndefined();
  });
});
