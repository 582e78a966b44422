/**
 * Free loopback ports for the local servers, and whether one is taken. Its own module, apart from
 * ./emulators.ts, so the runner can answer "port in use" without loading the emulators.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

/** Linux's default ephemeral range, used where /proc cannot be read. */
const DEFAULT_EPHEMERAL_RANGE = { low: 32_768, high: 60_999 } as const;
/** The lowest port handed out: above the well-known and most registered service ports. */
const LOWEST_PICKED_PORT = 10_000;

/** The kernel's ephemeral port range: where it picks ports for `listen(0)` and outgoing connections. */
export function ephemeralPortRange(
  read: () => string = () => readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8'),
): { low: number; high: number } {
  try {
    const [low, high] = read().trim().split(/\s+/).map(Number);
    if (low !== undefined && high !== undefined && Number.isInteger(low) && Number.isInteger(high))
      if (low > 0 && high >= low) return { low, high };
  } catch {
    // Not Linux, or /proc is not mounted: assume the default.
  }
  return DEFAULT_EPHEMERAL_RANGE;
}

/** Whether a server could bind `port` on 127.0.0.1 now (it is bound and released again). */
export async function isPortFree(port: number): Promise<boolean> {
  const server: Server = createServer();
  server.listen(port, '127.0.0.1');
  try {
    await Promise.race([
      once(server, 'listening'),
      once(server, 'error').then(([error]) => {
        throw error;
      }),
    ]);
  } catch {
    return false;
  }
  server.close();
  await once(server, 'close');
  return true;
}

/**
 * A free TCP port on 127.0.0.1 for a server that binds it later (DynamoDB Local's Java process takes
 * seconds). Picked at random below the ephemeral range, never from it: a port the kernel handed out
 * and took back can be handed straight to another `listen(0)` or used as the local end of an outgoing
 * connection before the server binds it, which is how a busy machine gets EADDRINUSE.
 */
export async function freePort(random: () => number = Math.random): Promise<number> {
  const { low } = ephemeralPortRange();
  const top = Math.min(low, 65_536) - 1;
  if (top > LOWEST_PICKED_PORT) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = LOWEST_PICKED_PORT + Math.floor(random() * (top - LOWEST_PICKED_PORT + 1));
      if (await isPortFree(port)) return port;
    }
  }
  // No room below the range (an unusual kernel setting) or all tried ports taken: ask the kernel.
  const server: Server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('could not allocate a free port');
  return address.port;
}
