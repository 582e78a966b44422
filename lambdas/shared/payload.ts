/**
 * The one reader of a webhook body as the JSON object it carries, shared by the receiver (every
 * provider's `extract`) and the processor, so that what the receiver accepted the processor can read:
 * same UTF-8 rules, same byte-order mark handling, same content-type parsing. Never throws.
 */

export interface PayloadFormat {
  /**
   * For `application/x-www-form-urlencoded` bodies: the form field holding the JSON (GitHub's
   * `payload`). Without it, every body is read as JSON whatever its content type says.
   * https://docs.github.com/en/webhooks/using-webhooks/creating-webhooks
   */
  readonly formField?: string;
}

/** `Application/X-WWW-Form-Urlencoded; charset=UTF-8` -> `application/x-www-form-urlencoded`. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
}

/**
 * `fatal`: invalid UTF-8 is refused rather than replaced, so what is read is exactly what was signed.
 * `ignoreBOM: false` (the default) drops one leading byte-order mark, which JSON.parse would reject.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The body's JSON object, or undefined when it is not valid UTF-8, not JSON, or not an object
 * (arrays, primitives and `null` are not event payloads).
 */
export function readJsonPayload(
  rawBody: Buffer,
  contentType: string | undefined,
  format: PayloadFormat = {},
): Record<string, unknown> | undefined {
  try {
    let text = utf8.decode(rawBody);
    if (format.formField !== undefined && mediaType(contentType) === 'application/x-www-form-urlencoded') {
      const field = new URLSearchParams(text).get(format.formField);
      if (field === null) return undefined;
      text = field;
    }
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
