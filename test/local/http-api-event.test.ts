/**
 * The event the local HTTP API hands to the function, for what a client can repeat: headers,
 * cookies and query strings. Sent over a raw socket, because fetch and http.request merge or
 * refuse some duplicates before they reach the server.
 */
import { connect } from 'node:net';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingApi, startRecordingApi } from '../helpers/recording-api.js';

let api: RecordingApi;
beforeAll(async () => {
  api = await startRecordingApi();
});
afterAll(() => api?.stop());

/** Sends a request exactly as written (CRLF line ends) and resolves with the raw response. */
function sendRaw(head: string[], body: string): Promise<string> {
  const { hostname, port } = new URL(api.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let response = '';
    socket.on('data', (chunk: Buffer) => {
      response += chunk.toString();
    });
    socket.on('end', () => resolve(response));
    socket.on('error', reject);
    socket.write(
      [...head, `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close', '', body].join('\r\n'),
    );
  });
}

async function eventFor(head: string[], body = '{}'): Promise<APIGatewayProxyEventV2> {
  api.invoked.length = 0;
  expect(await sendRaw(head, body)).toMatch(/^HTTP\/1\.1 200/);
  const [event] = api.invoked;
  if (!event) throw new Error('the function was not invoked');
  return event;
}

describe('local HTTP API: the v2 event, as API Gateway builds it', () => {
  it('joins duplicate headers with commas, in order, under lower-case names', async () => {
    const event = await eventFor([
      'POST /webhooks/github HTTP/1.1',
      'Host: 127.0.0.1',
      'X-Hub-Signature-256: sha256=first',
      'x-hub-signature-256: sha256=second',
      'Accept: application/json',
      'Accept: text/plain',
    ]);
    expect(event.headers['x-hub-signature-256']).toBe('sha256=first,sha256=second');
    expect(event.headers.accept).toBe('application/json,text/plain');
  });

  it("keeps every copy of the headers Node's req.headers drops (content-type, authorization, user-agent)", async () => {
    const event = await eventFor([
      'POST /webhooks/github HTTP/1.1',
      'Host: 127.0.0.1',
      'Content-Type: application/json',
      'Content-Type: text/plain',
      'Authorization: Bearer one',
      'Authorization: Bearer two',
      'User-Agent: first',
      'User-Agent: second',
    ]);
    expect(event.headers['content-type']).toBe('application/json,text/plain');
    expect(event.headers.authorization).toBe('Bearer one,Bearer two');
    expect(event.headers['user-agent']).toBe('first,second');
  });

  it('puts the cookies in `cookies`, one per entry, and not in `headers`', async () => {
    const event = await eventFor([
      'POST /webhooks/github HTTP/1.1',
      'Host: 127.0.0.1',
      'Cookie: session=abc; theme=dark',
      'Cookie: lang=pt',
    ]);
    expect(event.cookies).toEqual(['session=abc', 'theme=dark', 'lang=pt']);
    expect(event.headers.cookie).toBeUndefined();
  });

  it('joins duplicate query strings with commas in `queryStringParameters`, keeping rawQueryString', async () => {
    const event = await eventFor(['POST /webhooks/github?a=1&b=2&a=3 HTTP/1.1', 'Host: 127.0.0.1']);
    expect(event.queryStringParameters).toEqual({ a: '1,3', b: '2' });
    expect(event.rawQueryString).toBe('a=1&b=2&a=3');
  });

  it('has no `cookies` nor `queryStringParameters` when the request has none', async () => {
    const event = await eventFor(['POST /webhooks/github HTTP/1.1', 'Host: 127.0.0.1']);
    expect(event).not.toHaveProperty('cookies');
    expect(event).not.toHaveProperty('queryStringParameters');
  });
});
