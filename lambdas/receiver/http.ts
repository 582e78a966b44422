/** API Gateway HTTP API (payload format 2.0) <-> the receiver core. */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { DeliveryResult, IncomingDelivery } from './core.js';

export function lowerCaseHeaders(
  headers: Readonly<Record<string, string | undefined>> | undefined,
): Record<string, string | undefined> {
  const result: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers ?? {})) result[name.toLowerCase()] = value;
  return result;
}

/** `/webhooks/{provider}`: the path parameter, else the path's last segment. */
export function providerFromEvent(event: Pick<APIGatewayProxyEventV2, 'pathParameters' | 'rawPath'>): string {
  const fromParameter = event.pathParameters?.provider;
  if (fromParameter) return fromParameter;
  const segments = (event.rawPath ?? '').split('/').filter(Boolean);
  return segments.at(-1) ?? '';
}

export function deliveryFromEvent(event: APIGatewayProxyEventV2): IncomingDelivery {
  return {
    providerId: providerFromEvent(event),
    method: event.requestContext?.http?.method ?? 'POST',
    headers: lowerCaseHeaders(event.headers),
    body: event.body,
    isBase64Encoded: event.isBase64Encoded === true,
    ...(event.rawQueryString ? { rawQuery: event.rawQueryString } : {}),
  };
}

/**
 * The public answer: a small JSON body naming the outcome, never any secret or signature. A field
 * the result lacks is undefined, which JSON leaves out.
 */
function responseBody(result: DeliveryResult): Record<string, unknown> {
  const { outcome, reason, message, key, eventId, deliveries } = result;
  return { outcome, reason, message, key, eventId, deliveries };
}

export function toHttpResponse(result: DeliveryResult): APIGatewayProxyStructuredResultV2 {
  if (result.response !== undefined) {
    return {
      statusCode: result.statusCode,
      headers: { ...result.headers, 'content-type': result.response.contentType },
      body: result.response.body,
    };
  }
  return {
    statusCode: result.statusCode,
    headers: { 'content-type': 'application/json', ...result.headers },
    body: JSON.stringify(responseBody(result)),
  };
}
