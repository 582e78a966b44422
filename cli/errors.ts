/**
 * Expected failures of the CLI: printed as one line (`webhooks: <message>`), never with a stack
 * trace, and mapped to an exit code. Anything else is a bug and is reported as such.
 */

/** An expected failure: a missing claim, an unreachable stack, a refused AWS call. Exit 1. */
export class CliError extends Error {
  override readonly name: string = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** The command line itself is wrong (unknown option, missing argument). Exit 2, with a help hint. */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    /** The command whose help to point at (`inspect`, `dlq list`). */
    readonly command?: string,
  ) {
    super(message, 2);
  }
}

/** No claim matches what was asked for. Exit 1. */
export class ClaimNotFoundError extends CliError {
  override readonly name = 'ClaimNotFoundError';
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EHOSTUNREACH', 'ETIMEDOUT']);

/**
 * Turns what an AWS SDK call threw into a one-line CliError when the cause is expected (the local
 * stack is not running, no credentials, access denied, a missing resource); undefined otherwise.
 */
export function describeAwsError(error: unknown, target: string): CliError | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: string }).code ?? (error.cause as { code?: string } | undefined)?.code;
  const nested = (error as { errors?: Array<{ code?: string }> }).errors?.find((e) => e.code)?.code;
  if ((code && NETWORK_CODES.has(code)) || (nested && NETWORK_CODES.has(nested))) {
    return new CliError(`cannot reach ${target} (${code ?? nested}): is the stack running?`);
  }
  if (error.message === 'Region is missing') {
    return new CliError(
      `no AWS region for ${target}: set AWS_REGION, or a region in your profile (aws configure)`,
    );
  }
  if (error.name === 'CredentialsProviderError') {
    return new CliError(
      `no AWS credentials found for ${target}: configure them (aws configure, AWS_PROFILE)`,
    );
  }
  if ('$metadata' in error || '$fault' in error) {
    return new CliError(`${target}: ${error.name}: ${error.message}`);
  }
  return undefined;
}
