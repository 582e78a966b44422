/**
 * The platform's size limits, in one place: what a webhook body may weigh at each hop, and where a
 * body stops fitting in a queue message and goes to S3 instead (a claim check). Sources are in
 * docs/rules.md ("Payload size"); the break-even behind the claim-check threshold is in
 * docs/performance.md.
 */

/** API Gateway HTTP API: the largest request body it accepts; a larger one is refused with 413. */
export const HTTP_API_MAX_BODY_BYTES = 10_485_760;

/**
 * Lambda, synchronous invocation: the whole request payload (the API Gateway event as JSON, body,
 * headers and request context included) must be smaller than this (Lambda's own error text:
 * "Request must be smaller than 6291456 bytes for the InvokeFunction operation").
 */
export const LAMBDA_SYNC_REQUEST_LIMIT_BYTES = 6_291_456;

/** SQS standard queues: the largest message (body plus attributes; we send no attributes). */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;

/** SQS bills every 64 KiB chunk of a request's payload as one request. */
export const SQS_BILLING_CHUNK_BYTES = 65_536;

/**
 * Queue messages up to this size carry the body; larger ones carry a pointer to the body in S3.
 * Seven billed SQS chunks (448 KiB): each 64 KiB chunk costs a request to send and one to receive
 * ($0.80 per million events), while a claim check costs one S3 PUT and one GET ($5.40 per million)
 * on top of a one-chunk message each way. The processor archives a whole batch in one object, so no
 * per-event PUT is paid on either route and the claim check's PUT is all extra (docs/performance.md,
 * "Claim-check break-even"; bench/large-payloads.ts computes it from the prices).
 */
export const CLAIM_CHECK_THRESHOLD_DEFAULT_BYTES = 7 * SQS_BILLING_CHUNK_BYTES;

/** How much JSON string escaping adds to `text`: one byte per `"` or `\`, five per control character. */
export function jsonEscapeOverhead(text: string): number {
  return Buffer.byteLength(JSON.stringify(text)) - 2 - Buffer.byteLength(text);
}

/**
 * The largest body API Gateway can hand the receiver, given the rest of the event (`envelopeBytes`:
 * the event as JSON with an empty body string). Text bodies travel as a JSON string (escaped);
 * binary ones as base64 (4 bytes per 3, no escaping).
 */
export function largestDeliverableBody(envelopeBytes: number): {
  readonly text: number;
  readonly base64: number;
} {
  const room = LAMBDA_SYNC_REQUEST_LIMIT_BYTES - 1 - envelopeBytes;
  return { text: Math.max(0, room), base64: Math.max(0, Math.floor(room / 4) * 3) };
}

/** Whether an API Gateway event fits in one synchronous invocation. */
export function fitsInvocation(event: unknown): boolean {
  return Buffer.byteLength(JSON.stringify(event)) < LAMBDA_SYNC_REQUEST_LIMIT_BYTES;
}
