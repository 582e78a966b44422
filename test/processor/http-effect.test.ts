/**
 * The HTTP effect adapter against real loopback servers: what it sends, and how each failure is
 * classed (did the service certainly not act, or may it have?), which decides whether an effect that
 * may act twice is ever called again (docs/rules.md, "Effects in doubt").
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { certainlyNotPerformed, EffectError, HttpEffect } from '../../lambdas/processor/effects.js';
import { freePort } from '../../local/emulators.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<string> {
  server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}/mailer`;
}

/** The error a call ends with (or undefined when it succeeds). */
async function failureOf(effect: HttpEffect, signal?: AbortSignal): Promise<EffectError | undefined> {
  try {
    await effect.call({ to: 'a@example.com' }, 'stripe:platform:evt_1:receipt', signal ? { signal } : {});
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(EffectError);
    return error as EffectError;
  }
}

describe('HttpEffect', () => {
  it('POSTs the JSON body with the idempotency key and resolves on a 2xx', async () => {
    const seen: Array<{ key: unknown; type: unknown; body: string }> = [];
    const url = await serve((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on('end', () => {
        seen.push({ key: request.headers['idempotency-key'], type: request.headers['content-type'], body });
        response.writeHead(201).end('{}');
      });
    });
    expect(await failureOf(new HttpEffect({ name: 'mailer', url }))).toBeUndefined();
    expect(seen).toEqual([
      {
        key: 'stripe:platform:evt_1:receipt',
        type: 'application/json',
        body: '{"to":"a@example.com"}',
      },
    ]);
  });

  it('says a 4xx answer did not act: the service refused the request', async () => {
    const url = await serve((_request, response) => response.writeHead(429).end('slow down'));
    const error = await failureOf(new HttpEffect({ name: 'mailer', url }));
    expect(error?.performed).toBe('no');
    expect(certainlyNotPerformed(error)).toBe(true);
    expect(error?.message).toBe('mailer answered 429: slow down');
  });

  it('says a 5xx answer may have acted', async () => {
    const url = await serve((_request, response) => response.writeHead(502).end('bad gateway'));
    const error = await failureOf(new HttpEffect({ name: 'mailer', url }));
    expect(error?.performed).toBe('unknown');
    expect(certainlyNotPerformed(error)).toBe(false);
    expect(error?.message).toBe('mailer answered 502 (it may have acted): bad gateway');
  });

  it('says a refused connection did not act', async () => {
    const url = `http://127.0.0.1:${await freePort()}/mailer`;
    const error = await failureOf(new HttpEffect({ name: 'mailer', url }));
    expect(error?.performed).toBe('no');
    expect(error?.message).toMatch(/^mailer unreachable at .* \(ECONNREFUSED\): the call was not made$/);
  });

  it('says a call that outlives the timeout may have acted', async () => {
    const url = await serve(() => {
      // Reads the request and never answers.
    });
    const started = Date.now();
    const error = await failureOf(new HttpEffect({ name: 'mailer', url, timeoutMs: 300 }));
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(error?.performed).toBe('unknown');
    expect(error?.message).toBe('mailer did not answer within 300 ms: it may have acted');
  });

  it('says a connection dropped after the request was written may have acted', async () => {
    const url = await serve((request) => {
      request.on('data', () => {});
      request.on('end', () => request.socket.destroy());
    });
    const error = await failureOf(new HttpEffect({ name: 'mailer', url }));
    expect(error?.performed).toBe('unknown');
    expect(error?.message).toMatch(/^mailer failed after the request was sent \(.+\): it may have acted$/);
  });

  it("stops at the caller's deadline and says the call may have acted", async () => {
    const url = await serve(() => {});
    const error = await failureOf(new HttpEffect({ name: 'mailer', url }), AbortSignal.timeout(200));
    expect(error?.performed).toBe('unknown');
    expect(error?.message).toBe('mailer was cut off at the processing deadline: it may have acted');
  });

  it('treats an error of any other kind as one that may have acted', () => {
    expect(certainlyNotPerformed(new Error('socket hang up'))).toBe(false);
    expect(certainlyNotPerformed(new EffectError('boom'))).toBe(false);
    expect(certainlyNotPerformed(new EffectError('refused', 'no'))).toBe(true);
  });
});
