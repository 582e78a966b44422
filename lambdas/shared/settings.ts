/**
 * One home for each function's environment variables: a setting is the variable's name, its rule
 * (a zod schema over the raw value, default included) and how a typed value is written back.
 * A function's settings module lists its settings once with {@link defineSettings}, which yields
 * the settings type, the run-time check (`load`), the writer the stack uses (`toEnvironment`) and
 * the rules the stack checks its props against at synth time ({@link ruleBroken}).
 *
 * Why zod/mini: the functional API tree-shakes to what the settings use (a few KB in a bundle),
 * and the same schema serves the Lambda, the construct and the local runner.
 */
import * as z from 'zod/mini';
import { parseFaultPoints } from './faults.js';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export type Env = Readonly<Record<string, string | undefined>>;

declare const REQUIRED: unique symbol;

/**
 * One environment variable. `T` is the typed value, `W` what `toEnvironment` accepts for it (wider
 * than `T` when a construct holds a partial value, like provider overrides), `R` whether a function
 * cannot start without it.
 */
export interface Setting<T, W = T, R extends boolean = boolean> {
  readonly name: string;
  /** Raw value (undefined when unset) -> typed value, the default applied. */
  readonly schema: z.ZodMiniType<T, string | undefined>;
  /** Typed value -> raw value; undefined leaves the variable unset. */
  readonly write: (value: W) => string | undefined;
  /**
   * For the type checker only (`toEnvironment` requires the value when true): never set, since no
   * code reads it at run time. The constructors' return types set `R`.
   */
  readonly [REQUIRED]?: R;
  /**
   * The rule on the value as written (a number of seconds, bytes, ...), for a value known before
   * run time: the stack checks its props with it (see {@link ruleBroken}).
   */
  readonly rule?: z.ZodMiniType<number, number>;
}

// biome-ignore lint/suspicious/noExplicitAny: any setting, whatever its value types
type AnySetting = Setting<any, any, boolean>;
type Settings = Readonly<Record<string, AnySetting>>;

type ValueOf<S> = S extends Setting<infer T, infer _W, infer _R> ? T : never;
type RequiredOf<S> = S extends Setting<infer _T, infer _W, infer R> ? R : never;
type WrittenOf<S> = S extends Setting<infer _T, infer W, infer _R> ? W : never;

/** The typed settings: a key per setting; a value that may be undefined makes its key optional. */
export type SettingsOf<F extends Settings> = {
  readonly [K in keyof F as undefined extends ValueOf<F[K]> ? never : K]: ValueOf<F[K]>;
} & {
  readonly [K in keyof F as undefined extends ValueOf<F[K]> ? K : never]?: ValueOf<F[K]>;
};

/** What `toEnvironment` takes: the required settings, and any of the others. */
export type EnvironmentOf<F extends Settings> = {
  readonly [K in keyof F as RequiredOf<F[K]> extends true ? K : never]: WrittenOf<F[K]>;
} & {
  readonly [K in keyof F as RequiredOf<F[K]> extends true ? never : K]?: WrittenOf<F[K]> | undefined;
};

export interface FunctionSettings<F extends Settings> {
  readonly settings: F;
  /** The variables' names, by setting. */
  readonly ENV: { readonly [K in keyof F]: string };
  /** The environment -> the typed settings; each issue's message names its variable and its rule. */
  readonly schema: z.ZodMiniType<SettingsOf<F>, Env>;
  /** Parses the environment, or throws one {@link ConfigError} naming each bad variable. */
  load(env: Env): SettingsOf<F>;
  /** Typed settings -> the variables: the only code that writes these names. */
  toEnvironment(values: EnvironmentOf<F>): Record<string, string>;
}

export function defineSettings<const F extends Settings>(settings: F): FunctionSettings<F> {
  const entries = Object.entries(settings);
  const ENV = Object.fromEntries(entries.map(([key, setting]) => [key, setting.name])) as {
    readonly [K in keyof F]: string;
  };
  const byName = z.object(Object.fromEntries(entries.map(([, setting]) => [setting.name, setting.schema])));
  const schema = z.pipe(
    byName,
    z.transform((values: Record<string, unknown>) =>
      Object.fromEntries(entries.map(([key, setting]) => [key, values[setting.name]])),
    ),
  ) as unknown as z.ZodMiniType<SettingsOf<F>, Env>;
  return {
    settings,
    ENV,
    schema,
    load(env) {
      const result = z.safeParse(schema, env);
      if (result.success) return result.data;
      throw new ConfigError(result.error.issues.map((issue) => issueMessage(issue, env)).join('; '));
    },
    toEnvironment(values) {
      const environment: Record<string, string> = {};
      for (const [key, setting] of entries) {
        const value = (values as Record<string, unknown>)[key];
        const raw = value === undefined ? undefined : setting.write(value);
        if (raw !== undefined) environment[setting.name] = raw;
      }
      return environment;
    },
  };
}

function issueMessage(issue: z.core.$ZodIssue, env: Env): string {
  const name = String(issue.path[0]);
  // The only custom issues are a nested parser's (`nested`), whose message is a whole sentence.
  if (issue.code === 'custom') return issue.message;
  const raw = env[name]?.trim();
  return `environment variable ${name} ${issue.message}${raw ? `, got ${JSON.stringify(raw)}` : ''}`;
}

/**
 * The rule of `setting` that `value` breaks (`must be a positive integer`), or undefined. For values
 * known before run time, such as a construct's props at synth time; the caller skips tokens.
 */
export function ruleBroken(setting: Pick<AnySetting, 'rule'>, value: number): string | undefined {
  if (!setting.rule) return undefined;
  const result = z.safeParse(setting.rule, value);
  return result.success ? undefined : result.error.issues[0]?.message;
}

/** Trimmed text; blank is unset. */
const text = z.pipe(
  z.optional(z.string()),
  z.transform((raw) => raw?.trim() || undefined),
);

/** A variable a function cannot start without (a table name, a queue URL). */
export function requiredText(name: string): Setting<string, string, true> {
  return {
    name,
    schema: z.pipe(text, z.string({ error: 'is required' })),
    write: (value) => value,
  };
}

/** Optional text; blank is unset. `check` may throw a {@link ConfigError} with a whole sentence. */
export function optionalText(
  name: string,
  check?: (value: string) => void,
): Setting<string | undefined, string, false> {
  return {
    name,
    schema: check
      ? z.pipe(
          text,
          z.transform((value, ctx) =>
            value === undefined
              ? undefined
              : nested(value, ctx, (defined) => {
                  check(defined);
                  return defined;
                }),
          ),
        )
      : text,
    write: (value) => value,
  };
}

/** `'true'` is on, anything else (unset included) is off; written only when on. */
export function flag(name: string): Setting<boolean, boolean, false> {
  return {
    name,
    schema: z.pipe(
      z.optional(z.string()),
      z.transform((raw) => raw === 'true'),
    ),
    write: (value) => (value ? 'true' : undefined),
  };
}

/**
 * `'true'` or `'false'`; unset is `defaultValue`, and any other value is refused (a typo must not
 * flip a behaviour silently). Written only when it differs from the default.
 */
export function toggle(name: string, defaultValue: boolean): Setting<boolean, boolean, false> {
  const error = 'must be true or false';
  return {
    name,
    schema: z.pipe(
      text,
      z._default(
        z.pipe(
          z.enum(['true', 'false'], { error }),
          z.transform((raw: 'true' | 'false') => raw === 'true'),
        ),
        defaultValue,
      ),
    ),
    write: (value) => (value === defaultValue ? undefined : String(value)),
  };
}

export interface IntegerOptions {
  readonly default: number;
  /** @default 1 */
  readonly min?: number;
  /** @default Number.MAX_SAFE_INTEGER */
  readonly max?: number;
  /**
   * The rule as told when broken. @default `must be a positive integer`, `must be an integer from
   * <min> to <max>` when a max is given, `must be an integer of at least <min>` for another min alone
   */
  readonly message?: string;
}

/** An integer (seconds, bytes, a count): a positive one unless `min`/`max` say otherwise. */
export function integer(name: string, options: IntegerOptions): Setting<number, number, false> {
  const rule = integerRule(options);
  return {
    name,
    schema: z.pipe(text, z._default(fromText(rule), options.default)),
    write: String,
    rule,
  };
}

/** An integer with no default: undefined when unset (a local override of the template's value). */
export function optionalInteger(
  name: string,
  options: Omit<IntegerOptions, 'default'> = {},
): Setting<number | undefined, number, false> {
  const rule = integerRule(options);
  return {
    name,
    schema: z.pipe(text, z.optional(fromText(rule))),
    write: String,
    rule,
  };
}

function integerRule(options: Omit<IntegerOptions, 'default'>): z.ZodMiniNumber<number> {
  const { min = 1, max = Number.MAX_SAFE_INTEGER } = options;
  const error = options.message ?? integerRuleText(min, max);
  // The schema's error is each of its checks' too: one rule, told the same way whichever fails.
  return z.number({ error }).check(z.int(), z.minimum(min), z.maximum(max));
}

function integerRuleText(min: number, max: number): string {
  if (max !== Number.MAX_SAFE_INTEGER) return `must be an integer from ${min} to ${max}`;
  return min === 1 ? 'must be a positive integer' : `must be an integer of at least ${min}`;
}

/** Text -> number (as `Number` reads it: `1e3` is 1000) -> `rule`. */
const fromText = (rule: z.ZodMiniNumber<number>) =>
  z.pipe(
    z.string(),
    z.pipe(
      z.transform((raw: string) => Number(raw)),
      rule,
    ),
  );

/** A variable in seconds read as milliseconds (the unit the code computes in). */
export function secondsAsMilliseconds(
  seconds: Setting<number, number, false>,
): Setting<number, number, false> {
  return {
    ...seconds,
    schema: z.pipe(
      seconds.schema,
      z.transform((value) => value * 1000),
    ),
    write: (ms) => seconds.write(ms / 1000),
  };
}

/**
 * A value with a parser of its own (JSON, a small language) that throws a {@link ConfigError}
 * (or any Error) whose message is a whole sentence naming the variable.
 */
export function parsed<T, W = T>(
  name: string,
  parse: (raw: string | undefined) => T,
  write: (value: W) => string | undefined,
): Setting<T, W, false> {
  return {
    name,
    schema: z.pipe(
      z.optional(z.string()),
      z.transform((raw, ctx) => nested(raw, ctx, parse)),
    ),
    write,
  };
}

function nested<I, O>(input: I, ctx: z.core.ParsePayload, parse: (input: I) => O): O {
  try {
    return parse(input);
  } catch (error) {
    ctx.issues.push({
      code: 'custom',
      input,
      message: error instanceof Error ? error.message : String(error),
    });
    return z.NEVER;
  }
}

// The settings more than one function reads.

export const CLAIMS_TABLE = requiredText('CLAIMS_TABLE_NAME');
export const EVENT_QUEUE_URL = requiredText('EVENT_QUEUE_URL');
/** The payload archive bucket; claim checks, archiving and re-sending are off without it. */
export const ARCHIVE_BUCKET = optionalText('ARCHIVE_BUCKET_NAME');
/** Local S3 servers (s3rver) need path-style URLs. */
export const ARCHIVE_FORCE_PATH_STYLE = flag('ARCHIVE_FORCE_PATH_STYLE');
/**
 * The least a claim lives: the DLQ's retention plus a redrive margin (./claim-retention.ts). The
 * default is the caller's, from there.
 */
export const claimRetention = (defaultSeconds: number) =>
  integer('CLAIM_RETENTION_SECONDS', { default: defaultSeconds });
/**
 * `{"stripe":"arn:aws:secretsmanager:..."}`: each provider's secret, read by ./secrets-manager.ts
 * (which checks it when the receiver first needs a secret).
 */
export const WEBHOOK_SECRET_ARNS = optionalText('WEBHOOK_SECRET_ARNS');
/** Recovery testing only (./faults.ts): checked at start-up, never set on a deployed stack. */
export const FAULT_POINTS = optionalText('FAULT_POINTS', (spec) => {
  parseFaultPoints(spec);
});
/** Shared by a local stack's processes, so a count of 1 fires once for the whole stack. */
export const FAULT_POINTS_STATE_DIR = optionalText('FAULT_POINTS_STATE_DIR');

/** One variable read on its own (the local runner's knobs). */
export function readSetting<S extends AnySetting>(setting: S, env: Env): ValueOf<S> {
  return (defineSettings({ value: setting }).load(env) as Record<string, unknown>).value as ValueOf<S>;
}
