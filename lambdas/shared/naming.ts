/**
 * One naming scheme for a provider's construct ids, output ids and alarm names, shared by the stack
 * (lib/), the local stack (local/) and the CLI (cli/), which find a provider's URL by output id.
 */

/** `stripe` -> `Stripe`, `github` -> `Github`: construct and output ids (`GithubWebhookUrl`). */
export const providerPascal = (provider: string): string =>
  provider.charAt(0).toUpperCase() + provider.slice(1);

/** The stack output with the provider's webhook URL: `StripeWebhookUrl`, `GithubWebhookUrl`. */
export const webhookUrlOutputId = (provider: string): string => `${providerPascal(provider)}WebhookUrl`;

/** The stack output with the provider's secret ARN: `StripeSecretArn`. */
export const secretArnOutputId = (provider: string): string => `${providerPascal(provider)}SecretArn`;
