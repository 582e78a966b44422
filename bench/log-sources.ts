/**
 * The log lines that are written whatever the code logs, priced per event in the cost model:
 * - Lambda's platform lines, one START, END and REPORT per invocation, in the text log format the
 *   functions use (Lambda's "Monitoring and troubleshooting: logs" shows these lines);
 * - the HTTP API's access log, one line per request, in the stage's format (ACCESS_LOG_FIELDS).
 * Each is rendered with representative values, so its byte count follows the format as it changes.
 */
import { ACCESS_LOG_FIELDS } from '../lib/constructs/webhook-ingest.js';

const REQUEST_ID = 'c6af9ac6-7b61-11e6-9a41-93e812345678';

/** START, END and REPORT for one invocation of a function at `memoryMb` (no cold start). */
export function platformLogLines(memoryMb: number): string[] {
  return [
    `START RequestId: ${REQUEST_ID} Version: $LATEST\n`,
    `END RequestId: ${REQUEST_ID}\n`,
    `REPORT RequestId: ${REQUEST_ID}\tDuration: 12.34 ms\tBilled Duration: 13 ms\tMemory Size: ${memoryMb} MB\tMax Memory Used: 98 MB\t\n`,
  ];
}

export const platformLogBytes = (memoryMb: number): number =>
  platformLogLines(memoryMb).reduce((sum, line) => sum + Buffer.byteLength(line), 0);

/** A value for each `$context` variable the access log names, as a webhook delivery fills it. */
const CONTEXT_SAMPLES: Readonly<Record<string, string>> = {
  '$context.requestId': 'Jd1x2hZvIAMEVxQ=',
  '$context.requestTime': '03/Dec/2026:17:21:29 +0000',
  '$context.identity.sourceIp': '54.187.174.169',
  '$context.identity.userAgent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
  '$context.httpMethod': 'POST',
  '$context.path': '/webhooks/stripe',
  '$context.routeKey': 'POST /webhooks/stripe',
  '$context.status': '200',
  '$context.protocol': 'HTTP/1.1',
  '$context.responseLength': '112',
  '$context.responseLatency': '23',
  '$context.integrationStatus': '200',
  '$context.integrationLatency': '21',
  '$context.integrationErrorMessage': '-',
  '$context.error.message': '-',
};

/** One access log line as API Gateway writes it for a delivery (unknown variables: 16 characters). */
export function accessLogLine(): string {
  const filled = Object.fromEntries(
    Object.entries(ACCESS_LOG_FIELDS).map(([field, variable]) => [
      field,
      CONTEXT_SAMPLES[variable] ?? 'x'.repeat(16),
    ]),
  );
  return `${JSON.stringify(filled)}\n`;
}

export const accessLogBytes = (): number => Buffer.byteLength(accessLogLine());
