/**
 * The local HTTP API refuses what AWS refuses, with the same status, and passes everything smaller:
 * API Gateway's 10 MiB body limit and Lambda's 6,291,456-byte synchronous invocation limit, for
 * text bodies (a JSON string in the event, escaped) and binary ones (base64).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HTTP_API_MAX_BODY_BYTES,
  jsonEscapeOverhead,
  LAMBDA_SYNC_REQUEST_LIMIT_BYTES,
  largestDeliverableBody,
} from '../../lambdas/shared/payload-limits.js';
import { type RecordingApi, startRecordingApi } from '../helpers/recording-api.js';

let api: RecordingApi;
beforeAll(async () => {
  api = await startRecordingApi();
});
afterAll(() => api?.stop());

const post = (body: Buffer | string, contentType: string) =>
  fetch(`${api.url}/webhooks/github`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body,
  });

/** The event's size without its body, learned from one invocation of the same shape. */
async function envelopeBytes(contentType: string, probeBytes: number): Promise<number> {
  api.invoked.length = 0;
  const body = Buffer.alloc(probeBytes, 'a');
  expect((await post(body, contentType)).status).toBe(200);
  const [event] = api.invoked;
  if (!event) throw new Error('not invoked');
  return Buffer.byteLength(JSON.stringify({ ...event, body: '' }));
}

describe('local HTTP API: the platform payload limits', () => {
  it('passes the largest text body Lambda takes and refuses one byte more with 413, not invoking', async () => {
    // Same digit count in content-length for the probe and the limit, so the envelope is the same size.
    const envelope = await envelopeBytes('application/json', 6_000_000);
    const { text } = largestDeliverableBody(envelope);
    expect(text).toBe(LAMBDA_SYNC_REQUEST_LIMIT_BYTES - 1 - envelope);

    api.invoked.length = 0;
    expect((await post(Buffer.alloc(text, 'a'), 'application/json')).status).toBe(200);
    expect(api.invoked).toHaveLength(1);

    api.invoked.length = 0;
    const over = await post(Buffer.alloc(text + 1, 'a'), 'application/json');
    expect(over.status).toBe(413);
    expect(await over.json()).toEqual({ message: 'Request Too Long' });
    expect(api.invoked).toHaveLength(0);
    expect(api.refused.at(-1)?.reason).toMatch(/RequestEntityTooLargeException/);
  }, 30_000);

  it('counts JSON escaping against the limit: quotes take two bytes in the event', async () => {
    const envelope = await envelopeBytes('application/json', 6_000_000);
    const { text } = largestDeliverableBody(envelope);
    const quoted = `"${'a'.repeat(text - 2)}"`; // fits as bytes, but escaping adds 2
    expect(jsonEscapeOverhead(quoted)).toBe(2);
    api.invoked.length = 0;
    expect((await post(quoted, 'application/json')).status).toBe(413);
    expect(api.invoked).toHaveLength(0);
  }, 30_000);

  it('passes the largest binary body (base64 in the event) and refuses the next 3 bytes', async () => {
    const envelope = await envelopeBytes('application/octet-stream', 4_500_000);
    const { base64 } = largestDeliverableBody(envelope);
    expect(base64).toBe(Math.floor((LAMBDA_SYNC_REQUEST_LIMIT_BYTES - 1 - envelope) / 4) * 3);

    api.invoked.length = 0;
    expect((await post(Buffer.alloc(base64, 0xff), 'application/octet-stream')).status).toBe(200);
    expect(api.invoked[0]?.isBase64Encoded).toBe(true);
    api.invoked.length = 0;
    expect((await post(Buffer.alloc(base64 + 3, 0xff), 'application/octet-stream')).status).toBe(413);
    expect(api.invoked).toHaveLength(0);
  }, 30_000);

  it("refuses a body over API Gateway's 10 MiB with API Gateway's 413", async () => {
    api.invoked.length = 0;
    const response = await post(Buffer.alloc(HTTP_API_MAX_BODY_BYTES + 1, 'a'), 'application/json');
    expect(response.status).toBe(413);
    expect(await response.text()).toBe(`HTTP content length exceeded ${HTTP_API_MAX_BODY_BYTES} bytes.`);
    expect(api.invoked).toHaveLength(0);
    expect(api.refused.at(-1)).toMatchObject({ status: 413, reason: 'body over 10 MiB' });
  }, 30_000);
});
