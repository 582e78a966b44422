/**
 * The AWS SDK's HTTP settings for a function that must answer within a provider's deadline (the
 * receiver, and the secrets it reads): a connection is given up after 1 s, a request after
 * `requestTimeoutMs`, and the SDK retries either as a transient error.
 *
 * `throwOnRequestTimeout` is what makes the request timeout abort: without it, the SDK's HTTP
 * handler (`@smithy/node-http-handler` 4.x) only logs a warning when `requestTimeout` passes and
 * the request waits on. A DynamoDB endpoint that took the connection and never answered held the
 * receiver until its Lambda timeout, with no answer of ours and no log line saying why.
 */
export function boundedRequests(requestTimeoutMs: number) {
  return { connectionTimeout: 1_000, requestTimeout: requestTimeoutMs, throwOnRequestTimeout: true } as const;
}
