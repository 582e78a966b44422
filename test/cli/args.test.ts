import { describe, expect, it } from 'vitest';
import {
  countOption,
  expectPositionals,
  instantOption,
  parseCommandArgs,
  parseInstant,
  providerArgument,
} from '../../cli/args.js';
import { UsageError } from '../../cli/errors.js';

const parse = (argv: string[]) =>
  parseCommandArgs(argv, { max: { type: 'string' }, force: { type: 'boolean' } }, 'x');

describe('parseCommandArgs', () => {
  it('reads positionals, the command options and the global ones', () => {
    const args = parse(['stripe', 'evt_1', '--max', '3', '--force', '--json', '--stack', 'Prod']);
    expect(args.positionals).toEqual(['stripe', 'evt_1']);
    expect(args.values.max).toBe('3');
    expect(args.values.force).toBe(true);
    expect(args.json).toBe(true);
    expect(args.stack).toBe('Prod');
    expect(args.help).toBe(false);
  });

  it('accepts -h and --help on every command', () => {
    expect(parse(['-h']).help).toBe(true);
    expect(parse(['--help']).help).toBe(true);
  });

  it('turns an unknown option into a one-line UsageError naming it, with exit code 2', () => {
    const error = (() => {
      try {
        parse(['--bogus']);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe('unknown option --bogus');
    expect((error as UsageError).exitCode).toBe(2);
    expect((error as UsageError).command).toBe('x');
  });

  it('says which option lacks its value', () => {
    expect(() => parse(['--max'])).toThrow('--max needs a value');
    expect(() => parse(['--stack'])).toThrow('--stack needs a value');
  });

  it('refuses an empty stack name', () => {
    expect(() => parse(['--stack', ' '])).toThrow('--stack needs a stack name');
  });
});

describe('countOption', () => {
  it('is undefined when absent and the number when valid', () => {
    expect(countOption(parse([]), 'max', 10, 'x')).toBeUndefined();
    expect(countOption(parse(['--max', '10']), 'max', 10, 'x')).toBe(10);
  });

  it.each(['0', '-1', '1.5', '11', 'abc', ''])('refuses %j', (raw) => {
    expect(() => countOption(parse(['--max', raw]), 'max', 10, 'x')).toThrow(UsageError);
  });
});

describe('parseInstant', () => {
  it('reads a date as midnight UTC and a zoneless date-time as UTC', () => {
    expect(parseInstant('2026-12-02', '--from', 'x').toISOString()).toBe('2026-12-02T00:00:00.000Z');
    expect(parseInstant('2026-12-02T10:30', '--from', 'x').toISOString()).toBe('2026-12-02T10:30:00.000Z');
  });

  it('keeps an explicit offset', () => {
    expect(parseInstant('2026-12-02T10:00:00-03:00', '--to', 'x').toISOString()).toBe(
      '2026-12-02T13:00:00.000Z',
    );
    expect(parseInstant('2026-12-02T10:00:00.250Z', '--to', 'x').toISOString()).toBe(
      '2026-12-02T10:00:00.250Z',
    );
  });

  it.each(['yesterday', '2026-13-45', '12/02/2026', '2026-12-02 10:00'])(
    'refuses %j with the option named',
    (raw) => {
      expect(() => parseInstant(raw, '--from', 'x')).toThrow(/--from/);
    },
  );

  it('is undefined through instantOption when the option is absent', () => {
    expect(instantOption(parse([]), 'max', 'x')).toBeUndefined();
  });
});

describe('providerArgument', () => {
  it('accepts the five route ids', () => {
    for (const id of ['stripe', 'github', 'shopify', 'asaas', 'standard'])
      expect(providerArgument(id, 'x')).toBe(id);
  });

  it('refuses an unknown provider, listing the known ones', () => {
    expect(() => providerArgument('paypal', 'x')).toThrow(/unknown provider "paypal": one of stripe, github/);
    expect(() => providerArgument('__proto__', 'x')).toThrow(UsageError);
    expect(() => providerArgument(undefined, 'x')).toThrow(/name a provider/);
  });
});

describe('expectPositionals', () => {
  it('names the first extra argument', () => {
    expect(() => expectPositionals(parse(['a', 'b', 'c']), 2, 'x')).toThrow('unexpected argument "c"');
    expect(() => expectPositionals(parse(['a', 'b']), 2, 'x')).not.toThrow();
  });
});
