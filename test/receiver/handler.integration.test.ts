/**
 * The Lambda adapter end to end: an API Gateway HTTP API v2 event through middy, Powertools and the
 * core, to DynamoDB Local and the SQS emulator, as the deployed function runs it.
 */
import type { Context } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { createReceiverHandler, depsFromEnvironment } from '../../lambdas/receiver/handler.js';
import { LOCAL_CREDENTIALS } from '../../local/emulators.js';
import { apiGatewayEvent as apiEvent } from '../helpers/api-gateway.js';
import { stripeCustomerEvent } from '../helpers/events.js';
import { capturePowertoolsOutput } from '../helpers/powertools-output.js';
import { createReceiverHarness, type ReceiverHarness } from '../helpers/receiver-harness.js';
import { stripeHeaders, TEST_SECRETS } from '../helpers/signing.js';

const context = {
  functionName: 'receiver',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:receiver',
  memoryLimitInMB: '256',
  awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
  getRemainingTimeInMillis: () => 10_000,
} as unknown as Context;

describe('receiver Lambda handler', () => {
  let h: ReceiverHarness;
  let output: string[];
  beforeEach(async () => {
    h = await createReceiverHarness();
    output = capturePowertoolsOutput();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  const handlerFor = (env: Record<string, string>) => {
    const handler = createReceiverHandler({
      deps: () => {
        const deps = depsFromEnvironment({
          CLAIMS_TABLE_NAME: h.tableName,
          EVENT_QUEUE_URL: h.queueUrl,
          WEBHOOK_SECRET_STRIPE: `whsec_old_rotated_out,${TEST_SECRETS.stripe}`,
          AWS_REGION: 'us-east-1',
          ...env,
        });
        // The same store and queue classes, pointed at the local servers.
        return { ...deps, store: h.store, queue: h.queue };
      },
    });
    return handler;
  };

  it('answers 200 with a JSON outcome, logs one line with the key and emits EMF metrics per provider', async () => {
    const handler = handlerFor({});
    const event = stripeCustomerEvent();
    const body = JSON.stringify(event);
    const headers = stripeHeaders(body);
    const response = await handler(apiEvent('stripe', body, headers, true), context);

    expect(response.statusCode).toBe(200);
    expect(response.headers?.['content-type']).toBe('application/json');
    expect(JSON.parse(response.body ?? '{}')).toEqual({
      outcome: 'accepted',
      message: 'Accepted.',
      key: `stripe:platform:${event.id}`,
      eventId: event.id,
      deliveries: 1,
    });
    expect(await h.drain()).toHaveLength(1);

    const lines = output
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const log = lines.find((l) => l.message === 'delivery');
    expect(log).toMatchObject({
      level: 'INFO',
      provider: 'stripe',
      outcome: 'accepted',
      statusCode: 200,
      key: `stripe:platform:${event.id}`,
      eventId: event.id,
      eventType: 'customer.created',
      deliveries: 1,
      function_request_id: context.awsRequestId,
    });
    expect(log?.latencyMs).toEqual(expect.any(Number));
    // The invocation is named by its request id (as in Lambda's REPORT line) and whether it was a
    // cold start; not by the ARN, name and memory size the log group and REPORT line already hold.
    expect(typeof log?.cold_start).toBe('boolean');
    for (const noise of ['function_arn', 'function_name', 'function_memory_size'])
      expect(log).not.toHaveProperty(noise);
    const emf = lines.find((l) => l._aws !== undefined);
    expect(emf).toMatchObject({ provider: 'stripe', Received: 1, Accepted: 1 });
    expect(JSON.stringify(emf)).toContain('IdempotentWebhooks');
    // Never a secret or a signature in what the function prints.
    const printed = output.join('');
    expect(printed).not.toContain(TEST_SECRETS.stripe);
    expect(printed).not.toContain(headers['stripe-signature'].split(',v1=')[1]);
  });

  it('counts a duplicate in the Duplicate metric', async () => {
    const handler = handlerFor({});
    const body = JSON.stringify(stripeCustomerEvent());
    await handler(apiEvent('stripe', body, stripeHeaders(body)), context);
    output.length = 0;
    const response = await handler(apiEvent('stripe', body, stripeHeaders(body)), context);
    expect(JSON.parse(response.body ?? '{}')).toMatchObject({ outcome: 'duplicate', deliveries: 2 });
    const emf = output
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l._aws !== undefined);
    expect(emf).toMatchObject({ provider: 'stripe', Received: 1, Duplicate: 1 });
    expect(emf).not.toHaveProperty('Accepted');
  });

  it('answers 401 with a JSON body, logged as a warning, for a bad signature', async () => {
    const handler = handlerFor({});
    const body = JSON.stringify(stripeCustomerEvent());
    const response = await handler(apiEvent('stripe', body, stripeHeaders(body, 'whsec_wrong')), context);
    expect(response.statusCode).toBe(401);
    expect(JSON.parse(response.body ?? '{}')).toMatchObject({
      outcome: 'invalid_signature',
      reason: 'signature_mismatch',
    });
    expect(output.join('')).toContain('"level":"WARN"');
    expect(await h.claims()).toEqual([]);
  });

  it('answers 503 with a Retry-After header while the first delivery is in flight', async () => {
    const handler = handlerFor({ DUPLICATE_WAIT_MS: '100' });
    const body = JSON.stringify(stripeCustomerEvent());
    const pk = `stripe:platform:${JSON.parse(body).id}`;
    await h.store.createClaim(
      {
        pk,
        provider: 'stripe',
        account: 'platform',
        eventId: JSON.parse(body).id,
        eventType: 'customer.created',
        expiresAt: Math.floor(Date.now() / 1000) + 3600,
      },
      { token: 'other', expiresAt: Date.now() + 10_000, owner: 'receiver' },
      Date.now(),
    );
    const response = await handler(apiEvent('stripe', body, stripeHeaders(body)), context);
    expect(response.statusCode).toBe(503);
    expect(Number(response.headers?.['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('answers 500 (and says why in the log) when the function is misconfigured', async () => {
    const handler = createReceiverHandler({ deps: () => depsFromEnvironment({ EVENT_QUEUE_URL: 'x' }) });
    const response = await handler(apiEvent('stripe', '{}', {}), context);
    expect(response.statusCode).toBe(500);
    expect(JSON.parse(response.body ?? '{}')).toMatchObject({ outcome: 'internal_error' });
    expect(output.join('')).toContain('CLAIMS_TABLE_NAME is required');
  });

  it('runs on the production wiring (SDK clients from the environment) against the local servers', async () => {
    vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', inject('dynamoDbEndpoint'));
    vi.stubEnv('AWS_ENDPOINT_URL_SQS', inject('sqsEndpoint'));
    vi.stubEnv('AWS_REGION', 'us-east-1');
    vi.stubEnv('AWS_ACCESS_KEY_ID', LOCAL_CREDENTIALS.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', LOCAL_CREDENTIALS.secretAccessKey);
    try {
      const handler = createReceiverHandler({
        deps: () =>
          depsFromEnvironment({
            CLAIMS_TABLE_NAME: h.tableName,
            EVENT_QUEUE_URL: h.queueUrl,
            WEBHOOK_SECRET_STRIPE: TEST_SECRETS.stripe,
          }),
      });
      const body = JSON.stringify(stripeCustomerEvent());
      const response = await handler(apiEvent('stripe', body, stripeHeaders(body)), context);
      expect(response.statusCode).toBe(200);
      expect(await h.drain()).toHaveLength(1);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
