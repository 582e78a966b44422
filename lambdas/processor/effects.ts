/**
 * External effect adapters, configured by URL: a ledger that honours `Idempotency-Key` (a repeat
 * returns the first result), and a mailer that, by default, does not (a repeat is a second email).
 * Any non-2xx answer or network error throws, so the step is retried (its marker is not written).
 */
import type { LedgerAdapter, MailerAdapter } from './types.js';

export class EffectError extends Error {
  override readonly name = 'EffectError';
}

export interface HttpEffectOptions {
  readonly url: string;
  /** Whether the service returns the first result for a repeated `Idempotency-Key`. @default ledger true, mailer false */
  readonly honoursIdempotencyKey?: boolean;
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
}

async function postJson(
  service: string,
  options: HttpEffectOptions,
  body: Readonly<Record<string, unknown>>,
  idempotencyKey: string,
): Promise<void> {
  const doFetch = options.fetch ?? fetch;
  let response: Response;
  try {
    response = await doFetch(options.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
    });
  } catch (error) {
    throw new EffectError(`${service} unreachable at ${options.url}: ${(error as Error).message}`);
  }
  // Drain the body so the connection can be reused.
  const text = await response.text().catch(() => '');
  if (!response.ok) throw new EffectError(`${service} answered ${response.status}: ${text.slice(0, 200)}`);
}

export class HttpLedger implements LedgerAdapter {
  readonly honoursIdempotencyKey: boolean;
  constructor(private readonly options: HttpEffectOptions) {
    this.honoursIdempotencyKey = options.honoursIdempotencyKey ?? true;
  }
  post(entry: Readonly<Record<string, unknown>>, idempotencyKey: string): Promise<void> {
    return postJson('ledger', this.options, entry, idempotencyKey);
  }
}

/** A mailer sends what it is asked to: unless told otherwise, a repeated call is a second email. */
export class HttpMailer implements MailerAdapter {
  readonly honoursIdempotencyKey: boolean;
  constructor(private readonly options: HttpEffectOptions) {
    this.honoursIdempotencyKey = options.honoursIdempotencyKey ?? false;
  }
  send(message: Readonly<Record<string, unknown>>, idempotencyKey: string): Promise<void> {
    return postJson('mailer', this.options, message, idempotencyKey);
  }
}
