/**
 * The processor the construct deploys when given no `processorEntry` (lambdas/processor/handler.ts):
 * no appliers, so an event is acknowledged and its claim completed as `unhandled`, with no business
 * write and no effect. Driven through the real module, on DynamoDB Local, with the message the
 * receiver queued.
 */
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ClaimStatus } from '../../lambdas/store/claim.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/emulators.js';
import { toSqsRecord } from '../../local/sqs-poller.js';
import { stripePaymentIntentEvent } from '../helpers/events.js';
import { createPipelineHarness, type PipelineHarness } from '../helpers/pipeline-harness.js';
import { stripeHeaders } from '../helpers/signing.js';

let h: PipelineHarness;
const saved = { ...process.env };

beforeAll(async () => {
  h = await createPipelineHarness();
  // What the construct writes for a processor given no tables and no effects, pointed at the local server.
  Object.assign(process.env, {
    CLAIMS_TABLE_NAME: h.receiver.tableName,
    BUSINESS_TABLES: '{}',
    EFFECTS: '{}',
    AWS_ENDPOINT_URL_DYNAMODB: inject('dynamoDbEndpoint'),
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    POWERTOOLS_METRICS_DISABLED: 'true',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  });
});

afterAll(async () => {
  process.env = saved;
  await h?.stop();
});

async function queuedEvent(): Promise<SQSEvent> {
  const result = await h.receiver.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: h.receiver.queueUrl,
      MaxNumberOfMessages: 1,
      WaitTimeSeconds: 1,
      MessageSystemAttributeNames: ['ApproximateReceiveCount'],
    }),
  );
  return {
    Records: (result.Messages ?? []).map((m) =>
      toSqsRecord(m, 'arn:aws:sqs:local:000000000000:events', LOCAL_REGION),
    ),
  };
}

describe('the default processor (no processorEntry)', () => {
  it('completes an event the example would apply as unhandled: no row, no effect, one DONE claim', async () => {
    const { handler } = await import('../../lambdas/processor/handler.js');
    const body = JSON.stringify(stripePaymentIntentEvent({ account: 'acct_1', intentId: 'pi_default' }));
    const accepted = await h.receiver.deliver('stripe', body, stripeHeaders(body));
    expect(accepted).toMatchObject({ statusCode: 200, outcome: 'accepted' });

    const event = await queuedEvent();
    expect(event.Records).toHaveLength(1);
    expect(await handler(event, {} as Context)).toEqual({ batchItemFailures: [] });
    expect(await h.receiver.claim(accepted.key ?? '')).toMatchObject({
      status: ClaimStatus.Done,
      outcome: 'unhandled',
      plannedEffects: [],
    });
    expect(h.sink.entries()).toEqual([]);

    // A second copy of the message is acknowledged as already done.
    expect(await handler(event, {} as Context)).toEqual({ batchItemFailures: [] });
    expect((await h.receiver.claim(accepted.key ?? ''))?.processingAttempts).toBe(1);
  });
});
