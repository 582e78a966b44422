/**
 * Realistic signed Stripe deliveries for the in-process measurements: the documented
 * `payment_intent.succeeded` shape (test/fixtures/stripe), fresh ids per event, signed by the Stripe
 * module's `dev.sign` (test/providers/dev.test.ts checks it against the official `stripe` library);
 * wrapped in the API Gateway HTTP API v2 event the receiver gets.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { stripeProvider } from '../lambdas/providers/stripe.js';

const FIXTURE = join(
  import.meta.dirname,
  '..',
  'test',
  'fixtures',
  'stripe',
  'payment_intent.succeeded.json',
);
const template = JSON.parse(readFileSync(FIXTURE, 'utf8')) as {
  data: { object: Record<string, unknown> };
  request: Record<string, unknown>;
} & Record<string, unknown>;

/** Stripe-like ids: prefix + 24 base62-ish characters. */
const stripeId = (prefix: string): string => `${prefix}_${randomBytes(12).toString('hex')}`;

export interface SignedDelivery {
  readonly body: string;
  readonly headers: Record<string, string>;
  readonly eventId: string;
  readonly intentId: string;
}

export function signedStripeEvent(
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): SignedDelivery {
  const eventId = stripeId('evt');
  const intentId = stripeId('pi');
  const event = {
    ...template,
    id: eventId,
    created: nowSeconds,
    data: {
      object: {
        ...template.data.object,
        id: intentId,
        client_secret: `${intentId}_secret_${randomBytes(8).toString('hex')}`,
        created: nowSeconds - 2,
        customer: stripeId('cus'),
        latest_charge: stripeId('ch'),
        payment_method: stripeId('pm'),
      },
    },
    request: { id: stripeId('req'), idempotency_key: randomUUID() },
  };
  // Stripe sends compact JSON.
  const body = JSON.stringify(event);
  return {
    body,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      ...stripeProvider.dev.sign(body, secret, nowSeconds),
    },
    eventId,
    intentId,
  };
}

/** The HTTP API (payload 2.0) event for `POST /webhooks/<provider>`, as API Gateway builds it. */
export function apiGatewayEvent(
  provider: string,
  delivery: Pick<SignedDelivery, 'body' | 'headers'>,
): APIGatewayProxyEventV2 {
  const now = Date.now();
  const headers: Record<string, string> = {
    host: 'abc123.execute-api.us-east-1.amazonaws.com',
    'content-length': String(Buffer.byteLength(delivery.body)),
    'x-forwarded-for': '3.18.12.63',
    'x-forwarded-proto': 'https',
    ...delivery.headers,
  };
  return {
    version: '2.0',
    routeKey: `POST /webhooks/${provider}`,
    rawPath: `/webhooks/${provider}`,
    rawQueryString: '',
    headers,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      domainName: 'abc123.execute-api.us-east-1.amazonaws.com',
      domainPrefix: 'abc123',
      http: {
        method: 'POST',
        path: `/webhooks/${provider}`,
        protocol: 'HTTP/1.1',
        sourceIp: '3.18.12.63',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: `POST /webhooks/${provider}`,
      stage: '$default',
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
    body: delivery.body,
    isBase64Encoded: false,
  };
}

export function lambdaContext(functionName: string, memoryMb: number, timeoutMs = 10_000): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: String(memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
