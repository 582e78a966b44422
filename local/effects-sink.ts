/**
 * A loopback stand-in for the processor's effect adapters: `POST /<adapter>` for any adapter name
 * (`/ledger`, `/mailer`, ...). It records every call. An adapter declared as honouring
 * `Idempotency-Key` answers a repeated key with the first result and records the call as a replay;
 * any other records each call as new (an email, once sent, is sent). `GET /` lists what it received
 * as JSON.
 *
 * Faults, for recovery tests (in process with `fault`, or over HTTP with
 * `PUT /_faults/<adapter>` and a JSON {@link EffectFault} plus `count`; `DELETE /_faults` clears):
 * an adapter can refuse calls without acting, act and then answer slowly, act and then answer an
 * error, or act and then drop the connection.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { adapterNameProblem } from '../lambdas/processor/extension-names.js';

/** An effect adapter's name (`ledger`, `mailer`, ...). */
export type EffectService = string;

export interface EffectEntry {
  readonly service: EffectService;
  readonly idempotencyKey: string | undefined;
  readonly replay: boolean;
  readonly body: unknown;
  readonly receivedAt: string;
  /**
   * The request's headers (names in lower case), the transport's own left out: what the adapter
   * sent, its configured headers included (a secret's local value too: this is a development sink).
   */
  readonly headers: Readonly<Record<string, string>>;
}

/** Headers of the connection, not of the call. */
const TRANSPORT_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'accept-encoding',
  'sec-fetch-mode',
]);

function callHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (TRANSPORT_HEADERS.has(name) || value === undefined) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/**
 * How the next calls to an adapter misbehave:
 * - `refuse`: answers `status` (default 503) without acting (nothing recorded);
 * - `slow`: acts (records the call), then answers after `delayMs`;
 * - `actThenFail`: acts, then answers `status` (default 500);
 * - `hangUp`: acts, then closes the connection without an answer.
 */
export type EffectFault =
  | { readonly kind: 'refuse'; readonly status?: number }
  | { readonly kind: 'slow'; readonly delayMs: number }
  | { readonly kind: 'actThenFail'; readonly status?: number }
  | { readonly kind: 'hangUp' };

/** The path of the sink's fault controls (no adapter name starts with `_`). */
export const FAULTS_PATH = '/_faults';

function parseFault(body: unknown): { fault: EffectFault; count: number } | string {
  if (typeof body !== 'object' || body === null) return 'body must be a JSON object';
  const { kind, status, delayMs, count } = body as Record<string, unknown>;
  const times = count === undefined ? 1 : count;
  if (times !== '*' && (typeof times !== 'number' || !Number.isInteger(times) || times < 1))
    return 'count must be a positive integer or "*"';
  const n = times === '*' ? Number.POSITIVE_INFINITY : (times as number);
  const validStatus = (value: unknown) =>
    value === undefined ||
    (typeof value === 'number' && Number.isInteger(value) && value >= 400 && value <= 599);
  if (!validStatus(status)) return 'status must be an HTTP error status (400-599)';
  switch (kind) {
    case 'refuse':
    case 'actThenFail':
      return { fault: { kind, ...(status === undefined ? {} : { status: status as number }) }, count: n };
    case 'slow':
      if (typeof delayMs !== 'number' || delayMs < 0) return 'slow needs delayMs (milliseconds)';
      return { fault: { kind, delayMs }, count: n };
    case 'hangUp':
      return { fault: { kind }, count: n };
    default:
      return 'kind must be refuse, slow, actThenFail or hangUp';
  }
}

export interface EffectsSink {
  readonly url: string;
  /** The URL of one adapter: `<url>/<name>`. */
  urlOf(service: EffectService): string;
  /** Whether calls to `service` with a repeated `Idempotency-Key` are answered with the first result. */
  declare(service: EffectService, honoursIdempotencyKey: boolean): void;
  entries(): readonly EffectEntry[];
  /** Make the next `count` calls to a service answer 503 without acting (for failure tests). */
  failNext(service: EffectService, count: number): void;
  /** Make the next `count` calls (`Infinity`: all) to a service misbehave as `fault` says. */
  fault(service: EffectService, fault: EffectFault, count?: number): void;
  /** Clears every pending fault. */
  clearFaults(): void;
  stop(): Promise<void>;
}

export interface EffectsSinkOptions {
  readonly port?: number;
  /** Adapters that honour `Idempotency-Key`, by name (more can be declared later). @default none */
  readonly effects?: Readonly<Record<EffectService, { readonly honoursIdempotencyKey?: boolean }>>;
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function startEffectsSink(options: EffectsSinkOptions = {}): Promise<EffectsSink> {
  const entries: EffectEntry[] = [];
  const firstResults = new Map<string, { entryId: string }>();
  const faults = new Map<EffectService, { fault: EffectFault; remaining: number }>();
  const takeFault = (service: EffectService): EffectFault | undefined => {
    const pending = faults.get(service);
    if (pending === undefined) return undefined;
    pending.remaining -= 1;
    if (pending.remaining <= 0) faults.delete(service);
    return pending.fault;
  };
  const setFault = (service: EffectService, fault: EffectFault, count = 1) => {
    faults.set(service, { fault, remaining: count });
  };
  const honouring = new Set<EffectService>(
    Object.entries(options.effects ?? {})
      .filter(([, effect]) => effect.honoursIdempotencyKey === true)
      .map(([name]) => name),
  );

  const server: Server = createServer((request, response) => {
    void (async () => {
      const path = new URL(request.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '') || '/';
      const reply = (status: number, body: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      if (request.method === 'GET' && path === '/') return reply(200, entries);
      if (path === FAULTS_PATH && request.method === 'DELETE') {
        faults.clear();
        return reply(200, {});
      }
      if (path === FAULTS_PATH && request.method === 'GET') {
        return reply(200, Object.fromEntries(faults));
      }
      if (path.startsWith(`${FAULTS_PATH}/`) && request.method === 'PUT') {
        const target = path.slice(FAULTS_PATH.length + 1);
        if (adapterNameProblem(target) !== undefined) return reply(404, { error: 'not an adapter name' });
        const parsed = parseFault(await readBody(request));
        if (typeof parsed === 'string') return reply(400, { error: parsed });
        setFault(target, parsed.fault, parsed.count);
        return reply(200, { adapter: target, ...parsed.fault, count: parsed.count });
      }
      const service = path.slice(1);
      if (request.method !== 'POST' || adapterNameProblem(service) !== undefined) {
        return reply(404, { error: 'not found' });
      }
      const body = await readBody(request);
      const fault = takeFault(service);
      if (fault?.kind === 'refuse') {
        return reply(fault.status ?? 503, { error: `${service} refused the call (injected)` });
      }
      const header = request.headers['idempotency-key'];
      const idempotencyKey = Array.isArray(header) ? header[0] : header;
      const receivedAt = new Date().toISOString();
      const headers = callHeaders(request);
      const dedupes = honouring.has(service) && idempotencyKey !== undefined;
      const resultKey = `${service}\n${idempotencyKey}`;
      if (dedupes) {
        const first = firstResults.get(resultKey);
        if (first) {
          entries.push({ service, idempotencyKey, replay: true, body, receivedAt, headers });
          return reply(200, { ...first, replay: true });
        }
      }
      const result = { entryId: randomUUID() };
      if (dedupes) firstResults.set(resultKey, result);
      entries.push({ service, idempotencyKey, replay: false, body, receivedAt, headers });
      // The call has acted: what the caller hears about it is the fault's to decide.
      if (fault?.kind === 'slow') await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
      if (fault?.kind === 'hangUp') return void request.socket.destroy();
      if (fault?.kind === 'actThenFail') {
        return reply(fault.status ?? 500, { error: `${service} failed after acting (injected)` });
      }
      if (response.destroyed) return;
      return reply(201, result);
    })();
  });
  server.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('effects sink has no port');
  const url = `http://127.0.0.1:${address.port}`;
  return {
    url,
    urlOf: (service) => `${url}/${service}`,
    declare: (service, honours) => {
      if (honours) honouring.add(service);
      else honouring.delete(service);
    },
    entries: () => [...entries],
    failNext: (service, count) => setFault(service, { kind: 'refuse', status: 503 }, count),
    fault: setFault,
    clearFaults: () => faults.clear(),
    stop: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
