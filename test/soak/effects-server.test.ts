/**
 * The soak's effect services over HTTP: a key-honouring adapter acts once per key, a plain one on
 * every call; each fault acts (or not) and answers as documented; an outage refuses connections and
 * the adapter comes back on the same port; the same seed gives the same calls the same faults.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type EffectFaultRates,
  type EffectServers,
  effectFault,
  startEffectServers,
} from '../../soak/effects-server.js';

const NONE: EffectFaultRates = { slow: 0, actThenFail: 0, refuse: 0, hangUp: 0, reset: 0 };
let servers: EffectServers | undefined;

afterEach(async () => {
  await servers?.stop();
  servers = undefined;
});

async function start(rates: Partial<EffectFaultRates> = {}) {
  servers = await startEffectServers({
    seed: 'test',
    adapters: { ledger: true, mailer: false },
    rates: { ...NONE, ...rates },
    slowMs: [300, 300],
  });
  return servers;
}

const post = (url: string, key: string, timeoutMs = 5_000) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ payment: 'stripe:platform:pi_1' }),
    signal: AbortSignal.timeout(timeoutMs),
  });

describe('the soak effect services', () => {
  it('act once per key on a key-honouring adapter, and on every call otherwise', async () => {
    const s = await start();
    expect((await post(s.urls.ledger ?? '', 'k')).status).toBe(201);
    expect(await (await post(s.urls.ledger ?? '', 'k')).json()).toEqual({ ok: true, replay: true });
    expect((await post(s.urls.mailer ?? '', 'k')).status).toBe(201);
    expect((await post(s.urls.mailer ?? '', 'k')).status).toBe(201);
    expect(s.calls().map((c) => [c.adapter, c.acted, c.replay, c.subject])).toEqual([
      ['ledger', true, false, 'stripe:platform:pi_1'],
      ['ledger', false, true, 'stripe:platform:pi_1'],
      ['mailer', true, false, 'stripe:platform:pi_1'],
      ['mailer', true, false, 'stripe:platform:pi_1'],
    ]);
  });

  it('act, then answer after the delay, on a slow call: a caller that gives up first saw no answer', async () => {
    const s = await start({ slow: 1 });
    await expect(post(s.urls.mailer ?? '', 'k', 100)).rejects.toThrow();
    expect(s.calls()).toMatchObject([{ acted: true, fault: 'slow' }]);
  });

  it('act, then answer 500; refuse with 503 without acting; act, then hang up; hang up without acting', async () => {
    const cases: [Partial<EffectFaultRates>, number | 'error', boolean][] = [
      [{ actThenFail: 1 }, 500, true],
      [{ refuse: 1 }, 503, false],
      [{ hangUp: 1 }, 'error', true],
      [{ reset: 1 }, 'error', false],
    ];
    for (const [rates, answer, acted] of cases) {
      const s = await start(rates);
      const status = await post(s.urls.mailer ?? '', 'k').then(
        (r) => r.status,
        () => 'error' as const,
      );
      expect([status, s.calls()[0]?.acted]).toEqual([answer, acted]);
      await s.stop();
    }
  });

  it('refuses connections during an outage, then listens again on the same port', async () => {
    const s = await start();
    const url = s.urls.mailer ?? '';
    const outage = s.outage('mailer', 400);
    await new Promise((r) => setTimeout(r, 100));
    const refused = await post(url, 'k').catch(
      (error: Error & { cause?: { code?: string } }) => error.cause?.code,
    );
    expect(refused).toBe('ECONNREFUSED');
    await outage;
    expect((await post(url, 'k')).status).toBe(201);
    expect(s.outages()).toEqual([{ adapter: 'mailer', ms: 400 }]);
  });

  it('draws the same fault for the same adapter, key and call number, whatever the order of calls', () => {
    const rates = { slow: 0.2, actThenFail: 0.2, refuse: 0.2, hangUp: 0.2, reset: 0.1 };
    const draws = (seed: string) =>
      Array.from({ length: 50 }, (_, i) =>
        effectFault(seed, 'mailer', `key-${i % 10}`, Math.floor(i / 10), rates),
      );
    expect(draws('a')).toEqual(draws('a'));
    expect(draws('a')).not.toEqual(draws('b'));
    expect(new Set(draws('a'))).toEqual(
      new Set(['none', 'slow', 'actThenFail', 'refuse', 'hangUp', 'reset']),
    );
  });
});
