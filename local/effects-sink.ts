/**
 * A loopback stand-in for the ledger and the mailer. It records every call; the ledger honours
 * `Idempotency-Key` (a repeat returns the first result and is recorded as a replay), the mailer
 * does not (an email, once sent, is sent). `GET /` lists what it received as JSON.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';

export type EffectService = 'ledger' | 'mailer';

export interface EffectEntry {
  readonly service: EffectService;
  readonly idempotencyKey: string | undefined;
  readonly replay: boolean;
  readonly body: unknown;
  readonly receivedAt: string;
}

export interface EffectsSink {
  readonly url: string;
  readonly ledgerUrl: string;
  readonly mailerUrl: string;
  entries(): readonly EffectEntry[];
  /** Make the next `count` calls to a service answer 503 (for failure tests). */
  failNext(service: EffectService, count: number): void;
  stop(): Promise<void>;
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

export async function startEffectsSink(options: { port?: number } = {}): Promise<EffectsSink> {
  const entries: EffectEntry[] = [];
  const ledgerResults = new Map<string, { entryId: string }>();
  const failures: Record<EffectService, number> = { ledger: 0, mailer: 0 };

  const server: Server = createServer((request, response) => {
    void (async () => {
      const path = new URL(request.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '') || '/';
      const reply = (status: number, body: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      if (request.method === 'GET' && path === '/') return reply(200, entries);
      const service = path === '/ledger' ? 'ledger' : path === '/mailer' ? 'mailer' : undefined;
      if (request.method !== 'POST' || !service) return reply(404, { error: 'not found' });
      const body = await readBody(request);
      if (failures[service] > 0) {
        failures[service] -= 1;
        return reply(503, { error: `${service} unavailable (injected)` });
      }
      const header = request.headers['idempotency-key'];
      const idempotencyKey = Array.isArray(header) ? header[0] : header;
      const receivedAt = new Date().toISOString();
      if (service === 'ledger' && idempotencyKey !== undefined) {
        const first = ledgerResults.get(idempotencyKey);
        if (first) {
          entries.push({ service, idempotencyKey, replay: true, body, receivedAt });
          return reply(200, { ...first, replay: true });
        }
      }
      const result = { entryId: randomUUID() };
      if (service === 'ledger' && idempotencyKey !== undefined) ledgerResults.set(idempotencyKey, result);
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
    ledgerUrl: `${url}/ledger`,
    mailerUrl: `${url}/mailer`,
    entries: () => [...entries],
    failNext: (service, count) => {
      failures[service] += count;
    },
    stop: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
