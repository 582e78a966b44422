/**
 * What each log line says about its invocation: the request id (the same as Lambda's START, END and
 * REPORT lines, so a line leads to its invocation's duration and memory) and whether it was a cold
 * start. Powertools' `injectLambdaContext` also adds the function's ARN, name and memory size to
 * every line, about 140 bytes that the log group and the REPORT line already hold: at $0.50 per GB
 * ingested, about $0.07 per million lines (docs/performance.md).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';

export function invocationLogContext(logger: Logger): MiddlewareObj<unknown, unknown, Error, Context> {
  let coldStart = true;
  const reset = async () => {
    logger.resetKeys();
  };
  return {
    before: async (request) => {
      logger.resetKeys();
      logger.appendKeys({ function_request_id: request.context.awsRequestId, cold_start: coldStart });
      coldStart = false;
    },
    after: reset,
    onError: reset,
  };
}
