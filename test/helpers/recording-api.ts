/**
 * The local HTTP API with one route, `POST /webhooks/{provider}`, whose function only records the
 * events it is handed and answers 200: for tests of what the local stand-in gives the functions.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { startHttpApi } from '../../local/http-api.js';

export interface RecordingApi {
  readonly url: string;
  /** Every event the route's function was invoked with, in order (clear it with `length = 0`). */
  readonly invoked: APIGatewayProxyEventV2[];
  /** Requests refused before any function ran (413s). */
  readonly refused: Array<{ status: number; reason: string }>;
  stop(): Promise<void>;
}

export async function startRecordingApi(): Promise<RecordingApi> {
  const invoked: APIGatewayProxyEventV2[] = [];
  const refused: Array<{ status: number; reason: string }> = [];
  const api = await startHttpApi({
    port: 0,
    routes: [
      {
        method: 'POST',
        path: '/webhooks/{provider}',
        invoke: async (event) => {
          invoked.push(event);
          return { statusCode: 200, body: '{"outcome":"accepted"}' };
        },
      },
    ],
    onRefused: (line) => refused.push(line),
  });
  return { url: api.url, invoked, refused, stop: () => api.stop() };
}
