/**
 * The receiver's HTTP edge: an API Gateway HTTP API (payload 2.0) event read as a delivery, and a
 * delivery's result written as the response (the receiver's response JSON is public interface).
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { DeliveryResult } from '../../lambdas/receiver/core.js';
import { deliveryFromEvent, providerFromEvent, toHttpResponse } from '../../lambdas/receiver/http.js';
import { apiGatewayEvent } from '../helpers/api-gateway.js';

/** A delivery's event with no path parameter and no body, then `overrides`. */
function apiEvent(overrides: Partial<APIGatewayProxyEventV2>): APIGatewayProxyEventV2 {
  const { pathParameters: _p, body: _b, ...event } = apiGatewayEvent('stripe', '', {});
  return { ...event, ...overrides };
}

describe('providerFromEvent', () => {
  it('reads the path parameter, else the last segment of the path', () => {
    expect(providerFromEvent({ pathParameters: { provider: 'github' }, rawPath: '/webhooks/stripe' })).toBe(
      'github',
    );
    expect(providerFromEvent({ rawPath: '/webhooks/stripe' })).toBe('stripe');
    expect(providerFromEvent({ pathParameters: {}, rawPath: '/webhooks/stripe/' })).toBe('stripe');
    expect(providerFromEvent({ pathParameters: { provider: '' }, rawPath: '/prod/webhooks/shopify' })).toBe(
      'shopify',
    );
  });

  it('gives an empty id for a path with no segment, or none at all', () => {
    expect(providerFromEvent({ rawPath: '/' })).toBe('');
    expect(providerFromEvent({ rawPath: '' })).toBe('');
    expect(providerFromEvent({} as Pick<APIGatewayProxyEventV2, 'rawPath'>)).toBe('');
  });
});

describe('deliveryFromEvent', () => {
  it('takes the method, lower-cased headers, the body as sent and the raw query', () => {
    const event = apiEvent({
      pathParameters: { provider: 'twilio' },
      rawQueryString: 'a=1&b=%2F',
      headers: { 'X-Twilio-Signature': 'sig', 'Content-Type': 'application/json' },
      body: 'eyJhIjoxfQ==',
      isBase64Encoded: true,
    });
    expect(deliveryFromEvent(event)).toStrictEqual({
      providerId: 'twilio',
      method: 'POST',
      headers: { 'x-twilio-signature': 'sig', 'content-type': 'application/json' },
      body: 'eyJhIjoxfQ==',
      isBase64Encoded: true,
      rawQuery: 'a=1&b=%2F',
    });
  });

  it('reads a GET (a handshake) as a GET, and no query when the query string is empty', () => {
    const base = apiEvent({});
    const event = apiEvent({
      requestContext: { ...base.requestContext, http: { ...base.requestContext.http, method: 'GET' } },
    });
    expect(deliveryFromEvent(event)).toStrictEqual({
      providerId: 'stripe',
      method: 'GET',
      headers: {},
      body: undefined,
      isBase64Encoded: false,
    });
  });

  it('defaults to POST, no headers and a body not base64 when the event leaves them out', () => {
    const bare = { rawPath: '/webhooks/stripe', body: '{}' } as unknown as APIGatewayProxyEventV2;
    expect(deliveryFromEvent(bare)).toStrictEqual({
      providerId: 'stripe',
      method: 'POST',
      headers: {},
      body: '{}',
      isBase64Encoded: false,
    });
    const noHttp = { ...bare, requestContext: {} } as unknown as APIGatewayProxyEventV2;
    expect(deliveryFromEvent(noHttp).method).toBe('POST');
  });
});

describe('toHttpResponse', () => {
  const accepted: DeliveryResult = {
    statusCode: 200,
    outcome: 'accepted',
    message: 'event accepted',
    key: 'stripe:acct_1:evt_1',
    eventId: 'evt_1',
    deliveries: 1,
    // Not in the answer: for the log line and the metrics.
    enqueued: 1,
    provider: 'stripe',
    eventType: 'invoice.paid',
    tookOver: false,
  };

  it("answers the receiver's JSON, with only the fields the result has", () => {
    const response = toHttpResponse(accepted);
    expect(response.statusCode).toBe(200);
    expect(response.headers).toStrictEqual({ 'content-type': 'application/json' });
    expect(response.body).toBe(
      '{"outcome":"accepted","message":"event accepted","key":"stripe:acct_1:evt_1","eventId":"evt_1","deliveries":1}',
    );
    const refused = {
      statusCode: 400,
      outcome: 'malformed',
      reason: 'missing_event_id',
      message: 'no',
      enqueued: 0,
    } as const;
    expect(toHttpResponse(refused).body).toBe(
      '{"outcome":"malformed","reason":"missing_event_id","message":"no"}',
    );
  });

  it("adds the result's headers (Retry-After) to the JSON answer", () => {
    const busy: DeliveryResult = { ...accepted, statusCode: 503, headers: { 'retry-after': '5' } };
    expect(toHttpResponse(busy).headers).toStrictEqual({
      'content-type': 'application/json',
      'retry-after': '5',
    });
  });

  it("answers the provider's own body and content type when the result carries one", () => {
    const handshake: DeliveryResult = {
      ...accepted,
      headers: { 'x-webhook-outcome': 'accepted', 'content-type': 'text/plain' },
      response: { contentType: 'text/xml', body: '<Response/>' },
    };
    expect(toHttpResponse(handshake)).toStrictEqual({
      statusCode: 200,
      headers: { 'x-webhook-outcome': 'accepted', 'content-type': 'text/xml' },
      body: '<Response/>',
    });
  });
});
