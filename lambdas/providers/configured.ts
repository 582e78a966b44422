/**
 * Providers by configuration: `WEBHOOK_HMAC_PROVIDERS` carries a list of `hmacProvider` configs
 * (./hmac.ts). The construct writes it, as JSON, into the receiver's and the processor's
 * environment from its `hmacProviders` prop; locally, `npm start`, `npm run send` and the `webhooks`
 * CLI read it from the shell, where it may also be `@<file>` (a JSON file, relative to the current
 * directory; several: `@a.json,@b.json`). Each JSON text holds one config object or an array of them.
 *
 * The one home of the variable: its name, how it is read and how it is written. The registry
 * (./index.ts) adds the configured providers to the built-in ones when the module loads, so a bad
 * config stops a function at cold start with a message naming the variable and the field.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Env, parsed } from '../shared/settings.js';
import {
  type HmacProviderConfig,
  HmacProviderConfigError,
  hmacProvider,
  parseHmacProviderConfig,
} from './hmac.js';
import type { Provider } from './types.js';

export const HMAC_PROVIDERS_ENV = 'WEBHOOK_HMAC_PROVIDERS';

/**
 * Lambda's environment holds at most 4 KB in all (the functions' other variables included); the
 * configs get at most this much of it, so a function always has room for the rest.
 * https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html
 */
export const HMAC_PROVIDERS_MAX_BYTES = 2_048;

function fail(message: string): never {
  throw new HmacProviderConfigError(`${HMAC_PROVIDERS_ENV}: ${message}`);
}

/** One JSON text -> its configs, each checked; `where` names it in errors. */
function configsIn(text: string, where: string): HmacProviderConfig[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new HmacProviderConfigError(`${where} is not JSON: ${(error as Error).message}`);
  }
  const list = Array.isArray(json) ? json : [json];
  return list.map((config, index) => {
    try {
      return parseHmacProviderConfig(config);
    } catch (error) {
      const at = Array.isArray(json) ? ` [${index}]` : '';
      throw new HmacProviderConfigError(`${where}${at}: ${(error as Error).message}`);
    }
  });
}

/**
 * The variable's value -> the configs it holds, each checked (`parseHmacProviderConfig`): JSON, or
 * `@<file>[,@<file>...]` (files relative to `cwd`). Unset or blank is none.
 */
export function readHmacProviderConfigs(
  raw: string | undefined,
  cwd: string = process.cwd(),
): HmacProviderConfig[] {
  const value = raw?.trim();
  if (!value) return [];
  if (!value.startsWith('@')) return configsIn(value, HMAC_PROVIDERS_ENV);
  const names = value.split(',').map((entry) => entry.trim());
  for (const name of names)
    if (!name.startsWith('@')) fail(`${JSON.stringify(name)} must be @<file> like the first entry`);
  return names.flatMap((name) => {
    const file = resolve(cwd, name.slice(1));
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      return fail(
        `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    return configsIn(text, `${HMAC_PROVIDERS_ENV} file ${file}`);
  });
}

/**
 * The configs as the construct writes them: compact JSON without what only the stack and the docs
 * and the local tools read (`retryWindow`, `secret.hint`, `secret.devSecret`, `sample`), unset when
 * there are none.
 */
export function writeHmacProviderConfigs(configs: readonly HmacProviderConfig[]): string | undefined {
  if (configs.length === 0) return undefined;
  const json = JSON.stringify(
    configs.map((config) => {
      const { retryWindow: _docs, sample: _sample, secret, ...rest } = parseHmacProviderConfig(config);
      // What verifying needs of `secret` (the hint and the development secret stay out of a deployed function).
      const kept = {
        ...(secret?.encoding === undefined ? {} : { encoding: secret.encoding }),
        ...(secret?.prefix === undefined ? {} : { prefix: secret.prefix }),
      };
      return Object.keys(kept).length === 0 ? rest : { ...rest, secret: kept };
    }),
  );
  const bytes = Buffer.byteLength(json);
  if (bytes > HMAC_PROVIDERS_MAX_BYTES)
    fail(
      `the configs take ${bytes} bytes as JSON, over the ${HMAC_PROVIDERS_MAX_BYTES} bytes they may use of ` +
        "a Lambda function's 4 KB environment: shorten names, pointers and headers, or configure fewer providers",
    );
  return json;
}

/** The setting the receiver's and the processor's settings list (written by the construct). */
export const HMAC_PROVIDERS = parsed(
  HMAC_PROVIDERS_ENV,
  (raw) => readHmacProviderConfigs(raw),
  (configs: readonly HmacProviderConfig[]) => writeHmacProviderConfigs(configs),
);

/** The providers `env` configures, built. */
export function configuredProviders(env: Env = process.env): Provider<string>[] {
  return readHmacProviderConfigs(env[HMAC_PROVIDERS_ENV]).map(hmacProvider);
}
