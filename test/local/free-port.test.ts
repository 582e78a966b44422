import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ephemeralPortRange, freePort } from '../../local/emulators.js';

const held: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  await Promise.all(held.splice(0).map((s) => new Promise((r) => s.close(r))));
});

describe('freePort', () => {
  it('reads the kernel ephemeral range, and falls back to Linux default when it cannot', () => {
    expect(ephemeralPortRange(() => '40000\t50000\n')).toEqual({ low: 40_000, high: 50_000 });
    expect(ephemeralPortRange(() => 'garbage')).toEqual({ low: 32_768, high: 60_999 });
    expect(
      ephemeralPortRange(() => {
        throw new Error('ENOENT');
      }),
    ).toEqual({ low: 32_768, high: 60_999 });
  });

  it('never returns a port from the ephemeral range, where the kernel may hand it to someone else', async () => {
    const { low, high } = ephemeralPortRange();
    for (let i = 0; i < 20; i++) {
      const port = await freePort();
      expect(port >= low && port <= high, `port ${port} in ${low}-${high}`).toBe(false);
      expect(port).toBeGreaterThanOrEqual(10_000);
    }
  });

  it('returns a port that is free: one a server can then bind', async () => {
    const port = await freePort();
    const server = createServer();
    held.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    expect(server.address()).toMatchObject({ port });
  });

  it('skips a port that is taken and tries another', async () => {
    const taken = await freePort();
    const server = createServer();
    held.push(server);
    await new Promise<void>((resolve) => server.listen(taken, '127.0.0.1', resolve));
    const { low } = ephemeralPortRange();
    const takenFraction = (taken - 10_000) / (low - 10_000);
    // The first draw lands on the taken port; the second one anywhere else.
    const draws = [takenFraction + 1e-9, 0.5];
    const port = await freePort(() => draws.shift() ?? Math.random());
    expect(port).not.toBe(taken);
    expect(draws).toHaveLength(0);
  });
});
