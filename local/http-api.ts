/**
 * Serves an HTTP API's routes on loopback the way API Gateway HTTP API (payload format 2.0) calls a
 * Lambda proxy integration: it builds the v2 event (lower-cased headers, duplicates joined with
 * commas, cookies apart, base64 bodies for binary content), invokes the function and maps its
 * structured result back to HTTP.
 *
 * It refuses what AWS refuses, with the same status: a body over API Gateway's 10 MiB, and an event
 * that Lambda would not accept as a synchronous invocation (6,291,456 bytes as JSON), both `413`
 * without invoking anything (docs/rules.md, "Payload size").
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { fitsInvocation, HTTP_API_MAX_BODY_BYTES } from '../lambdas/shared/payload-limits.js';

export interface HttpRoute {
  readonly method: string;
  /** `/webhooks/stripe` or `/webhooks/{provider}`. */
  readonly path: string;
  readonly invoke: (event: APIGatewayProxyEventV2) => Promise<unknown>;
}

/** One line per request refused before the function, as API Gateway's access log would show it. */
export type RefusalLog = (line: { status: number; path: string; bodyBytes: number; reason: string }) => void;

/** What API Gateway answers to a body over its limit, and Lambda's refusal as API Gateway maps it. */
export const BODY_TOO_LARGE_RESPONSE = {
  status: 413,
  body: `HTTP content length exceeded ${HTTP_API_MAX_BODY_BYTES} bytes.`,
} as const;
export const INVOCATION_TOO_LARGE_RESPONSE = {
  status: 413,
  body: '{"message":"Request Too Long"}',
} as const;

const TEXT_TYPES = [
  /^text\//,
  /json/,
  /xml/,
  /^application\/x-www-form-urlencoded/,
  /^application\/javascript/,
];

function matchRoute(routes: readonly HttpRoute[], method: string, path: string) {
  for (const route of routes) {
    if (route.method !== method && route.method !== 'ANY') continue;
    const pattern = route.path.split('/');
    const actual = path.split('/');
    if (pattern.length !== actual.length) continue;
    const parameters: Record<string, string> = {};
    const ok = pattern.every((segment, i) => {
      const value = actual[i] ?? '';
      if (segment.startsWith('{') && segment.endsWith('}')) {
        parameters[segment.slice(1, -1)] = decodeURIComponent(value);
        return value.length > 0;
      }
      return segment === value;
    });
    if (ok) return { route, parameters };
  }
  return undefined;
}

/**
 * The request body, or its size when it is over API Gateway's limit (read to the end and dropped,
 * so the client gets the 413 rather than a reset connection).
 */
async function readBody(request: IncomingMessage): Promise<Buffer | number> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size <= HTTP_API_MAX_BODY_BYTES) chunks.push(chunk as Buffer);
  }
  return size > HTTP_API_MAX_BODY_BYTES ? size : Buffer.concat(chunks);
}

function refuse(
  response: ServerResponse,
  answer: { readonly status: number; readonly body: string },
  contentType: string,
): void {
  response.writeHead(answer.status, { 'content-type': contentType });
  response.end(answer.body);
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/**
 * The v2 event's `headers`, `cookies` and `queryStringParameters`, as API Gateway builds them:
 * "Duplicate headers are combined with commas and included in the headers field. Duplicate query
 * strings are combined with commas", and the request's cookies go to `cookies`, one per entry
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html).
 *
 * From `rawHeaders`, not `headers`: Node's `headers` joins duplicates with ", " (cookie with "; "),
 * and keeps only the first of content-type, authorization, user-agent, host and a few others
 * (https://nodejs.org/api/http.html#messageheaders), so a duplicated signature header would reach
 * the function as something API Gateway never sends.
 */
export function requestFields(
  rawHeaders: readonly string[],
  search: URLSearchParams,
): Pick<APIGatewayProxyEventV2, 'headers' | 'cookies' | 'queryStringParameters'> {
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] ?? '').toLowerCase();
    const value = rawHeaders[i + 1] ?? '';
    if (name === 'cookie') {
      for (const cookie of value.split(';')) if (cookie.trim()) cookies.push(cookie.trim());
      continue;
    }
    headers[name] = name in headers ? `${headers[name]},${value}` : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of search) query[name] = name in query ? `${query[name]},${value}` : value;
  return {
    headers,
    ...(cookies.length ? { cookies } : {}),
    ...(Object.keys(query).length ? { queryStringParameters: query } : {}),
  };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `requestContext.time` as API Gateway writes it: `12/Mar/2020:19:03:58 +0000`. */
export function requestTime(date: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(date.getUTCDate())}/${MONTHS[date.getUTCMonth()]}/${date.getUTCFullYear()}:${two(
    date.getUTCHours(),
  )}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())} +0000`;
}

export function toApiEvent(
  request: IncomingMessage,
  route: HttpRoute,
  parameters: Record<string, string>,
  body: Buffer,
): APIGatewayProxyEventV2 {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const fields = requestFields(request.rawHeaders, url.searchParams);
  const headers = fields.headers;
  const contentType = headers['content-type'] ?? '';
  const isText = body.length === 0 || TEXT_TYPES.some((t) => t.test(contentType));
  const now = new Date();
  return {
    version: '2.0',
    routeKey: `${route.method} ${route.path}`,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...fields,
    ...(Object.keys(parameters).length ? { pathParameters: parameters } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method: request.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${request.httpVersion}`,
        // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d; API Gateway gives a.b.c.d.
        sourceIp: (request.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:(?=\d+\.)/, ''),
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: `${route.method} ${route.path}`,
      stage: '$default',
      time: requestTime(now),
      timeEpoch: now.getTime(),
    },
    ...(body.length ? { body: isText ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: !isText,
  };
}

export async function startHttpApi(options: {
  readonly routes: readonly HttpRoute[];
  readonly port: number;
  readonly host?: string;
  readonly onError?: (error: unknown) => void;
  readonly onRefused?: RefusalLog;
}): Promise<{ url: string; stop(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    void (async () => {
      const path = new URL(request.url ?? '/', 'http://localhost').pathname;
      const match = matchRoute(options.routes, request.method ?? 'GET', path);
      if (!match) return json(response, 404, { message: 'Not Found' });
      const body = await readBody(request);
      if (typeof body === 'number') {
        options.onRefused?.({ status: 413, path, bodyBytes: body, reason: 'body over 10 MiB' });
        return refuse(response, BODY_TOO_LARGE_RESPONSE, 'text/plain; charset=utf-8');
      }
      const event = toApiEvent(request, match.route, match.parameters, body);
      if (!fitsInvocation(event)) {
        options.onRefused?.({
          status: 413,
          path,
          bodyBytes: body.length,
          reason: 'RequestEntityTooLargeException: the event is over the Lambda invocation limit',
        });
        return refuse(response, INVOCATION_TOO_LARGE_RESPONSE, 'application/json');
      }
      let result: APIGatewayProxyStructuredResultV2;
      try {
        result = (await match.route.invoke(event)) as APIGatewayProxyStructuredResultV2;
      } catch (error) {
        options.onError?.(error);
        return json(response, 500, { message: 'Internal Server Error' });
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(result?.headers ?? {})) headers[k] = String(v);
      response.writeHead(result?.statusCode ?? 200, headers);
      const payload = result?.body ?? '';
      response.end(result?.isBase64Encoded ? Buffer.from(payload, 'base64') : payload);
    })().catch((error) => {
      options.onError?.(error);
      if (!response.headersSent) json(response, 500, { message: 'Internal Server Error' });
    });
  });
  server.listen(options.port, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    stop: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
