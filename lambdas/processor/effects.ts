/**
 * The effect adapter for an HTTP service, configured by URL (the construct's `effects` prop, read
 * from `EFFECTS`): one POST of the effect's JSON body with an `Idempotency-Key` header, the headers
 * the adapter is configured with (static, or read from Secrets Manager: ./effect-headers.ts), and
 * the service's answer handed back ({@link EffectResponse}). Whether the service honours that key
 * is declared, not guessed: it decides whether an effect may be re-run when the processor cannot
 * tell if it already ran (docs/processor.md).
 *
 * A failure says whether the service may have acted ({@link EffectError.performed}): an effect that
 * may act twice is never called again once a call of it may have happened (docs/rules.md, "Effects
 * in doubt"). An answer with one of the adapter's `permanentStatuses` can never succeed: the error
 * is {@link EffectError.permanent}, and the event fails now (docs/rules.md, "Failing an event now").
 */
import type { EffectAdapter, EffectCallOptions, EffectResponse } from './types.js';

/**
 * Whether a failed call may have acted:
 * - `no`: it certainly did not (the connection was refused, the name did not resolve, the service
 *   answered 4xx): calling it again is safe;
 * - `unknown`: it may have (a timeout, a connection reset after the request was written, a 5xx):
 *   an effect that is not repeat-safe is not called again; the claim records it as in doubt.
 */
export type EffectPerformed = 'no' | 'unknown';

export class EffectError extends Error {
  override readonly name = 'EffectError';
  /**
   * The call can never succeed (the service answered one of the adapter's `permanentStatuses`, or
   * the effect's own code says so): the event fails now, its claim FAILED with this message and its
   * message moved to the DLQ, instead of being retried (docs/rules.md, "Failing an event now").
   */
  readonly permanent: boolean;
  constructor(
    message: string,
    /** Whether the service may have acted on the failed call. @default 'unknown' */
    readonly performed: EffectPerformed = 'unknown',
    options: { readonly permanent?: boolean; readonly status?: number } = {},
  ) {
    super(message);
    this.permanent = options.permanent ?? false;
    if (options.status !== undefined) this.status = options.status;
  }
  /** The HTTP status the service answered, when it answered. */
  readonly status?: number;
}

/** Whether an error from an effect says the call certainly did not act (an {@link EffectError} with `performed: 'no'`). */
export function certainlyNotPerformed(error: unknown): boolean {
  return (
    error instanceof Error &&
    error.name === 'EffectError' &&
    (error as Partial<EffectError>).performed === 'no'
  );
}

/** The HTTP adapter's timeout when none is configured. */
export const DEFAULT_EFFECT_TIMEOUT_MS = 5_000;

/**
 * Network errors raised before any byte of the request can have reached the service (Node's fetch
 * puts the system error in `cause`): the call did not happen.
 */
const NOT_SENT_CODES: ReadonlySet<string | undefined> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The first string `code` along the error's `cause` chain (which may loop). */
function causeCode(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  for (let current = error; current instanceof Error && !seen.has(current); ) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The headers an adapter sends with each call (static ones, and those read from a secret). */
export interface EffectHeaderSource {
  /** The header values for the next call; throws when a secret cannot be read (the call is then not made). */
  headers(): Promise<Readonly<Record<string, string>>>;
  /** Forgets cached secret values: the service refused them (401, 403), so a rotation may have happened. */
  refresh?(): void;
}

/** Headers this adapter always sets itself: configured headers may not replace them. */
export const RESERVED_EFFECT_HEADERS: ReadonlySet<string> = new Set([
  'content-type',
  'content-length',
  'idempotency-key',
  'host',
  'transfer-encoding',
  'connection',
]);

export interface HttpEffectOptions {
  /** The adapter's name, for error messages. */
  readonly name: string;
  readonly url: string;
  /** Whether the service returns the first result for a repeated `Idempotency-Key`. @default false */
  readonly honoursIdempotencyKey?: boolean;
  /** @default 5000 ({@link DEFAULT_EFFECT_TIMEOUT_MS}) */
  readonly timeoutMs?: number;
  /** Headers sent with each call, besides `content-type` and `idempotency-key`. @default none */
  readonly headers?: EffectHeaderSource;
  /**
   * Answers that mean the request can never succeed (a 400 or 422 for a payload the service will
   * always reject, a 404 for a deleted customer): the event fails now instead of being retried.
   * @default none: every 4xx is retried (a 409 or 429 may succeed later)
   */
  readonly permanentStatuses?: readonly number[];
  readonly fetch?: typeof fetch;
}

/** The most of a service's answer kept in a response or an error message. */
const MAX_RESPONSE_CHARS = 64 * 1024;

export class HttpEffect implements EffectAdapter<EffectResponse> {
  readonly honoursIdempotencyKey: boolean;
  readonly timeoutMs: number;
  private readonly permanent: ReadonlySet<number>;

  constructor(private readonly options: HttpEffectOptions) {
    this.honoursIdempotencyKey = options.honoursIdempotencyKey ?? false;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_EFFECT_TIMEOUT_MS;
    this.permanent = new Set(options.permanentStatuses ?? []);
  }

  async call(
    body: Readonly<Record<string, unknown>>,
    idempotencyKey: string,
    callOptions: EffectCallOptions = {},
  ): Promise<EffectResponse> {
    const { name, url } = this.options;
    const doFetch = this.options.fetch ?? fetch;
    let configured: Readonly<Record<string, string>> = {};
    try {
      configured = (await this.options.headers?.headers()) ?? {};
    } catch (error) {
      // Nothing was sent: a retry (after the secret is readable) is safe for any effect.
      throw new EffectError(
        `${name}: its headers could not be read (${(error as Error).message}): the call was not made`,
        'no',
      );
    }
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = callOptions.signal ? AbortSignal.any([timeout, callOptions.signal]) : timeout;
    let response: Response;
    try {
      response = await doFetch(url, {
        method: 'POST',
        headers: { ...configured, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body: JSON.stringify(body),
        signal,
        // Following a 301, 302 or 303 would turn the POST into a GET without its body, and the
        // effect would pass for done. A redirect is answered as it is (below).
        redirect: 'manual',
      });
    } catch (error) {
      const code = causeCode(error);
      if (NOT_SENT_CODES.has(code)) {
        throw new EffectError(`${name} unreachable at ${url} (${code}): the call was not made`, 'no');
      }
      const reason = timeout.aborted
        ? `did not answer within ${this.timeoutMs} ms`
        : signal.aborted
          ? 'was cut off at the processing deadline'
          : `failed after the request was sent (${code ?? (error as Error).message})`;
      throw new EffectError(`${name} ${reason}: it may have acted`, 'unknown');
    }
    // Read the whole body (so the connection can be reused), then keep at most MAX_RESPONSE_CHARS.
    const text = (await response.text().catch(() => '')).slice(0, MAX_RESPONSE_CHARS);
    if (response.ok) return { status: response.status, headers: headersOf(response), body: parsed(text) };
    if (response.status === 401 || response.status === 403) this.options.headers?.refresh?.();
    throw failedAnswer(name, response.status, response.headers.get('location'), text, this.permanent);
  }
}

/** The answer's headers, names in lower case. */
function headersOf(response: Response): Record<string, string> {
  return Object.fromEntries(response.headers.entries());
}

/** JSON when the text parses as JSON, else the text itself (empty for no body). */
function parsed(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The error for an answer that is not 2xx. A 4xx is the service refusing the request (RFC 9110,
 * 15.5): it did not act. A 5xx may come after the service acted (a mail sent, then a failed write):
 * in doubt. A redirect is not followed: 301, 302, 307 and 308 say the resource is elsewhere, so the
 * service did not act here; a 303 may follow a request the service acted on (RFC 9110, 15.4.4).
 * A status the adapter lists as permanent makes the error permanent: the event fails now.
 */
function failedAnswer(
  name: string,
  status: number,
  location: string | null,
  text: string,
  permanentStatuses: ReadonlySet<number>,
): EffectError {
  // `status` is 300-599 here (fetch answers 200-599, and a 2xx is not a failure).
  const refused = status < 500 && status !== 303;
  const permanent = permanentStatuses.has(status);
  const redirect =
    status < 400 ? ` (redirects are not followed: configure the URL it names, ${location ?? 'none'})` : '';
  return new EffectError(
    `${name} answered ${status}${redirect}${refused ? '' : ' (it may have acted)'}${permanent ? ' (a permanent failure)' : ''}: ${text.slice(0, 200)}`,
    refused ? 'no' : 'unknown',
    { permanent, status },
  );
}
