/**
 * The effect adapter for an HTTP service, configured by URL (the construct's `effects` prop, read
 * from `EFFECTS`): one POST of the effect's JSON body with an `Idempotency-Key` header. Whether the
 * service honours that key is declared, not guessed: it decides whether an effect may be re-run
 * when the processor cannot tell if it already ran (docs/processor.md). Any non-2xx answer or
 * network error throws, so the step is retried (its marker is not written).
 */
import type { EffectAdapter } from './types.js';

export class EffectError extends Error {
  override readonly name = 'EffectError';
}

export interface HttpEffectOptions {
  /** The adapter's name, for error messages. */
  readonly name: string;
  readonly url: string;
  /** Whether the service returns the first result for a repeated `Idempotency-Key`. @default false */
  readonly honoursIdempotencyKey?: boolean;
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
}

export class HttpEffect implements EffectAdapter {
  readonly honoursIdempotencyKey: boolean;

  constructor(private readonly options: HttpEffectOptions) {
    this.honoursIdempotencyKey = options.honoursIdempotencyKey ?? false;
  }

  async call(body: Readonly<Record<string, unknown>>, idempotencyKey: string): Promise<void> {
    const { name, url } = this.options;
    const doFetch = this.options.fetch ?? fetch;
    let response: Response;
    try {
      response = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 5_000),
      });
    } catch (error) {
      throw new EffectError(`${name} unreachable at ${url}: ${(error as Error).message}`);
    }
    // Drain the body so the connection can be reused.
    const text = await response.text().catch(() => '');
    if (!response.ok) throw new EffectError(`${name} answered ${response.status}: ${text.slice(0, 200)}`);
  }
}
