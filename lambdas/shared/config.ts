/** Helpers for reading a Lambda's settings from environment variables, failing with a clear message. */

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export type Env = Readonly<Record<string, string | undefined>>;

export function required(env: Env, name: string): string {
  const value = env[name]?.trim();
  if (!value) throw new ConfigError(`environment variable ${name} is required`);
  return value;
}

export function positiveInteger(env: Env, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigError(
      `environment variable ${name} must be a positive integer, got ${JSON.stringify(raw)}`,
    );
  }
  return value;
}
