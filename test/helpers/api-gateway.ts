/**
 * An API Gateway HTTP API (payload format 2.0) event as API Gateway sends it to the receiver for a
 * delivery to `/webhooks/{provider}`.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

export function apiGatewayEvent(
  provider: string,
  body: string,
  headers: Record<string, string>,
  base64 = false,
): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: 'POST /webhooks/{provider}',
    rawPath: `/webhooks/${provider}`,
    rawQueryString: '',
    // API Gateway lower-cases header names; mixed case here proves the adapter does too.
    headers: Object.fromEntries(
      Object.entries(headers).map(([k, v]) => [k.replace(/^./, (c) => c.toUpperCase()), v]),
    ),
    pathParameters: { provider },
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'example.execute-api.us-east-1.amazonaws.com',
      domainPrefix: 'example',
      http: {
        method: 'POST',
        path: `/webhooks/${provider}`,
        protocol: 'HTTP/1.1',
        sourceIp: '203.0.113.9',
        userAgent: 'Stripe/1.0',
      },
      requestId: 'req-1',
      routeKey: 'POST /webhooks/{provider}',
      stage: '$default',
      time: '02/Dec/2026:15:00:00 +0000',
      timeEpoch: Date.now(),
    },
    body: base64 ? Buffer.from(body).toString('base64') : body,
    isBase64Encoded: base64,
  };
}
