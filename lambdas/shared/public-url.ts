/**
 * The public URL of a webhook route as its provider sees it. Providers that sign the URL (Square,
 * Twilio) sign the one registered with them: the stack's API URL, or a custom domain in front of it.
 * The receiver builds it from the configured base (`PUBLIC_BASE_URL`, the construct's
 * `publicBaseUrl`), never from the request's Host header, which whoever sends the request chooses.
 */
import { ConfigError } from './settings.js';

/** The route path every provider is served on, below the base. */
export const webhookPath = (providerId: string): string => `/webhooks/${providerId}`;

/** Throws a {@link ConfigError} unless `base` is an absolute http(s) URL with no query, fragment or credentials. */
export function checkPublicBaseUrl(base: string): void {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new ConfigError(
      `PUBLIC_BASE_URL must be an absolute URL such as https://hooks.example.com, got ${JSON.stringify(base)}`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ConfigError(`PUBLIC_BASE_URL must be an http or https URL, got ${JSON.stringify(base)}`);
  if (url.search !== '' || url.hash !== '' || base.includes('?') || base.includes('#'))
    throw new ConfigError(`PUBLIC_BASE_URL must have no query or fragment, got ${JSON.stringify(base)}`);
  if (url.username !== '' || url.password !== '')
    throw new ConfigError('PUBLIC_BASE_URL must not carry credentials');
}

/**
 * `<base>/webhooks/<provider>[?<query>]`: the base as configured (one trailing `/` or more dropped),
 * the route's path, and the query string exactly as received (it is part of what the provider signed).
 */
export function publicWebhookUrl(base: string, providerId: string, rawQuery?: string): string {
  const trimmed = base.replace(/\/+$/, '');
  return `${trimmed}${webhookPath(providerId)}${rawQuery ? `?${rawQuery}` : ''}`;
}
