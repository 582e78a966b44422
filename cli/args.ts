/**
 * Argument handling shared by every command: node:util `parseArgs` in strict mode, the options
 * every command accepts (`--stack`, `--json`, `--help`), and the value checks, each failing with a
 * UsageError that names the option.
 */
import { parseArgs } from 'node:util';
import { isProviderId, PROVIDER_IDS, type ProviderId } from '../lambdas/providers/types.js';
import { UsageError } from './errors.js';

export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
}
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** Accepted by every command. */
export const GLOBAL_OPTIONS = {
  stack: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpecs;

export const GLOBAL_OPTIONS_HELP = `  --stack NAME   a deployed stack: outputs from CloudFormation, your default AWS credentials and region
  --json         JSON on stdout, for scripts (default: tables)
  -h, --help     this help`;

/**
 * Where a doc is for someone who installed the package (it ships docs/: package.json "files"), as
 * help texts name it: `node_modules/idempotent-webhook-receiver/docs/operations.md`.
 * test/cli/help-docs.test.ts checks that every docs path a help text names exists in docs/.
 */
export function docsPath(file: string): string {
  return `node_modules/idempotent-webhook-receiver/docs/${file}`;
}

export interface ParsedArgs {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
  readonly stack: string | undefined;
  readonly json: boolean;
  readonly help: boolean;
}

/** Parses one command's arguments; unknown options and missing values are UsageErrors. */
export function parseCommandArgs(argv: readonly string[], options: OptionSpecs, command: string): ParsedArgs {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { ...options, ...GLOBAL_OPTIONS },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(usageMessage(error), command);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const stack = values.stack;
  if (stack !== undefined && (typeof stack !== 'string' || stack.trim() === ''))
    throw new UsageError('--stack needs a stack name', command);
  return {
    values,
    positionals: parsed.positionals,
    stack: typeof stack === 'string' ? stack.trim() : undefined,
    json: values.json === true,
    help: values.help === true,
  };
}

/** node:util's messages, shortened to one line without its advice about `--`. */
function usageMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const unknown = /Unknown option '([^']+)'/.exec(message);
  if (unknown) return `unknown option ${unknown[1]}`;
  const missing = /Option '(?:-\w, )?(--[\w-]+)(?: <value>)?' argument missing/.exec(message);
  if (missing) return `${missing[1]} needs a value`;
  const positional = /Unexpected argument '([^']+)'/.exec(message);
  if (positional) return `unexpected argument ${positional[1]}`;
  return message.split('\n')[0] ?? message;
}

export function stringOption(args: ParsedArgs, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === 'string' ? value : undefined;
}

export function booleanOption(args: ParsedArgs, name: string): boolean {
  return args.values[name] === true;
}

/** A whole number from 1 to `max`, or undefined when the option is absent. */
export function countOption(
  args: ParsedArgs,
  name: string,
  max: number,
  command: string,
): number | undefined {
  const raw = stringOption(args, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < 1 || value > max)
    throw new UsageError(
      `--${name} must be a whole number from 1 to ${max}, got ${JSON.stringify(raw)}`,
      command,
    );
  return value;
}

/** Seconds to wait, a whole number from 0 to `max`; `fallback` when the option is absent. */
export function secondsOption(
  args: ParsedArgs,
  name: string,
  max: number,
  fallback: number,
  command: string,
): number {
  const raw = stringOption(args, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value > max)
    throw new UsageError(
      `--${name} must be a whole number of seconds from 0 to ${max}, got ${JSON.stringify(raw)}`,
      command,
    );
  return value;
}

/** An ISO-8601 instant (`2026-12-02`, `2026-12-02T10:00:00Z`); a time without a zone is read as UTC. */
export function instantOption(args: ParsedArgs, name: string, command: string): Date | undefined {
  const raw = stringOption(args, name);
  if (raw === undefined) return undefined;
  return parseInstant(raw, `--${name}`, command);
}

export function parseInstant(raw: string, label: string, command: string): Date {
  const text = raw.trim();
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text))
    throw new UsageError(
      `${label} must be an ISO-8601 time such as 2026-12-02T10:00:00Z, got ${raw}`,
      command,
    );
  // A date-time without an offset is local time to Date.parse: operators mean UTC, as the archive does.
  const withZone = /T.*(Z|[+-]\d{2}:?\d{2})$/.test(text) || !text.includes('T') ? text : `${text}Z`;
  const ms = Date.parse(withZone);
  if (Number.isNaN(ms)) throw new UsageError(`${label} is not a valid time: ${raw}`, command);
  return new Date(ms);
}

export function providerArgument(value: string | undefined, command: string): ProviderId {
  if (value === undefined) throw new UsageError(`name a provider (${PROVIDER_IDS.join(', ')})`, command);
  if (!isProviderId(value))
    throw new UsageError(
      `unknown provider ${JSON.stringify(value)}: one of ${PROVIDER_IDS.join(', ')}`,
      command,
    );
  return value;
}

/** Fails when more positionals were given than the command takes. */
export function expectPositionals(args: ParsedArgs, max: number, command: string): void {
  const extra = args.positionals[max];
  if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}`, command);
}
