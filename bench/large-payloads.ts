/**
 * Large bodies through the receiver: for signed GitHub pushes of 1, 3 and 5.5 MB, the time to
 * verify the HMAC, the whole handler's time (verify, claim, claim check to S3, send) and the
 * process's peak resident memory, each size in a fresh Node process running the synthesized
 * receiver bundle against the emulators, as Lambda runs it. The peak is compared with the
 * receiver's memory size (docs/performance.md, "Large payloads").
 *
 * Also the claim-check break-even: what a message of a given size costs in the queue against the
 * claim check (S3 PUT + GET), from list prices (./prices.ts), with and without the processor's
 * per-event archive PUT.
 */
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { SQS_BILLING_CHUNK_BYTES, SQS_MAX_MESSAGE_BYTES } from '../lambdas/shared/payload-limits.js';
import { secretEnvVar } from '../lambdas/shared/secrets.js';
import { sampleDelivery } from '../local/samples.js';
import type { BundleInfo } from './bundles.js';
import { PRICES } from './prices.js';
import {
  createBucket,
  createClaimsTable,
  createQueue,
  dynamoClient,
  type Endpoints,
  s3Client,
  sqsClient,
} from './resources.js';
import { type LatencySummary, round3, summarize } from './stats.js';

export const LARGE_PAYLOAD_SIZES = [1_000_000, 3_000_000, 5_500_000] as const;

export interface LargePayloadRun {
  readonly bytes: number;
  readonly deliveries: number;
  /** HMAC-SHA256 over the body, as the GitHub verifier computes it. */
  readonly hmacMs: LatencySummary;
  /** The receiver handler from event to answer: verify, claim, S3 PUT, SendMessage, mark. */
  readonly handlerMs: LatencySummary;
  /** Peak RSS of the process after importing the bundle, before any delivery. */
  readonly baselineRssMb: number;
  /** Peak RSS of the process over all its deliveries of this size. */
  readonly peakRssMb: number;
  /** Peak RSS as a share of the function's memory size. */
  readonly shareOfMemorySize: number;
  readonly outcomes: Readonly<Record<string, number>>;
}

export interface LargePayloadResult {
  readonly receiverMemoryMb: number;
  readonly runs: readonly LargePayloadRun[];
}

const CHILD = [
  "import { createHmac, randomUUID } from 'node:crypto';",
  "import { readFileSync } from 'node:fs';",
  'const body = readFileSync(process.env.BENCH_BODY_FILE, "utf8");',
  // The sample's headers, signed by the GitHub module's dev.sign in the parent (GitHub signs the body
  // only, so the same signature serves every run); each run gets a fresh delivery id.
  'const headers = JSON.parse(readFileSync(process.env.BENCH_HEADERS_FILE, "utf8"));',
  'const secret = process.env.BENCH_SECRET;',
  'const runs = Number(process.env.BENCH_RUNS);',
  'const { handler } = await import(process.env.BENCH_ENTRY);',
  'const baselineKb = process.resourceUsage().maxRSS;',
  'const hmacMs = []; const handlerMs = []; const outcomes = {};',
  'for (let i = 0; i < runs; i++) {',
  '  let t = performance.now();',
  // What one HMAC-SHA256 over this body costs in this process: the verifier's main work.
  '  createHmac("sha256", secret).update(Buffer.from(body)).digest("hex");',
  '  hmacMs.push(performance.now() - t);',
  '  const event = JSON.parse(JSON.stringify({',
  "    version: '2.0', routeKey: 'POST /webhooks/github', rawPath: '/webhooks/github', rawQueryString: '',",
  '    headers: { ...headers, "user-agent": "GitHub-Hookshot/bench", "x-github-delivery": randomUUID() },',
  "    requestContext: { http: { method: 'POST', path: '/webhooks/github' }, requestId: randomUUID(), stage: '$default' },",
  '    body, isBase64Encoded: false,',
  '  }));',
  '  const context = { functionName: "bench-receiver", awsRequestId: randomUUID(), getRemainingTimeInMillis: () => 10000 };',
  '  t = performance.now();',
  '  const result = await handler(event, context);',
  '  handlerMs.push(performance.now() - t);',
  '  const outcome = JSON.parse(result.body).outcome;',
  '  outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;',
  '}',
  'const peakKb = process.resourceUsage().maxRSS;',
  'process.stdout.write(JSON.stringify({ baselineKb, peakKb, hmacMs, handlerMs, outcomes }));',
].join('\n');

interface ChildOutput {
  readonly baselineKb: number;
  readonly peakKb: number;
  readonly hmacMs: number[];
  readonly handlerMs: number[];
  readonly outcomes: Record<string, number>;
}

const SECRET = 'bench-large-payload-secret';

async function runChild(options: {
  readonly maxBuffer: number;
  readonly env: NodeJS.ProcessEnv;
}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ['--input-type=module', '-e', CHILD],
      { ...options, encoding: 'utf8' },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof e.code === 'number' ? e.code : 1,
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? String(error),
    };
  }
}

export async function measureLargePayloads(
  receiver: BundleInfo,
  endpoints: Endpoints,
  options: { readonly runs: number; readonly progress?: (line: string) => void },
): Promise<LargePayloadResult> {
  const s3Endpoint = endpoints.s3Endpoint;
  if (!s3Endpoint) throw new Error('large payloads need the S3 server (claim checks)');
  const dynamo = dynamoClient(endpoints);
  const sqs = sqsClient(endpoints);
  const s3 = s3Client(s3Endpoint);
  const [tableName, queueUrl, bucket] = await Promise.all([
    createClaimsTable(dynamo),
    createQueue(sqs, 'large'),
    createBucket(s3),
  ]);
  dynamo.destroy();
  sqs.destroy();
  s3.destroy();
  const dir = mkdtempSync(join(tmpdir(), 'webhooks-bench-large-'));
  const runs: LargePayloadRun[] = [];
  try {
    for (const bytes of LARGE_PAYLOAD_SIZES) {
      options.progress?.(`  ${bytes / 1e6} MB push x ${options.runs} in a fresh process...`);
      const file = join(dir, `push-${bytes}.json`);
      const headersFile = join(dir, `push-${bytes}.headers.json`);
      const delivery = sampleDelivery('github', { type: 'push', secret: SECRET, bytes });
      writeFileSync(file, delivery.body);
      writeFileSync(headersFile, JSON.stringify(delivery.headers));
      // Asynchronously: with --skip-load the emulators run in this process, and a blocking spawn
      // would stop them answering the child (its requests then time out).
      const result = await runChild({
        maxBuffer: 16 * 1024 * 1024,
        env: {
          PATH: process.env.PATH ?? '',
          ...receiver.environment,
          CLAIMS_TABLE_NAME: tableName,
          EVENT_QUEUE_URL: queueUrl,
          ARCHIVE_BUCKET_NAME: bucket,
          ARCHIVE_FORCE_PATH_STYLE: 'true',
          [secretEnvVar('github')]: SECRET,
          BENCH_SECRET: SECRET,
          AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamoDbEndpoint,
          AWS_ENDPOINT_URL_SQS: endpoints.sqsEndpoint,
          AWS_ENDPOINT_URL_S3: s3Endpoint,
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'local',
          AWS_SECRET_ACCESS_KEY: 'local',
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          POWERTOOLS_METRICS_DISABLED: 'true',
          POWERTOOLS_LOG_LEVEL: 'ERROR',
          BENCH_ENTRY: pathToFileURL(receiver.entry).href,
          BENCH_BODY_FILE: file,
          BENCH_HEADERS_FILE: headersFile,
          BENCH_RUNS: String(options.runs),
        },
      });
      if (result.code !== 0) throw new Error(`large-payload run (${bytes} B) failed: ${result.stderr}`);
      const lastLine = result.stdout.trim().split('\n').at(-1) ?? '';
      const out = JSON.parse(lastLine) as ChildOutput;
      const peakRssMb = round3(out.peakKb / 1024);
      runs.push({
        bytes,
        deliveries: options.runs,
        hmacMs: summarize(out.hmacMs),
        handlerMs: summarize(out.handlerMs),
        baselineRssMb: round3(out.baselineKb / 1024),
        peakRssMb,
        shareOfMemorySize: round3(peakRssMb / receiver.memoryMb),
        outcomes: out.outcomes,
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { receiverMemoryMb: receiver.memoryMb, runs };
}

/** In-process HMAC only, for a figure independent of the bundle. */
export function hmacMs(bytes: number, runs: number): LatencySummary {
  const body = Buffer.alloc(bytes, 'a');
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    createHmac('sha256', SECRET).update(body).digest('hex');
    times.push(performance.now() - t);
  }
  return summarize(times);
}

export interface BreakEvenRow {
  readonly messageBytes: number;
  /** SQS requests billed to send and receive it in the message (64 KiB chunks), per million events. */
  readonly inMessageUsd: number;
  /** A claim check: a one-chunk message each way, the receiver's S3 PUT and the processor's GET. */
  readonly claimCheckUsd: number;
}

export interface BreakEven {
  readonly rows: readonly BreakEvenRow[];
  /** Largest message (in whole 64 KiB chunks) for which the message is no dearer than a claim check. */
  readonly thresholdBytes: number;
}

/**
 * Per million events, what differs between the two routes (what both pay, like the DeleteMessage,
 * is left out). In the message: `ceil(size / 64 KiB)` billed requests to send it and as many to
 * receive it. Claim check: a one-chunk message each way, one PUT and one GET. The processor's
 * archive writes one object per batch whichever route an event took, so it is left out too (a
 * claim-checked event is not in the batch's object, but the batch's PUT is paid for the others).
 * Storage is the same bytes either way.
 */
export function claimCheckBreakEven(): BreakEven {
  const sqs = PRICES.sqsStandardRequest.usd * 1e6;
  const put = PRICES.s3PutRequest.usd * 1e6;
  const get = PRICES.s3GetRequest.usd * 1e6;
  const chunks = (bytes: number) => Math.ceil(bytes / SQS_BILLING_CHUNK_BYTES);
  const inMessage = (bytes: number) => 2 * chunks(bytes) * sqs;
  const claimCheck = 2 * sqs + put + get;
  const rows: BreakEvenRow[] = [];
  for (
    let bytes = SQS_BILLING_CHUNK_BYTES;
    bytes <= SQS_MAX_MESSAGE_BYTES;
    bytes += SQS_BILLING_CHUNK_BYTES
  ) {
    rows.push({
      messageBytes: bytes,
      inMessageUsd: round3(inMessage(bytes)),
      claimCheckUsd: round3(claimCheck),
    });
  }
  return {
    rows,
    thresholdBytes: rows.filter((r) => inMessage(r.messageBytes) <= claimCheck).at(-1)?.messageBytes ?? 0,
  };
}
