/**
 * The soak's effect services: one HTTP server per adapter (the stack is synthesized with their URLs),
 * each recording every call and misbehaving on a schedule drawn from the seed.
 *
 * - An adapter that honours `Idempotency-Key` (the ledger) acts once per key and answers a repeated
 *   key with the first result (a replay); one that does not (the mailer) acts on every call.
 * - Per call, by the seed, the adapter's name, the call's key and how many calls with that key came
 *   before (so the same calls meet the same faults whatever the interleaving): it answers normally,
 *   acts then answers slowly (past the processor's effect timeout: a timeout after the work), acts
 *   then answers 5xx, refuses with 503 without acting, acts then drops the connection, or drops the
 *   connection without acting.
 * - Outage windows, from the seed's timeline: the adapter stops listening (new connections are
 *   refused, ECONNREFUSED) for a moment, then listens again on the same port.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { seededRandom } from './random.js';

export type EffectFaultKind = 'none' | 'slow' | 'actThenFail' | 'refuse' | 'hangUp' | 'reset';

export interface EffectCall {
  readonly adapter: string;
  readonly idempotencyKey: string | undefined;
  /** The business object the body names (`payment`), for the checker. */
  readonly subject: string | undefined;
  /** Whether the call acted (false: refused, reset before acting, or a replay of a key). */
  readonly acted: boolean;
  readonly replay: boolean;
  readonly fault: EffectFaultKind;
  readonly at: number;
}

export interface EffectFaultRates {
  readonly slow: number;
  readonly actThenFail: number;
  readonly refuse: number;
  readonly hangUp: number;
  readonly reset: number;
}

export const DEFAULT_EFFECT_FAULT_RATES: EffectFaultRates = {
  slow: 0.1,
  actThenFail: 0.06,
  refuse: 0.06,
  hangUp: 0.05,
  reset: 0.05,
};

export interface EffectServerOptions {
  readonly seed: string;
  /** Adapter name -> whether it honours `Idempotency-Key`. */
  readonly adapters: Readonly<Record<string, boolean>>;
  readonly rates?: EffectFaultRates;
  /** A slow answer's delay, drawn in this range (ms). @default [1500, 7000] */
  readonly slowMs?: readonly [number, number];
}

export interface EffectServers {
  /** Each adapter's URL (`http://127.0.0.1:<port>/<name>`). */
  readonly urls: Readonly<Record<string, string>>;
  calls(): readonly EffectCall[];
  /** The outage windows so far: adapter and length. */
  outages(): readonly { readonly adapter: string; readonly ms: number }[];
  /** Faults on (the run) or off (the final drain). */
  setCalm(calm: boolean): void;
  /** Stops listening for `ms` (new connections refused), then listens again on the same port. */
  outage(adapter: string, ms: number): Promise<void>;
  stop(): Promise<void>;
}

interface Adapter {
  readonly name: string;
  readonly honours: boolean;
  readonly server: Server;
  readonly sockets: Set<Socket>;
  port: number;
  down: boolean;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function subjectOf(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { payment?: unknown };
    return typeof body.payment === 'string' ? body.payment : undefined;
  } catch {
    return undefined;
  }
}

/** The fault a call meets: drawn from the seed, the adapter, the key and the call's number for that key. */
export function effectFault(
  seed: string,
  adapter: string,
  key: string,
  nth: number,
  rates: EffectFaultRates,
): EffectFaultKind {
  const roll = seededRandom(`${seed}/effects/${adapter}/${key}/${nth}`).next();
  let edge = 0;
  for (const kind of ['slow', 'actThenFail', 'refuse', 'hangUp', 'reset'] as const) {
    edge += rates[kind];
    if (roll < edge) return kind;
  }
  return 'none';
}

export async function startEffectServers(options: EffectServerOptions): Promise<EffectServers> {
  const rates = options.rates ?? DEFAULT_EFFECT_FAULT_RATES;
  const [slowMin, slowMax] = options.slowMs ?? [1500, 7000];
  const calls: EffectCall[] = [];
  const outages: { adapter: string; ms: number }[] = [];
  const acted = new Set<string>();
  const seen = new Map<string, number>();
  let calm = false;
  const adapters = new Map<string, Adapter>();

  const handle = (adapter: Adapter, request: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      const text = await readBody(request);
      const header = request.headers['idempotency-key'];
      const key = Array.isArray(header) ? header[0] : header;
      const callKey = `${adapter.name}\n${key ?? text}`;
      const nth = seen.get(callKey) ?? 0;
      seen.set(callKey, nth + 1);
      const fault = calm ? 'none' : effectFault(options.seed, adapter.name, key ?? text, nth, rates);
      const record = (didAct: boolean, replay: boolean) =>
        calls.push({
          adapter: adapter.name,
          idempotencyKey: key,
          subject: subjectOf(text),
          acted: didAct,
          replay,
          fault,
          at: Date.now(),
        });
      if (fault === 'refuse') {
        record(false, false);
        response.writeHead(503, { 'content-type': 'application/json' });
        return void response.end('{"error":"refused without acting (soak)"}');
      }
      if (fault === 'reset') {
        record(false, false);
        return void request.socket.destroy();
      }
      const replay = adapter.honours && key !== undefined && acted.has(callKey);
      if (adapter.honours && key !== undefined) acted.add(callKey);
      record(!replay, replay);
      if (fault === 'slow') {
        const roll = seededRandom(`${options.seed}/slow/${callKey}/${nth}`).next();
        await new Promise((r) => setTimeout(r, slowMin + roll * (slowMax - slowMin)));
      }
      if (fault === 'hangUp') return void request.socket.destroy();
      if (response.destroyed || request.socket.destroyed) return;
      if (fault === 'actThenFail') {
        response.writeHead(500, { 'content-type': 'application/json' });
        return void response.end('{"error":"failed after acting (soak)"}');
      }
      response.writeHead(replay ? 200 : 201, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ ok: true, replay }));
    })();
  };

  const listen = async (adapter: Adapter, port: number) => {
    adapter.server.listen(port, '127.0.0.1');
    await once(adapter.server, 'listening');
    const address = adapter.server.address();
    if (address === null || typeof address === 'string') throw new Error('effect server has no port');
    adapter.port = address.port;
  };

  for (const [name, honours] of Object.entries(options.adapters)) {
    const sockets = new Set<Socket>();
    const adapter: Adapter = {
      name,
      honours,
      sockets,
      port: 0,
      down: false,
      server: createServer((request, response) => handle(adapter, request, response)),
    };
    adapter.server.on('connection', (socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    await listen(adapter, 0);
    adapters.set(name, adapter);
  }

  const close = async (adapter: Adapter) => {
    for (const socket of adapter.sockets) socket.destroy();
    if (!adapter.server.listening) return;
    adapter.server.close();
    await once(adapter.server, 'close');
  };

  return {
    urls: Object.fromEntries(
      [...adapters.values()].map((a) => [a.name, `http://127.0.0.1:${a.port}/${a.name}`]),
    ),
    calls: () => [...calls],
    outages: () => [...outages],
    setCalm: (value) => {
      calm = value;
    },
    outage: async (name, ms) => {
      const adapter = adapters.get(name);
      if (adapter === undefined || adapter.down) return;
      adapter.down = true;
      const port = adapter.port;
      await close(adapter);
      outages.push({ adapter: name, ms });
      await new Promise((r) => setTimeout(r, ms));
      // The same port again: the stack's adapter URL names it. Retried while the kernel holds it.
      for (let attempt = 0; ; attempt++) {
        try {
          await listen(adapter, port);
          break;
        } catch (error) {
          if (attempt >= 50) throw error;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      adapter.down = false;
    },
    stop: async () => {
      await Promise.all([...adapters.values()].map(close));
    },
  };
}
