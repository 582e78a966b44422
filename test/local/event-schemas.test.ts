/**
 * The events the local stack hands to the functions, captured from the real local HTTP API and SQS
 * poller (nothing hand-written), parsed with the published Powertools schemas
 * (`@aws-lambda-powertools/parser`): API Gateway HTTP API payload 2.0 and SQS. Fields the schemas
 * leave loose are checked against the formats the AWS docs show.
 */
import { APIGatewayProxyEventV2Schema, SqsSchema } from '@aws-lambda-powertools/parser/schemas';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqsPoller } from '../../local/sqs-poller.js';
import { createQueue, sqsClient } from '../helpers/aws.js';
import { type RecordingApi, startRecordingApi } from '../helpers/recording-api.js';

/** Keys the local object has that the schema does not know: an invented field. */
function unknownKeys(value: object, schema: { shape: Record<string, unknown> }): string[] {
  return Object.keys(value).filter((key) => !(key in schema.shape));
}

describe('local HTTP API events against APIGatewayProxyEventV2Schema', () => {
  let api: RecordingApi;
  beforeAll(async () => {
    api = await startRecordingApi();
  });
  afterAll(() => api?.stop());

  const capture = async (init: RequestInit, query = ''): Promise<APIGatewayProxyEventV2> => {
    api.invoked.length = 0;
    expect((await fetch(`${api.url}/webhooks/stripe${query}`, { method: 'POST', ...init })).status).toBe(200);
    const [event] = api.invoked;
    if (!event) throw new Error('the function was not invoked');
    return event;
  };

  it('parses a JSON delivery with a query string and cookies, with no field the schema does not know', async () => {
    const event = await capture(
      { headers: { 'content-type': 'application/json', cookie: 'a=1; b=2' }, body: '{"id":"evt_1"}' },
      '?x=1&x=2',
    );
    const parsed = APIGatewayProxyEventV2Schema.parse(event);
    expect(parsed).toMatchObject({ version: '2.0', body: '{"id":"evt_1"}', isBase64Encoded: false });
    expect(parsed.cookies).toEqual(['a=1', 'b=2']);
    expect(unknownKeys(event, APIGatewayProxyEventV2Schema)).toEqual([]);
    expect(unknownKeys(event.requestContext, APIGatewayProxyEventV2Schema.shape.requestContext)).toEqual([]);
  });

  it('parses a binary delivery (base64 body)', async () => {
    const event = await capture({
      headers: { 'content-type': 'application/octet-stream' },
      body: Buffer.from([0, 1, 2, 255]),
    });
    expect(APIGatewayProxyEventV2Schema.parse(event)).toMatchObject({
      isBase64Encoded: true,
      body: 'AAEC/w==',
    });
  });

  it("gives requestContext.time in API Gateway's format (12/Mar/2020:19:03:58 +0000) and a plain IPv4 sourceIp", async () => {
    const event = await capture({ body: '{}' });
    expect(event.requestContext.time).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
    expect(
      Math.abs(Date.parse(event.requestContext.time.replace(':', ' ')) - event.requestContext.timeEpoch),
    ).toBeLessThan(1_000);
    expect(event.requestContext.http.sourceIp).toBe('127.0.0.1');
  });
});

describe('local SQS poller events against SqsSchema', () => {
  let sqs: SQSClient;
  beforeAll(() => {
    sqs = sqsClient();
  });
  afterAll(() => sqs?.destroy());

  async function captureBatch(send: (queueUrl: string) => Promise<unknown>): Promise<SQSEvent> {
    const queueUrl = await createQueue(sqs);
    await send(queueUrl);
    let captured: SQSEvent | undefined;
    const poller = new SqsPoller({
      client: sqs,
      queueUrl,
      handler: async (event) => {
        captured = event;
        return { batchItemFailures: [] };
      },
    });
    expect((await poller.pollOnce()).received).toBe(1);
    if (!captured) throw new Error('the handler was not invoked');
    return captured;
  }

  it('parses a batch, with no field the schema does not know', async () => {
    const event = await captureBatch((queueUrl) =>
      sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{"key":"stripe:platform:x"}' })),
    );
    const [record] = SqsSchema.parse(event).Records;
    expect(record).toMatchObject({ body: '{"key":"stripe:platform:x"}', eventSource: 'aws:sqs' });
    expect(record?.eventSourceARN).toMatch(/^arn:aws:sqs:us-east-1:\d{12}:/);
    const local = event.Records[0] ?? {};
    const recordSchema = SqsSchema.shape.Records.element;
    expect(unknownKeys(local, recordSchema)).toEqual([]);
    expect(unknownKeys(event.Records[0]?.attributes ?? {}, recordSchema.shape.attributes)).toEqual([]);
  });

  it("passes message attributes through in Lambda's shape (stringValue, list values, dataType)", async () => {
    const event = await captureBatch((queueUrl) =>
      sqs.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: '{}',
          MessageAttributes: {
            provider: { DataType: 'String', StringValue: 'stripe' },
            bytes: { DataType: 'Number', StringValue: '42' },
          },
        }),
      ),
    );
    const [record] = SqsSchema.parse(event).Records;
    expect(record?.messageAttributes).toEqual({
      provider: { stringValue: 'stripe', stringListValues: [], binaryListValues: [], dataType: 'String' },
      bytes: { stringValue: '42', stringListValues: [], binaryListValues: [], dataType: 'Number' },
    });
    expect(record?.md5OfMessageAttributes).toMatch(/^[0-9a-f]{32}$/);
  });
});
