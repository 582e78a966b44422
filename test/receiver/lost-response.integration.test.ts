/**
 * A claim write that commits but whose response is lost: the SDK retries it, and the retry meets
 * the receiver's own item. On DynamoDB Local and the SQS emulator; the only thing injected is the
 * lost response, which no real server produces on demand.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { DynamoClaimStore } from '../../lambdas/store/dynamo-claim-store.js';
import { dynamoClient } from '../helpers/aws.js';
import { stripePaymentIntentEvent } from '../helpers/events.js';
import { createReceiverHarness } from '../helpers/receiver-harness.js';
import { stripeHeaders } from '../helpers/signing.js';

const CLAIM_WRITES = new Set(['PutItemCommand', 'UpdateItemCommand']);

/**
 * A client whose first claim write reaches DynamoDB and commits, and whose response is then lost
 * as a socket timeout would lose it. The SDK's standard retry strategy retries a `TimeoutError`.
 */
function clientLosingFirstWriteResponse(): { client: DynamoDBClient; lost: () => number } {
  const client = dynamoClient();
  let lost = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (lost === 0 && CLAIM_WRITES.has(context.commandName ?? '')) {
        lost += 1;
        throw Object.assign(new Error('Connection timed out after the request was sent'), {
          name: 'TimeoutError',
          $metadata: {},
        });
      }
      return result;
    },
    // Inside the retry loop: each attempt passes through it.
    { step: 'deserialize', name: 'loseFirstClaimWriteResponse', priority: 'low' },
  );
  return { client, lost: () => lost };
}

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

describe('receiver: a claim write whose response was lost', () => {
  it('proceeds as the holder of its own lease: 200 accepted, one delivery counted, one message', async () => {
    const h = await createReceiverHarness();
    const { client, lost } = clientLosingFirstWriteResponse();
    cleanup = () => client.destroy();
    const store = new DynamoClaimStore({ client, tableName: h.tableName });
    const body = JSON.stringify(stripePaymentIntentEvent({ intentId: 'pi_lost_response' }));

    const started = Date.now();
    const result = await h.deliver('stripe', body, stripeHeaders(body), { deps: { store } });

    expect(lost()).toBe(1);
    expect(result).toMatchObject({ statusCode: 200, outcome: 'accepted', deliveries: 1 });
    // It did not poll its own lease until the duplicate wait ran out.
    expect(Date.now() - started).toBeLessThan(h.settings.duplicateWaitMs);
    const messages = await h.drain();
    expect(messages).toHaveLength(1);
    expect(messages[0]?.key).toBe(result.key);
    expect(await h.claim(result.key ?? '')).toMatchObject({ status: 'ENQUEUED', deliveries: 1 });
  });

  it('still answers a real second delivery as a duplicate', async () => {
    const h = await createReceiverHarness();
    const body = JSON.stringify(stripePaymentIntentEvent({ intentId: 'pi_lost_response_dup' }));
    const first = await h.deliver('stripe', body, stripeHeaders(body));
    const second = await h.deliver('stripe', body, stripeHeaders(body));
    expect(first).toMatchObject({ statusCode: 200, outcome: 'accepted' });
    expect(second).toMatchObject({ statusCode: 200, outcome: 'duplicate', deliveries: 2 });
    expect(await h.drain()).toHaveLength(1);
  });
});
