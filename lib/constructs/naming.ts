/** One naming scheme for construct ids, output ids and alarm names. */
import type { ProviderId } from '../../lambdas/providers/types.js';

/** `stripe` -> `Stripe`, `github` -> `Github`: construct and output ids (`GithubWebhookUrl`). */
export const providerPascal = (provider: ProviderId): string =>
  provider.charAt(0).toUpperCase() + provider.slice(1);
