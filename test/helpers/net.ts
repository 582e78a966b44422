/**
 * Reachability checks for "listens on loopback only": this machine's own non-loopback addresses,
 * and whether a TCP connection to one of them (or to 127.0.0.1) is accepted on a port.
 */
import { connect } from 'node:net';
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
