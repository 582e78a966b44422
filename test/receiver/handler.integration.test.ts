/**
 * The Lambda adapter end to end: an API Gateway HTTP API v2 event through middy, Powertools and the
 * core, to DynamoDB Local and the SQS emulator, as the deployed function runs it.
 */
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import {
  createReceiverHandler,
  handler as deployedHandler,
  depsFromEnvironment,
} from '../../lambdas/receiver/handler.js';
import { sampleDelivery } from '../../local/samples.js';
import { apiGatewayEvent as apiEvent } from '../helpers/api-gateway.js';
import { s3EndpointByName, stubLocalAwsEnvironment } from '../helpers/aws.js';
import { stripeCustomerEvent } from '../helpers/events.js';
import { silentServer } from '../helpers/net.js';
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

  /** A Stripe customer event's claim, as another receiver wrote it, its lease until `leaseExpiresAt`. */
  const claimHeldByAnotherReceiver = (eventId: string, leaseExpiresAt: number) =>
    h.store.createClaim(
      {
        pk: `stripe:platform:${eventId}`,
        provider: 'stripe',
        account: 'platform',
        eventId,
        eventType: 'customer.created',
        expiresAt: Math.floor(Date.now() / 1000) + 3600,
      },
      { token: 'other-receiver', expiresAt: leaseExpiresAt, owner: 'receiver' },
      Date.now() - 60_000,
    );

  const handlerFor = (
    env: Record<string, string>,
    override: Partial<ReturnType<typeof depsFromEnvironment>> = {},
  ) => {
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
        return { ...deps, store: h.store, queue: h.queue, ...override };
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
      service: 'webhook-receiver',
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
    expect(log?.latencyMs).toBeLessThan(30_000);
    // The invocation is named by its request id (as in Lambda's REPORT line) and whether it was a
    // cold start; not by the ARN, name and memory size the log group and REPORT line already hold.
    expect(typeof log?.cold_start).toBe('boolean');
    for (const noise of ['function_arn', 'function_name', 'function_memory_size'])
      expect(log).not.toHaveProperty(noise);
    const emf = lines.find((l) => l._aws !== undefined);
    expect(emf).toMatchObject({
      provider: 'stripe',
      Received: 1,
      Accepted: 1,
      ReceiverLatency: log?.latencyMs,
    });
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
    await claimHeldByAnotherReceiver(JSON.parse(body).id, Date.now() + 10_000);
    const response = await handler(apiEvent('stripe', body, stripeHeaders(body)), context);
    expect(response.statusCode).toBe(503);
    expect(Number(response.headers?.['retry-after'])).toBeGreaterThanOrEqual(1);
    // The designed answer to a race, not a fault: a warning, counted InFlight.
    const { log, metrics } = printed();
    expect(log).toMatchObject({ level: 'WARN', outcome: 'in_flight', statusCode: 503 });
    expect(metrics).toEqual(['InFlight', 'Received', 'ReceiverLatency']);
  });

  it('answers 500 (and says why in the log) when the function is misconfigured', async () => {
    const handler = createReceiverHandler({ deps: () => depsFromEnvironment({ EVENT_QUEUE_URL: 'x' }) });
    const response = await handler(apiEvent('stripe', '{}', {}), context);
    expect(response.statusCode).toBe(500);
    expect(JSON.parse(response.body ?? '{}')).toMatchObject({ outcome: 'internal_error' });
    expect(output.join('')).toContain('CLAIMS_TABLE_NAME is required');
    const error = output
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.level === 'ERROR' && l.message !== 'delivery');
    expect(error).toMatchObject({
      message: 'receiver could not handle the delivery',
      service: 'webhook-receiver',
    });
  });

  it('runs on the production wiring (SDK clients from the environment) against the local servers', async () => {
    stubLocalAwsEnvironment({ DYNAMODB: inject('dynamoDbEndpoint'), SQS: inject('sqsEndpoint') });
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

  /** The delivery's log line and the metrics of its one EMF document. */
  const printed = () => {
    const lines = output
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const emf = lines.filter((l) => l._aws !== undefined);
    expect(emf).toHaveLength(1);
    const [document] = emf as { _aws: { CloudWatchMetrics: { Metrics: { Name: string }[] }[] } }[];
    return {
      log: lines.find((l) => l.message === 'delivery'),
      provider: (emf[0] as Record<string, unknown>).provider,
      metrics: document?._aws.CloudWatchMetrics[0]?.Metrics.map((m) => m.Name).sort(),
    };
  };
  const signedStripe = (body = JSON.stringify(stripeCustomerEvent())) =>
    apiEvent('stripe', body, stripeHeaders(body));
  const failingQueue = { send: () => Promise.reject(new Error('SQS is down')) };
  const throwingDeps = () => {
    throw new Error('environment variable CLAIMS_TABLE_NAME is required');
  };

  it.each<{
    outcome: string;
    event: () => APIGatewayProxyEventV2;
    env?: Record<string, string>;
    override?: Partial<ReturnType<typeof depsFromEnvironment>>;
    misconfigured?: boolean;
    status: number;
    level: string;
    provider: string;
    metrics: string[];
  }>([
    {
      outcome: 'accepted',
      event: () => signedStripe(),
      status: 200,
      level: 'INFO',
      provider: 'stripe',
      metrics: ['Accepted', 'Received'],
    },
    {
      outcome: 'invalid_signature',
      event: () => {
        const body = JSON.stringify(stripeCustomerEvent());
        return apiEvent('stripe', body, stripeHeaders(body, 'whsec_wrong'));
      },
      status: 401,
      level: 'WARN',
      provider: 'stripe',
      metrics: ['InvalidSignature', 'Received'],
    },
    {
      outcome: 'malformed',
      event: () => signedStripe('not json'),
      status: 400,
      level: 'WARN',
      provider: 'stripe',
      metrics: ['Malformed', 'Received'],
    },
    {
      outcome: 'method_not_allowed',
      event: () => {
        const event = signedStripe();
        return {
          ...event,
          requestContext: { ...event.requestContext, http: { ...event.requestContext.http, method: 'GET' } },
        };
      },
      status: 405,
      level: 'WARN',
      provider: 'stripe',
      metrics: ['Malformed', 'Received'],
    },
    {
      outcome: 'payload_too_large',
      event: () => signedStripe(),
      env: { MAX_BODY_BYTES: '64' },
      status: 413,
      level: 'WARN',
      provider: 'stripe',
      metrics: ['PayloadTooLarge', 'Received'],
    },
    {
      outcome: 'unknown_provider',
      event: () => apiEvent('paypal', '{}', {}),
      status: 404,
      level: 'WARN',
      provider: 'unknown',
      metrics: ['UnknownProvider'],
    },
    {
      outcome: 'not_configured',
      event: () => apiEvent('github', '{}', {}),
      status: 500,
      level: 'ERROR',
      provider: 'github',
      metrics: ['Failed', 'Received'],
    },
    {
      outcome: 'enqueue_failed',
      event: () => signedStripe(),
      override: { queue: failingQueue },
      status: 500,
      level: 'ERROR',
      provider: 'stripe',
      metrics: ['Failed', 'Received'],
    },
    {
      outcome: 'internal_error',
      event: () => signedStripe(),
      misconfigured: true,
      status: 500,
      level: 'ERROR',
      provider: 'unknown',
      metrics: ['Failed'],
    },
    {
      outcome: 'handshake',
      event: () => {
        const delivery = sampleDelivery('slack', { type: 'url_verification', secret: TEST_SECRETS.slack });
        return apiEvent('slack', delivery.body, delivery.headers);
      },
      env: { WEBHOOK_SECRET_SLACK: TEST_SECRETS.slack },
      status: 200,
      level: 'INFO',
      provider: 'slack',
      metrics: [],
    },
  ])(
    "logs $outcome at $level and counts it (ReceiverLatency always, Received for a known provider's delivery)",
    async (row) => {
      const handler = row.misconfigured
        ? createReceiverHandler({ deps: throwingDeps })
        : handlerFor(row.env ?? {}, row.override);
      const response = await handler(row.event(), context);
      expect(response.statusCode).toBe(row.status);
      const { log, provider, metrics } = printed();
      expect(log).toMatchObject({
        level: row.level,
        outcome: row.outcome,
        statusCode: row.status,
        provider: row.provider,
      });
      expect(provider).toBe(row.provider);
      expect(metrics).toEqual([...row.metrics, 'ReceiverLatency'].sort());
    },
  );

  it("logs what it knows of the delivery, and says when it took over an earlier delivery's claim", async () => {
    const body = JSON.stringify(stripeCustomerEvent());
    const refused = await handlerFor({})(
      apiEvent('stripe', body, stripeHeaders(body, 'whsec_wrong')),
      context,
    );
    expect(refused.statusCode).toBe(401);
    const refusal = printed().log;
    expect(refusal).toMatchObject({ reason: 'signature_mismatch', enqueued: 0 });
    for (const unknown of ['key', 'eventId', 'eventType', 'deliveries', 'tookOver'])
      expect(refusal).not.toHaveProperty(unknown);

    // An earlier receiver claimed the event and stopped before sending it (its lease ran out).
    output.length = 0;
    const id = JSON.parse(body).id;
    await claimHeldByAnotherReceiver(id, Date.now() - 1);
    const taken = await handlerFor({})(apiEvent('stripe', body, stripeHeaders(body)), context);
    expect(taken.statusCode).toBe(200);
    const line = printed().log;
    expect(line).toMatchObject({
      outcome: 'accepted',
      key: `stripe:platform:${id}`,
      eventId: id,
      tookOver: true,
      enqueued: 1,
    });
    expect(line).not.toHaveProperty('reason');
  });

  it('builds its clients once per container, and tries again after a failure to build them', async () => {
    let built = 0;
    const handler = createReceiverHandler({
      deps: () => {
        built += 1;
        return {
          ...depsFromEnvironment({
            CLAIMS_TABLE_NAME: h.tableName,
            EVENT_QUEUE_URL: h.queueUrl,
            WEBHOOK_SECRET_STRIPE: TEST_SECRETS.stripe,
          }),
          store: h.store,
          queue: h.queue,
        };
      },
    });
    expect((await handler(signedStripe(), context)).statusCode).toBe(200);
    expect((await handler(signedStripe(), context)).statusCode).toBe(200);
    expect(built).toBe(1);

    let tries = 0;
    const broken = createReceiverHandler({
      deps: () => {
        tries += 1;
        return throwingDeps();
      },
    });
    const answer = await broken(signedStripe(), context);
    expect(JSON.parse(answer.body ?? '{}')).toEqual({
      outcome: 'internal_error',
      message: 'Internal error; the delivery was not accepted, please retry.',
    });
    await broken(signedStripe(), context);
    expect(tries).toBe(2);
  });

  it('is the function Lambda runs: the exported handler reads its settings from the environment', async () => {
    stubLocalAwsEnvironment({ DYNAMODB: inject('dynamoDbEndpoint'), SQS: inject('sqsEndpoint') });
    vi.stubEnv('CLAIMS_TABLE_NAME', h.tableName);
    vi.stubEnv('EVENT_QUEUE_URL', h.queueUrl);
    vi.stubEnv('WEBHOOK_SECRET_STRIPE', TEST_SECRETS.stripe);
    const response = await deployedHandler(signedStripe(), context);
    expect(JSON.parse(response.body ?? '{}')).toMatchObject({ outcome: 'accepted' });
    expect(await h.drain()).toHaveLength(1);
  });

  it('claim-checks a large body to the archive on the production wiring, and injects faults only when told', async () => {
    stubLocalAwsEnvironment({ S3: s3EndpointByName() });
    const handler = handlerFor({
      ARCHIVE_BUCKET_NAME: h.archiveBucket,
      ARCHIVE_FORCE_PATH_STYLE: 'true',
      CLAIM_CHECK_THRESHOLD_BYTES: '1024',
    });
    // Two, so the second finds the S3 client the first loaded.
    for (const padding of ['x', 'y']) {
      const body = JSON.stringify({ ...stripeCustomerEvent(), padding: padding.repeat(4_096) });
      const response = await handler(apiEvent('stripe', body, stripeHeaders(body)), context);
      expect(response.statusCode).toBe(200);
    }
    const messages = await h.drain();
    expect(messages).toHaveLength(2);
    for (const message of messages) {
      expect(message).toHaveProperty('payloadKey');
      const { payloadKey } = message as { payloadKey: string };
      expect(await h.archive.get(payloadKey, message.key)).toMatchObject({ key: message.key });
    }

    const env = { CLAIMS_TABLE_NAME: 't', EVENT_QUEUE_URL: h.queueUrl };
    expect(depsFromEnvironment(env).faultPoint).toBeUndefined();
    expect(depsFromEnvironment(env).archive).toBeUndefined();
    expect(depsFromEnvironment({ ...env, FAULT_POINTS: 'receiver.afterClaim' }).faultPoint).toBeTypeOf(
      'function',
    );
  });

  it("gives up on a DynamoDB that never answers within a provider's deadline: 3 tries of 2 s, then a 5xx", async () => {
    const silent = await silentServer();
    stubLocalAwsEnvironment({ DYNAMODB: silent.endpoint });
    try {
      const { store } = depsFromEnvironment({
        CLAIMS_TABLE_NAME: 'claims',
        EVENT_QUEUE_URL: h.queueUrl,
        WEBHOOK_SECRET_STRIPE: TEST_SECRETS.stripe,
      });
      const handler = handlerFor({}, { store });
      const started = Date.now();
      const response = await handler(signedStripe(), context);
      const took = Date.now() - started;
      // The provider retries a 500; the log says what timed out.
      expect(response.statusCode).toBe(500);
      expect(JSON.parse(response.body ?? '{}')).toMatchObject({ outcome: 'internal_error' });
      expect(output.join('')).toContain('exceeded the configured 2000 ms requestTimeout');
      expect(silent.requests()).toBe(3);
      // Three requests of 2 s each and the SDK's short backoffs: well inside a 10 s deadline.
      expect(took).toBeGreaterThanOrEqual(6_000);
      expect(took).toBeLessThan(10_000);
    } finally {
      await silent.close();
    }
  }, 20_000);
});
