/**
 * Small helpers shared by the provider modules: HMAC, constant-time comparison, strict decoders
 * and tolerant payload readers. None of them throws on untrusted input: a value that cannot be
 * decoded or parsed comes back as `undefined`, which callers treat as "no match".
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { type PayloadFormat, readJsonPayload } from '../shared/payload.js';
import type { WebhookRequest } from './types.js';

export function hmacSha256(key: string | Buffer, data: Buffer | string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

export function sha256(data: Buffer | string): Buffer {
  return createHash('sha256').update(data).digest();
}

/** Constant-time equality. `timingSafeEqual` throws on unequal lengths, so the length is checked first. */
export function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** True when `candidate` equals any of `expected`; every entry is compared (no early exit on a match). */
export function safeEqualAny(candidate: Buffer, expected: readonly Buffer[]): boolean {
  let matched = false;
  for (const digest of expected) {
    if (safeEqual(candidate, digest)) matched = true;
  }
  return matched;
}

const HEX = /^(?:[0-9a-fA-F]{2})+$/;

/**
 * Decodes hex strictly. `Buffer.from(s, 'hex')` silently stops at the first bad character, so a
 * header such as `abzz` would decode to one byte; here anything but whole hex pairs is `undefined`.
 */
export function decodeHex(value: string): Buffer | undefined {
  return HEX.test(value) ? Buffer.from(value, 'hex') : undefined;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Decodes canonical, padded standard base64 strictly. `Buffer.from(s, 'base64')` skips invalid
 * characters and accepts the URL-safe alphabet; here such input is `undefined`, as is an encoding
 * with non-zero padding bits (re-encoding must give the same text).
 */
export function decodeBase64(value: string): Buffer | undefined {
  if (value.length === 0 || !BASE64.test(value)) return undefined;
  const bytes = Buffer.from(value, 'base64');
  return bytes.toString('base64') === value ? bytes : undefined;
}

/**
 * Parses the body as a JSON object (not an array, primitive or `null`). Invalid UTF-8 is rejected
 * rather than replaced, so what is read is exactly what was signed. Never throws.
 */
export function parseJsonObject(raw: Buffer): Record<string, unknown> | undefined {
  return readJsonPayload(raw, undefined);
}

/**
 * The delivery's JSON payload, read by the one reader the processor uses too
 * (lambdas/shared/payload.ts): `format` says where a form-encoded body keeps its JSON.
 */
export function readRequestPayload(
  request: WebhookRequest,
  format: PayloadFormat = {},
): Record<string, unknown> | undefined {
  return readJsonPayload(request.rawBody, readHeader(request.headers, 'content-type'), format);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A header value, trimmed; `undefined` when absent, not a string or empty. */
export function readHeader(
  headers: Readonly<Record<string, string | undefined>>,
  name: string,
): string | undefined {
  const value: unknown = headers[name];
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

/** `value` when it is a non-empty string. */
export function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * An object id as a string: a non-empty string, or a safe integer (a larger number has already
 * lost precision in JSON.parse, so it names some other object).
 */
export function idString(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? String(value) : undefined;
  return nonEmptyString(value);
}

/** The property `key` of `value` when `value` is an object. */
export function field(value: unknown, key: string): unknown {
  return isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
}

/** A signature header that lists a signed timestamp and one or more signatures. */
export interface TimestampedSignatures {
  /** The timestamp exactly as sent: it is what was signed. */
  readonly timestampText: string;
  readonly timestamp: number;
  /** Every entry under the signature key (several while a secret is rotated). */
  readonly signatures: readonly string[];
}

/**
 * Reads `<key>=<value>` entries separated by `separator` (Stripe's `t=…,v1=…`, Paddle's
 * `ts=…;h1=…`). Undefined when the timestamp is missing, not digits, or given twice with different
 * values (nothing trustworthy to check against), or when there is no signature. Other keys are ignored.
 */
export function parseTimestampedSignatures(
  header: string,
  keys: { readonly separator: string; readonly timestamp: string; readonly signature: string },
): TimestampedSignatures | undefined {
  let timestampText: string | undefined;
  const signatures: string[] = [];
  for (const item of header.split(keys.separator)) {
    const equals = item.indexOf('=');
    if (equals < 0) continue;
    const key = item.slice(0, equals).trim();
    const value = item.slice(equals + 1).trim();
    if (key === keys.timestamp) {
      if (timestampText !== undefined && timestampText !== value) return undefined;
      timestampText = value;
    } else if (key === keys.signature) {
      signatures.push(value);
    }
  }
  if (timestampText === undefined || signatures.length === 0) return undefined;
  const timestamp = parseUnixSeconds(timestampText);
  return timestamp === undefined ? undefined : { timestampText, timestamp, signatures };
}

/** Whether any hex-encoded `signatures` entry equals any of `expected` (constant time per comparison). */
export function anyHexSignatureMatches(signatures: readonly string[], expected: readonly Buffer[]): boolean {
  return signatures.some((signature) => {
    const candidate = decodeHex(signature);
    return candidate !== undefined && safeEqualAny(candidate, expected);
  });
}

/** Digits only (no sign, exponent or fraction), as a safe integer. */
export function parseUnixSeconds(value: string): number | undefined {
  if (!/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}

const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * Parses an ISO 8601 date-time (`2024-06-12T16:45:03-04:00`, `...Z`, optional fraction) to epoch
 * seconds, rounded down. A value without an offset is read with `defaultOffsetMinutes` (UTC unless
 * told). Impossible dates (`2024-02-30`) are rejected, where `Date.parse` would roll them over.
 */
export function isoToEpochSeconds(value: unknown, defaultOffsetMinutes = 0): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = ISO_8601.exec(value);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, , zone] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  // setUTCFullYear, unlike Date.UTC, does not map years 0-99 to 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  if (date.getUTCDate() !== day) return undefined;
  const utcMillis = date.getTime();

  let offsetMinutes = defaultOffsetMinutes;
  if (zone !== undefined && zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offsetHours = Number(digits.slice(0, 2));
    const offsetMins = Number(digits.slice(2));
    if (offsetHours > 23 || offsetMins > 59) return undefined;
    offsetMinutes = sign * (offsetHours * 60 + offsetMins);
  }
  return Math.floor(utcMillis / 1000) - offsetMinutes * 60;
}

/** The configured secrets that can be used: non-empty strings (an empty key is a mistake, never a match). */
export function usableSecrets(secrets: readonly string[]): string[] {
  return Array.isArray(secrets)
    ? secrets.filter((secret) => typeof secret === 'string' && secret !== '')
    : [];
}

/**
 * The tolerance to enforce: the override when it is a finite, non-negative number, else the default.
 * Unlike stripe-node, 0 does not disable the check: it means "exactly now".
 */
export function effectiveTolerance(override: number | undefined, fallback: number): number {
  return typeof override === 'number' && Number.isFinite(override) && override >= 0 ? override : fallback;
}

/**
 * Whether a signed timestamp lies within `tolerance` seconds of `now`, in either direction: a
 * far-future timestamp is never legitimate. A non-finite `now` accepts nothing.
 */
export function withinTolerance(timestamp: number, now: number, tolerance: number): boolean {
  if (!Number.isFinite(now)) return false;
  return now - timestamp <= tolerance && timestamp - now <= tolerance;
}

/** Random hex for sample ids (development samples only). */
export const randomHex = (bytes: number): string => randomBytes(bytes).toString('hex');

/** `body` as bytes, for signing a sample. */
export const bodyBytes = (body: string | Buffer): Buffer =>
  typeof body === 'string' ? Buffer.from(body) : body;
