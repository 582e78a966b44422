/** The local effects sink (local/effects-sink.ts): what it records of each call, headers included. */
import { request } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type EffectEntry, type EffectsSink, startEffectsSink } from '../../local/effects-sink.js';

/** One POST with exactly these headers (node's http client adds host and content-length, a transport's own). */
function post(url: string, body: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const call = request(url, { method: 'POST', headers }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    call.on('error', reject);
    call.end(body);
  });
}

describe('the effects sink', () => {
  let sink: EffectsSink;
  beforeEach(async () => {
    sink = await startEffectsSink({ effects: { crm: { honoursIdempotencyKey: true } } });
  });
  afterEach(() => sink.stop());

  const listed = async () => (await (await fetch(`${sink.url}/`)).json()) as EffectEntry[];

  it("records each call's headers, the adapter's configured ones included, and lists them on GET /", async () => {
    const body = JSON.stringify({ contact: 'c-1' });
    const status = await post(sink.urlOf('crm'), body, {
      'content-type': 'application/json',
      'idempotency-key': 'evt-1:crm',
      authorization: 'Bearer local-dev-crm-token',
      'X-Api-Version': '2024-06-01',
    });
    expect(status).toBe(201);
    const [entry] = await listed();
    expect(entry).toMatchObject({ service: 'crm', idempotencyKey: 'evt-1:crm', body: { contact: 'c-1' } });
    expect(entry?.headers).toEqual({
      'content-type': 'application/json',
      'idempotency-key': 'evt-1:crm',
      authorization: 'Bearer local-dev-crm-token',
      'x-api-version': '2024-06-01',
    });
  });

  it('leaves the transport headers (host, content-length, connection) out', async () => {
    await post(sink.urlOf('crm'), '{}', { authorization: 'Bearer t', connection: 'keep-alive' });
    const [entry] = sink.entries();
    expect(entry?.headers).toEqual({ authorization: 'Bearer t' });
    expect(Object.keys(entry?.headers ?? {})).not.toContain('host');
    expect(Object.keys(entry?.headers ?? {})).not.toContain('content-length');
  });

  it("records a replayed call's headers too", async () => {
    const headers = { 'idempotency-key': 'evt-2:crm', authorization: 'Bearer first' };
    await post(sink.urlOf('crm'), '{}', headers);
    await post(sink.urlOf('crm'), '{}', { ...headers, authorization: 'Bearer second' });
    expect(sink.entries().map((e) => [e.replay, e.headers.authorization])).toEqual([
      [false, 'Bearer first'],
      [true, 'Bearer second'],
    ]);
  });
});
