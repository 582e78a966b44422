/**
 * A loopback stand-in for the processor's effect adapters: `POST /<adapter>` for any adapter name
 * (`/ledger`, `/mailer`, ...). It records every call. An adapter declared as honouring
 * `Idempotency-Key` answers a repeated key with the first result and records the call as a replay;
 * any other records each call as new (an email, once sent, is sent). `GET /` lists what it received
 * as JSON.
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
}

export interface EffectsSink {
  readonly url: string;
  /** The URL of one adapter: `<url>/<name>`. */
  urlOf(service: EffectService): string;
  /** Whether calls to `service` with a repeated `Idempotency-Key` are answered with the first result. */
  declare(service: EffectService, honoursIdempotencyKey: boolean): void;
  entries(): readonly EffectEntry[];
  /** Make the next `count` calls to a service answer 503 (for failure tests). */
  failNext(service: EffectService, count: number): void;
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
  const failures = new Map<EffectService, number>();
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
      const service = path.slice(1);
      if (request.method !== 'POST' || adapterNameProblem(service) !== undefined) {
        return reply(404, { error: 'not found' });
      }
      const body = await readBody(request);
      const failing = failures.get(service) ?? 0;
      if (failing > 0) {
        failures.set(service, failing - 1);
        return reply(503, { error: `${service} unavailable (injected)` });
      }
      const header = request.headers['idempotency-key'];
      const idempotencyKey = Array.isArray(header) ? header[0] : header;
      const receivedAt = new Date().toISOString();
      const dedupes = honouring.has(service) && idempotencyKey !== undefined;
      const resultKey = `${service}\n${idempotencyKey}`;
      if (dedupes) {
        const first = firstResults.get(resultKey);
        if (first) {
          entries.push({ service, idempotencyKey, replay: true, body, receivedAt });
          return reply(200, { ...first, replay: true });
        }
      }
      const result = { entryId: randomUUID() };
      if (dedupes) firstResults.set(resultKey, result);
      entries.push({ service, idempotencyKey, replay: false, body, receivedAt });
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
    failNext: (service, count) => {
      failures.set(service, (failures.get(service) ?? 0) + count);
    },
    stop: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
