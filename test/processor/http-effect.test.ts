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
    expect(error?.message).toBe(
      'mailer failed after the request was sent (UND_ERR_SOCKET): it may have acted',
    );
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
    expect(new EffectError('boom').performed).toBe('unknown');
    expect(certainlyNotPerformed(new EffectError('refused', 'no'))).toBe(true);
    // Only an Error named EffectError counts (a user's bundle may hold its own copy of the class).
    class OtherCopy extends Error {
      override readonly name = 'EffectError';
      readonly performed = 'no';
    }
    expect(certainlyNotPerformed(new OtherCopy('refused'))).toBe(true);
    expect(certainlyNotPerformed(Object.assign(new Error('refused'), { performed: 'no' }))).toBe(false);
    expect(certainlyNotPerformed({ name: 'EffectError', performed: 'no' })).toBe(false);
    expect(certainlyNotPerformed(undefined)).toBe(false);
  });

  it('defaults to a service that ignores Idempotency-Key, and a 5 s timeout', () => {
    const effect = new HttpEffect({ name: 'mailer', url: 'http://127.0.0.1:1/mailer' });
    expect(effect.honoursIdempotencyKey).toBe(false);
    expect(effect.timeoutMs).toBe(5_000);
  });

  it.each([
    [400, 'no'],
    [499, 'no'],
    [500, 'unknown'],
    [503, 'unknown'],
  ] as const)('classes an answer of %i as performed: %s', async (status, performed) => {
    const url = await serve((_request, response) => response.writeHead(status).end('why'));
    const error = await failureOf(new HttpEffect({ name: 'mailer', url }));
    expect(error?.performed).toBe(performed);
    expect(error?.message).toBe(
      `mailer answered ${status}${performed === 'no' ? '' : ' (it may have acted)'}: why`,
    );
  });

  it('keeps the first 200 characters of an error answer, and none of a body it could not read', async () => {
    const long = await serve((_request, response) => response.writeHead(400).end('x'.repeat(1_000)));
    expect((await failureOf(new HttpEffect({ name: 'mailer', url: long })))?.message).toBe(
      `mailer answered 400: ${'x'.repeat(200)}`,
    );
    server?.close();
    // The status arrived, then the connection dropped mid-body.
    const cut = await serve((_request, response) => {
      response.writeHead(502, { 'content-length': '100' });
      response.write('partial', () => response.socket?.destroy());
    });
    const error = await failureOf(new HttpEffect({ name: 'mailer', url: cut }));
    expect(error?.message).toBe('mailer answered 502 (it may have acted): ');
    expect(error?.performed).toBe('unknown');
  });

  // Following a 301, 302 or 303 turns the POST into a GET without its body: the effect passed for
  // done while the service never saw it.
  it.each([
    [300, 'no'],
    [301, 'no'],
    [302, 'no'],
    [303, 'unknown'],
    [307, 'no'],
    [308, 'no'],
  ] as const)('does not follow a redirect (%i): the call fails, performed: %s', async (status, performed) => {
    const seen: string[] = [];
    const url = await serve((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      request.resume();
      // A 300 (Multiple Choices) need not name one.
      const location = status === 300 ? {} : { location: '/elsewhere' };
      if (request.url === '/mailer') response.writeHead(status, location).end('moved');
      else response.writeHead(200).end('{}');
    });
    const error = await failureOf(new HttpEffect({ name: 'mailer', url }));
    expect(seen).toEqual(['POST /mailer']);
    expect(error?.performed).toBe(performed);
    expect(error?.message).toBe(
      `mailer answered ${status} (redirects are not followed: configure the URL it names, ${status === 300 ? 'none' : '/elsewhere'})${performed === 'no' ? '' : ' (it may have acted)'}: moved`,
    );
  });

  it('says a host that does not resolve did not act', async () => {
    // RFC 6761: no name under .invalid resolves (ENOTFOUND, or EAI_AGAIN without a resolver).
    const error = await failureOf(new HttpEffect({ name: 'mailer', url: 'http://effects.invalid/mailer' }));
    expect(error?.performed).toBe('no');
    expect(error?.message).toMatch(
      /^mailer unreachable at http:\/\/effects\.invalid\/mailer \((ENOTFOUND|EAI_AGAIN)\): the call was not made$/,
    );
  });

  describe('the network error it reads (fetch fails with the system error as its cause)', () => {
    /** An effect whose fetch fails with `error`, as Node's fetch does: `TypeError('fetch failed', { cause })`. */
    const failingWith = (cause: unknown) =>
      new HttpEffect({
        name: 'mailer',
        url: 'http://crm.example/notes',
        fetch: () => Promise.reject(new TypeError('fetch failed', { cause })),
      });
    const systemError = (code: string) => Object.assign(new Error(`connect ${code}`), { code });

    it.each([
      'ECONNREFUSED',
      'ENOTFOUND',
      'EAI_AGAIN',
      'EHOSTUNREACH',
      'ENETUNREACH',
      'UND_ERR_CONNECT_TIMEOUT',
    ])('%s: not sent, so the call did not act', async (code) => {
      const error = await failureOf(failingWith(systemError(code)));
      expect(error?.performed).toBe('no');
      expect(error?.message).toBe(
        `mailer unreachable at http://crm.example/notes (${code}): the call was not made`,
      );
    });

    it.each(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'])(
      '%s: after the request was sent, so it may have acted',
      async (code) => {
        const error = await failureOf(failingWith(systemError(code)));
        expect(error?.performed).toBe('unknown');
        expect(error?.message).toBe(`mailer failed after the request was sent (${code}): it may have acted`);
      },
    );

    it('reads a code further down the cause chain', async () => {
      const deep = new Error('outer', { cause: new Error('middle', { cause: systemError('ECONNREFUSED') }) });
      expect((await failureOf(failingWith(deep)))?.performed).toBe('no');
    });

    it("names the error's message when no code is found, even along a chain that loops", async () => {
      expect((await failureOf(failingWith(undefined)))?.message).toBe(
        'mailer failed after the request was sent (fetch failed): it may have acted',
      );
      const looping = new Error('a');
      looping.cause = new Error('b', { cause: looping });
      const error = await failureOf(failingWith(looping));
      expect(error?.performed).toBe('unknown');
      expect(error?.message).toBe(
        'mailer failed after the request was sent (fetch failed): it may have acted',
      );
    });
  });
});

describe('HttpEffect: headers, permanent answers and the response', () => {
  /** A server that records each request's headers and answers `status` with `body`. */
  async function recording(status: number, body: string, contentType = 'application/json') {
    const seen: IncomingMessage['headers'][] = [];
    const url = await serve((request, response) => {
      request.resume();
      request.on('end', () => {
        seen.push(request.headers);
        response.writeHead(status, { 'content-type': contentType, 'x-request-id': 'req_1' }).end(body);
      });
    });
    return { url, seen };
  }

  it('sends the configured headers with its own, which a configured header cannot replace', async () => {
    const { url, seen } = await recording(200, '{}');
    const effect = new HttpEffect({
      name: 'crm',
      url,
      headers: {
        headers: async () => ({ authorization: 'Bearer tok_123', 'x-api-version': '2024-06-01' }),
      },
    });
    await effect.call({ a: 1 }, 'key-1');
    expect(seen[0]).toMatchObject({
      authorization: 'Bearer tok_123',
      'x-api-version': '2024-06-01',
      'idempotency-key': 'key-1',
      'content-type': 'application/json',
    });
  });

  it('hands back the status, the headers and the parsed JSON body of a 2xx answer', async () => {
    const { url } = await recording(201, '{"id":"crm_42","created":true}');
    const response = await new HttpEffect({ name: 'crm', url }).call({}, 'key-1');
    expect(response.status).toBe(201);
    expect(response.body).toEqual({ id: 'crm_42', created: true });
    expect(response.headers['x-request-id']).toBe('req_1');
  });

  it('hands back a body that is not JSON as text, and none for an empty body', async () => {
    const text = await recording(200, 'queued', 'text/plain');
    expect((await new HttpEffect({ name: 'crm', url: text.url }).call({}, 'k')).body).toBe('queued');
    server?.closeAllConnections();
    server?.close();
    const empty = await recording(204, '');
    expect((await new HttpEffect({ name: 'crm', url: empty.url }).call({}, 'k')).body).toBeUndefined();
  });

  it('marks an answer among permanentStatuses permanent, and any other failure not', async () => {
    const refused = await recording(422, '{"error":"invalid email"}');
    const effect = new HttpEffect({ name: 'crm', url: refused.url, permanentStatuses: [400, 422] });
    const error = await failureOf(effect);
    expect(error).toMatchObject({ permanent: true, performed: 'no', status: 422 });
    expect(error?.message).toMatch(/crm answered 422 \(a permanent failure\)/);
    // The same answer from an adapter that does not list it is retried as before.
    const plain = await failureOf(new HttpEffect({ name: 'crm', url: refused.url }));
    expect(plain).toMatchObject({ permanent: false, performed: 'no', status: 422 });
  });

  it('keeps "may have acted" for a permanent 5xx', async () => {
    const { url } = await recording(501, 'not implemented');
    const error = await failureOf(new HttpEffect({ name: 'crm', url, permanentStatuses: [501] }));
    expect(error).toMatchObject({ permanent: true, performed: 'unknown' });
  });

  it('makes no call, and says so, when its headers cannot be read', async () => {
    const { url, seen } = await recording(200, '{}');
    const effect = new HttpEffect({
      name: 'crm',
      url,
      headers: {
        headers: async () => {
          throw new Error('secret arn:crm could not be read: AccessDeniedException');
        },
      },
    });
    const error = await failureOf(effect);
    expect(error).toMatchObject({ performed: 'no', permanent: false });
    expect(error?.message).toMatch(/crm: its headers could not be read .*AccessDeniedException.*not made/);
    expect(seen).toEqual([]);
  });

  it('asks its headers to refresh after a 401 or 403, and not after another refusal', async () => {
    for (const [status, refreshes] of [
      [401, 1],
      [403, 1],
      [400, 0],
    ] as const) {
      const { url } = await recording(status, '{}');
      let refreshed = 0;
      const effect = new HttpEffect({
        name: 'crm',
        url,
        headers: { headers: async () => ({ authorization: 'Bearer old' }), refresh: () => refreshed++ },
      });
      await failureOf(effect);
      expect(refreshed, `after ${status}`).toBe(refreshes);
      server?.closeAllConnections();
      server?.close();
    }
  });
});
