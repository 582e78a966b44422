/**
 * A provider from configuration: the HMAC signature schemes most webhook senders use, described as
 * data (which header, which digest and encoding, what is signed, where the event's id, type and
 * account are) instead of code. `hmacProvider(config)` returns a provider module like the built-in
 * ones; the configuration is checked when it is built, with one message naming each bad field.
 *
 *   signature  `<header>: [<prefix>]<encoding(HMAC-<algorithm>(secret, signed content))>`, several
 *              candidates in one header when `separator` is given (any one may match)
 *   signed     `{body}`, `{timestamp}.{body}` or `{id}.{timestamp}.{body}` over the raw body bytes
 *   fields     each from a header (`{ header }`), a JSON pointer into the body (`{ pointer }`,
 *              RFC 6901) or a constant (`{ value }`)
 *
 * Not yet wired into the construct's props or `npm start` (see docs/rules.md, "Providers by
 * configuration"); a registry built with `withProviders([hmacProvider(config)])` serves it.
 */
import { createHmac, randomUUID } from 'node:crypto';
import * as z from 'zod/mini';
import {
  bodyBytes,
  decodeBase64,
  decodeHex,
  effectiveTolerance,
  idString,
  isObject,
  parseUnixSeconds,
  randomHex,
  readHeader,
  readRequestPayload,
  safeEqualAny,
  usableSecrets,
  withinTolerance,
} from './crypto.js';
import { defineProvider } from './define.js';
import type {
  DevSampleOptions,
  ExtractResult,
  KeyRules,
  Provider,
  VerifyOptions,
  VerifyResult,
  WebhookRequest,
} from './types.js';

const headerName = z.pipe(
  z.string().check(z.regex(/^[A-Za-z0-9-]+$/, 'must be an HTTP header name (letters, digits, -)')),
  z.transform((name: string) => name.toLowerCase()),
);
const pointer = z.string().check(z.regex(/^(\/([^~/]|~[01])*)+$/, 'must be a JSON pointer such as /data/id'));
const source = z.union([
  z.strictObject({ header: headerName }),
  z.strictObject({ pointer }),
  z.strictObject({ value: z.string().check(z.minLength(1)) }),
]);
const keyRule = z.union([
  z.strictObject({ kind: z.literal('event-id') }),
  z.strictObject({ kind: z.literal('composite') }),
  z.strictObject({ kind: z.literal('business-object') }),
]);

/** The configuration schema (zod/mini): the type, and the check run when a provider is built. */
export const hmacProviderConfigSchema = z.strictObject({
  /** Route id: `POST /webhooks/<id>`; lower-case letters and digits. */
  id: z.string().check(z.regex(/^[a-z][a-z0-9]{1,31}$/, 'must be 2-32 lower-case letters and digits')),
  name: z.string().check(z.minLength(1)),
  signature: z.strictObject({
    header: headerName,
    algorithm: z.enum(['sha1', 'sha256', 'sha512']),
    encoding: z.enum(['hex', 'base64']),
    /** Text before the digest (`sha256=`, `v1,`). */
    prefix: z.optional(z.string()),
    /** Splits one header into several candidate signatures (rotation), e.g. `' '` or `','`. */
    separator: z.optional(z.string().check(z.minLength(1))),
  }),
  signedContent: z.enum(['{body}', '{timestamp}.{body}', '{id}.{timestamp}.{body}']),
  secret: z.optional(
    z.strictObject({
      /** How the secret string turns into the HMAC key. @default utf8 */
      encoding: z.optional(z.enum(['utf8', 'base64'])),
      /** Stripped from the secret before decoding (`whsec_`). */
      prefix: z.optional(z.string()),
      /** What the operator stores and where the sender shows it. */
      hint: z.optional(z.string()),
      /** The local stack's development secret. */
      devSecret: z.optional(z.string().check(z.minLength(1))),
    }),
  ),
  /** The signed timestamp (unix seconds) and how far from now it may be. Required when signed. */
  timestamp: z.optional(
    z.strictObject({
      header: headerName,
      toleranceSeconds: z.optional(z.int().check(z.positive())),
    }),
  ),
  eventId: source,
  eventType: source,
  /**
   * The account scope, in every idempotency key: a JSON pointer or a constant, never a header (no
   * signature covers one). @default the constant `defaultAccount`
   */
  account: z.optional(source),
  objectId: z.optional(source),
  objectKind: z.optional(source),
  /** @default `default` */
  defaultAccount: z.optional(z.string().check(z.minLength(1))),
  /** How long a claim is kept: at least the sender's retry window. */
  claimTtlSeconds: z.int().check(z.positive()),
  /** @default `{ default: { kind: 'event-id' } }` */
  keyRules: z.optional(
    z.strictObject({
      default: keyRule,
      byEventType: z.optional(z.record(z.string(), keyRule)),
    }),
  ),
  /** Header name prefixes kept with the queued event (the signature header never is). */
  forwardHeaders: z.optional(z.array(headerName)),
  /**
   * What `npm run send -- <id>` posts: the event types it knows (the first is the default) and a
   * body the id, type, object and account fields are written into, at their pointers.
   * @default the type `test.event` and a body holding only those fields
   */
  sample: z.optional(
    z.strictObject({
      types: z.optional(z.array(z.string().check(z.minLength(1))).check(z.minLength(1))),
      body: z.optional(z.record(z.string(), z.unknown())),
    }),
  ),
  /** The sender's retry behaviour and where it is documented, for the docs tables. */
  retryWindow: z.optional(z.strictObject({ text: z.string(), source: z.string() })),
});

export type HmacProviderConfig = z.input<typeof hmacProviderConfigSchema>;
type Config = z.output<typeof hmacProviderConfigSchema>;
type Source = z.output<typeof source>;

export class HmacProviderConfigError extends Error {
  override readonly name = 'HmacProviderConfigError';
}

const DEFAULT_TOLERANCE_SECONDS = 300;

/** The value at `path` in `input`, or undefined when there is none. */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function issueText(issue: z.core.$ZodIssue, input: unknown): string {
  if (issue.code === 'unrecognized_keys') return `has unknown field(s) ${issue.keys.join(', ')}`;
  if (issue.path.length > 0 && valueAt(input, issue.path) === undefined) return 'is required';
  if (issue.code === 'invalid_union')
    return 'must be { header }, { pointer } or { value } (or a known key rule)';
  return issue.message;
}

/** The configuration checked, with the rules that tie fields together. */
export function parseHmacProviderConfig(input: unknown): Config {
  const result = z.safeParse(hmacProviderConfigSchema, input);
  const where = (path: readonly PropertyKey[]) => (path.length ? path.map(String).join('.') : 'config');
  if (!result.success) {
    const id = isObject(input) && typeof input.id === 'string' ? ` ${JSON.stringify(input.id)}` : '';
    throw new HmacProviderConfigError(
      `HMAC provider${id}: ${result.error.issues.map((issue) => `${where(issue.path)} ${issueText(issue, input)}`).join('; ')}`,
    );
  }
  const config = result.data;
  const fail = (message: string): never => {
    throw new HmacProviderConfigError(`HMAC provider ${JSON.stringify(config.id)}: ${message}`);
  };
  if (config.signedContent.includes('{timestamp}') && config.timestamp === undefined)
    fail(`signedContent ${config.signedContent} needs timestamp.header`);
  if (config.signedContent.startsWith('{id}') && !('header' in config.eventId))
    fail('signedContent {id}.{timestamp}.{body} signs the event id, so eventId must come from a header');
  // Every key holds the account: a header no signature covers would let anyone who captured one
  // delivery replay it into another account (the built-in providers read it from the signed body).
  if (config.account !== undefined && 'header' in config.account)
    fail(
      'account must come from the signed body ({ pointer }) or be a constant ({ value }): no signature ' +
        'covers a header, so a captured delivery could be replayed into another account',
    );
  if (config.secret?.encoding === 'base64' && config.secret.devSecret !== undefined) {
    const raw = config.secret.devSecret.slice(config.secret.prefix?.length ?? 0);
    if (decodeBase64(raw) === undefined) fail('secret.devSecret is not base64 after its prefix');
  }
  return config;
}

/** A value at an RFC 6901 pointer; ids are read as strings (numbers only when exact). */
function atPointer(payload: unknown, path: string): string | undefined {
  let value: unknown = payload;
  for (const raw of path.split('/').slice(1)) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (!isObject(value) && !Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return idString(value);
}

function read(
  from: Source | undefined,
  request: WebhookRequest,
  payload: Record<string, unknown>,
): string | undefined {
  if (from === undefined) return undefined;
  if ('header' in from) return readHeader(request.headers, from.header);
  if ('pointer' in from) return atPointer(payload, from.pointer);
  return from.value;
}

/** Sets a value at a pointer, creating objects on the way (for samples). */
function setAtPointer(target: Record<string, unknown>, path: string, value: string): void {
  const keys = path
    .split('/')
    .slice(1)
    .map((raw) => raw.replaceAll('~1', '/').replaceAll('~0', '~'));
  let node = target;
  for (const key of keys.slice(0, -1)) {
    if (!isObject(node[key])) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  const last = keys.at(-1);
  if (last !== undefined) node[last] = value;
}

const describe = (from: Source): string =>
  'header' in from
    ? `header \`${from.header}\``
    : 'pointer' in from
      ? `body \`${from.pointer}\``
      : `\`${from.value}\``;

/** The configured sample types (the schema requires one at least), else `test.event`. */
function sampleTypes(types: readonly string[] | undefined): readonly [string, ...string[]] {
  const [first, ...rest] = types ?? [];
  return first === undefined ? ['test.event'] : [first, ...rest];
}

export function hmacProvider(input: HmacProviderConfig): Provider<string> {
  const config = parseHmacProviderConfig(input);
  const { signature } = config;
  const tolerance = config.timestamp?.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const defaultAccount = config.defaultAccount ?? 'default';

  const key = (secret: string): Buffer | undefined => {
    const raw =
      config.secret?.prefix && secret.startsWith(config.secret.prefix)
        ? secret.slice(config.secret.prefix.length)
        : secret;
    return config.secret?.encoding === 'base64' ? decodeBase64(raw) : Buffer.from(raw, 'utf8');
  };
  const content = (rawBody: Buffer, timestamp: string | undefined, id: string | undefined): Buffer => {
    if (config.signedContent === '{body}') return rawBody;
    const head = config.signedContent === '{timestamp}.{body}' ? `${timestamp}.` : `${id}.${timestamp}.`;
    return Buffer.concat([Buffer.from(head, 'utf8'), rawBody]);
  };
  const digest = (secretKey: Buffer, signed: Buffer): Buffer =>
    createHmac(signature.algorithm, secretKey).update(signed).digest();

  function verify(request: WebhookRequest, options: VerifyOptions): VerifyResult {
    const keys = usableSecrets(options.secrets)
      .map(key)
      .filter((k): k is Buffer => k !== undefined && k.length > 0);
    if (keys.length === 0) return { ok: false, reason: 'no_secret_configured' };
    const header = readHeader(request.headers, signature.header);
    if (header === undefined) return { ok: false, reason: 'missing_signature' };
    const parts = signature.separator === undefined ? [header] : header.split(signature.separator);
    const candidates = parts
      .map((part) => part.trim())
      .filter((part) => signature.prefix === undefined || part.startsWith(signature.prefix))
      .map((part) => part.slice(signature.prefix?.length ?? 0))
      .map((value) => (signature.encoding === 'hex' ? decodeHex(value) : decodeBase64(value)))
      .filter((value): value is Buffer => value !== undefined);
    if (candidates.length === 0) return { ok: false, reason: 'malformed_signature' };
    let timestamp: string | undefined;
    if (config.timestamp !== undefined) {
      timestamp = readHeader(request.headers, config.timestamp.header);
      if (timestamp === undefined || parseUnixSeconds(timestamp) === undefined)
        return { ok: false, reason: 'malformed_signature' };
    }
    const id = 'header' in config.eventId ? readHeader(request.headers, config.eventId.header) : undefined;
    if (config.signedContent.startsWith('{id}') && id === undefined)
      return { ok: false, reason: 'malformed_signature' };
    const signed = content(request.rawBody, timestamp, id);
    const expected = keys.map((k) => digest(k, signed));
    if (!candidates.some((candidate) => safeEqualAny(candidate, expected)))
      return { ok: false, reason: 'signature_mismatch' };
    if (timestamp !== undefined) {
      const seconds = parseUnixSeconds(timestamp) as number;
      if (
        !withinTolerance(seconds, options.nowSeconds, effectiveTolerance(options.toleranceSeconds, tolerance))
      )
        return { ok: false, reason: 'timestamp_outside_tolerance' };
    }
    return { ok: true };
  }

  const readPayload = (request: WebhookRequest) => readRequestPayload(request);

  function extract(request: WebhookRequest): ExtractResult {
    const payload = readPayload(request);
    if (payload === undefined)
      return { ok: false, reason: 'invalid_json', detail: 'body is not a JSON object' };
    const eventId = read(config.eventId, request, payload);
    if (eventId === undefined)
      return { ok: false, reason: 'missing_event_id', detail: `no event id at ${describe(config.eventId)}` };
    const eventType = read(config.eventType, request, payload);
    if (eventType === undefined)
      return {
        ok: false,
        reason: 'missing_event_type',
        detail: `no event type at ${describe(config.eventType)}`,
      };
    const objectId = read(config.objectId, request, payload);
    const objectKind = read(config.objectKind, request, payload);
    return {
      ok: true,
      event: {
        eventId,
        eventType,
        account: read(config.account, request, payload) ?? defaultAccount,
        ...(objectId === undefined ? {} : { objectId }),
        ...(objectKind === undefined ? {} : { objectKind }),
      },
    };
  }

  function sign(
    body: string | Buffer,
    secret: string,
    nowSeconds: number,
    headers: Readonly<Record<string, string>> = {},
  ): Record<string, string> {
    const secretKey = key(secret);
    if (secretKey === undefined)
      throw new HmacProviderConfigError(`${config.name}: the secret is not ${config.secret?.encoding}`);
    const timestamp = config.timestamp === undefined ? undefined : String(nowSeconds);
    const id = 'header' in config.eventId ? headers[config.eventId.header] : undefined;
    const mac = digest(secretKey, content(bodyBytes(body), timestamp, id)).toString(signature.encoding);
    return {
      [signature.header]: `${signature.prefix ?? ''}${mac}`,
      ...(config.timestamp === undefined ? {} : { [config.timestamp.header]: String(nowSeconds) }),
    };
  }

  function sample(type: string, options: DevSampleOptions) {
    const samePointer =
      config.objectId !== undefined &&
      'pointer' in config.objectId &&
      'pointer' in config.eventId &&
      config.objectId.pointer === config.eventId.pointer;
    // One field for both (an event named by its object): one value, whichever the caller fixed.
    const eventId = options.eventId ?? (samePointer ? options.objectId : undefined) ?? `evt_${randomHex(8)}`;
    const objectId = samePointer ? eventId : (options.objectId ?? `obj_${randomHex(6)}`);
    const body = structuredClone(config.sample?.body ?? {}) as Record<string, unknown>;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': `${config.name}-Webhooks`,
    };
    const put = (from: Source | undefined, value: string) => {
      if (from === undefined || 'value' in from) return;
      if ('header' in from) headers[from.header] = value;
      else setAtPointer(body, from.pointer, value);
    };
    put(config.eventId, eventId);
    put(config.eventType, type);
    put(config.objectId, objectId);
    put(config.account, defaultAccount);
    if (config.objectKind !== undefined && 'pointer' in config.objectKind && !config.sample?.body)
      put(config.objectKind, 'object');
    if (Object.keys(body).length === 0) body.id = randomUUID();
    return { body: JSON.stringify(body), headers, summary: `${type} ${eventId} about ${objectId}` };
  }

  const keyRules: KeyRules = config.keyRules ?? { default: { kind: 'event-id' } };
  return defineProvider({
    id: config.id,
    name: config.name,
    defaults: {
      claimTtlSeconds: config.claimTtlSeconds,
      ...(config.timestamp === undefined ? {} : { toleranceSeconds: tolerance }),
      keyRules,
    },
    defaultAccount,
    secret: {
      hint: config.secret?.hint ?? `the ${config.name} webhook signing secret`,
      devSecret: config.secret?.devSecret ?? `local-${config.id}-secret`,
    },
    headers: { secret: [signature.header], forward: config.forwardHeaders ?? [] },
    verify,
    extract,
    readPayload,
    dev: { sampleTypes: sampleTypes(config.sample?.types), sample, sign },
    // Described as data: its sender's API, if it has one, is unknown here.
    reconcile: { kind: 'none', why: 'a provider by configuration: no API is known for it' },
    docs: {
      signature: {
        header: `\`${signature.header}: ${signature.prefix ?? ''}…\`${signature.separator === undefined ? '' : ` (several, separated by \`${signature.separator}\`)`}`,
        signedContent: `\`${config.signedContent}\``,
        digest: `HMAC-${signature.algorithm.toUpperCase()} ${signature.encoding}; the secret ${config.secret?.encoding === 'base64' ? 'base64-decoded' : 'string'}${config.secret?.prefix ? ` after \`${config.secret.prefix}\`` : ''}`,
        tolerance:
          config.timestamp === undefined ? 'none (no signed timestamp)' : `${tolerance} s either way`,
      },
      identity: {
        eventId: describe(config.eventId),
        eventType: describe(config.eventType),
        account: config.account === undefined ? `\`${defaultAccount}\`` : describe(config.account),
        object: config.objectId === undefined ? 'none' : describe(config.objectId),
      },
      retryWindow: config.retryWindow ?? { text: 'as configured', source: "the sender's documentation" },
    },
  });
}
