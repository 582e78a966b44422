/** Shared helpers for the provider tests: fixtures, request builders and mutations. */
import { readFileSync } from 'node:fs';
import type { WebhookRequest } from '../../lambdas/providers/types.js';

/** The exact bytes of `test/fixtures/<provider>/<name>`, as a provider would receive them. */
export function fixture(provider: string, name: string): Buffer {
  return readFileSync(new URL(`../fixtures/${provider}/${name}`, import.meta.url));
}

export function request(headers: Record<string, string | undefined>, body: Buffer | string): WebhookRequest {
  return { headers, rawBody: Buffer.isBuffer(body) ? body : Buffer.from(body) };
}

/** A copy of `bytes` with the byte at `index` (modulo the length) XOR-ed with a non-zero `mask`. */
export function flipByte(bytes: Buffer, index: number, mask = 0x01): Buffer {
  const copy = Buffer.from(bytes);
  const at = index % copy.length;
  copy[at] = (copy[at] ?? 0) ^ (mask & 0xff || 0x01);
  return copy;
}

/** `text` with the character at `index` replaced by a different one from the same alphabet. */
export function changeChar(text: string, index: number, alphabet = '0123456789abcdef'): string {
  const current = text[index] ?? '';
  const replacement = alphabet[(alphabet.indexOf(current) + 1) % alphabet.length] ?? alphabet[0];
  return text.slice(0, index) + replacement + text.slice(index + 1);
}

/** Bodies a provider must survive without throwing: not JSON, not an object, or odd JSON. */
export const GARBAGE_BODIES: readonly Buffer[] = [
  Buffer.alloc(0),
  Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x7f, 0xc3, 0x28]),
  Buffer.from('null'),
  Buffer.from('[]'),
  Buffer.from('[{"id":"evt_1","type":"x"}]'),
  Buffer.from('"evt_1"'),
  Buffer.from('42'),
  Buffer.from('1e400'),
  Buffer.from('{"id":1e400,"type":1e400,"event":1e400,"created":1e400,"updated_at":1e400}'),
  Buffer.from('{"id":123456789012345678901234567890,"data":{"id":123456789012345678901234567890}}'),
  Buffer.from('{"id":null,"type":null,"data":null,"account":null,"repository":null,"payment":null}'),
  Buffer.from('{"__proto__":{"id":"x"},"constructor":{"id":"y"},"event":"CONSTRUCTOR_X"}'),
  Buffer.from('{"id":"evt_1","type":"t","data":"not an object","related_object":[1],"created":"soon"}'),
  Buffer.from('{"id":"evt_1"'),
  Buffer.from('['.repeat(100_000)),
  Buffer.from(`{"id":"${'a'.repeat(100_000)}"}`),
  Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]),
  Buffer.from('payload=%7B%22id%22%3A1'),
];

/** Header values a verifier must survive without throwing. */
export const GARBAGE_HEADER_VALUES: readonly string[] = [
  '',
  ' ',
  ',',
  '=',
  't=',
  'v1=',
  't=,v1=',
  't=abc,v1=abc',
  't=1e3,v1=00',
  't=-1,v1=00',
  't=99999999999999999999,v1=00',
  'sha256=',
  'sha256=zz',
  'sha1=0000',
  'v1,',
  'v1,!!!!',
  'v1a,abcd',
  '=====',
  '\u0000\u00ff',
  'v1='.repeat(10_000),
  '🙂',
];
