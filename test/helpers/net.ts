/**
 * Reachability checks for "listens on loopback only": this machine's own non-loopback addresses,
 * and whether a TCP connection to one of them (or to 127.0.0.1) is accepted on a port. And a
 * server that takes connections and never answers, for clients' timeouts.
 */
import { connect, createServer, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';

/** The machine's addresses other than loopback (link-local IPv6 left out: it needs a scope id). */
export function nonLoopbackAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .filter((entry) => !entry.internal && !entry.address.startsWith('fe80:'))
    .map((entry) => entry.address);
}

/** Resolves true when the connection is accepted, false when refused or not answered in time. */
export function accepts(host: string, port: number, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (result: boolean) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export interface SilentServer {
  /** `http://127.0.0.1:<port>`, for an AWS SDK client's endpoint. */
  readonly endpoint: string;
  /** The HTTP requests it has read (each `POST` line). */
  requests(): number;
  /** Closes it and every connection it holds, so a client still waiting fails. */
  close(): Promise<void>;
}

/** A server on loopback that reads requests and answers none, as a hung service does. */
export async function silentServer(): Promise<SilentServer> {
  let requests = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('data', (chunk) => {
      requests += (chunk.toString().match(/^POST /gm) ?? []).length;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
