/**
 * What a sweep costs: read and write units of one run over a claims table holding many finished
 * claims and a few stuck ones, against what a Scan of the same table would read. The claims are
 * written through the real store (receiver create, processor begin and DONE), so index membership
 * is what the pipeline leaves; the sweep is the real core on DynamoDB Local, SQS and s3rver.
 */
import { type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { SqsEventQueue } from '../lambdas/queue/event-queue.js';
import { archiveObjectKey } from '../lambdas/shared/archive-layout.js';
import { DynamoClaimStore } from '../lambdas/store/dynamo-claim-store.js';
import { S3PayloadArchive } from '../lambdas/store/payload-archive.js';
import { ProcessingClaims } from '../lambdas/store/processing-claims.js';
import { SweepStore } from '../lambdas/store/sweep-store.js';
import { sweep } from '../lambdas/sweeper/core.js';
import { SWEEPER_DEFAULTS } from '../lambdas/sweeper/settings.js';
import { CapacityMeter } from './capacity.js';
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

export interface SweepRunUnits {
  /** As DynamoDB Local reported them. */
  readonly readUnits: number;
  /**
   * An upper bound for AWS: each Query at least half a unit (eventually consistent, the only kind an
   * index serves) and each strongly consistent GetItem at least one, even when they return nothing.
   */
  readonly readUnitsAtLeast: number;
  readonly writeUnits: number;
  /** `QueryCommand x33`, `GetItemCommand x20`, ... */
  readonly requests: readonly string[];
}

export interface SweepCostResult {
  /** Claims in the table: finished (DONE), and stuck ones of each kind. */
  readonly finishedClaims: number;
  readonly stuckWithBody: number;
  readonly stuckWithoutBody: number;
  /** A run with the stuck claims due: they are re-sent or reported. */
  readonly dueRun: SweepRunUnits & { readonly requeued: number; readonly reported: number };
  /** The next run: nothing due (the usual run). */
  readonly quietRun: SweepRunUnits;
  /** What one Scan of the table reads, the design the index replaces. */
  readonly scanReadUnits: number;
  /** The Scan scaled to a table of a million claims (it grows with the table; the sweep does not). */
  readonly scanReadUnitsPerMillionClaims: number;
  /** The quiet run (upper bound), every 5 minutes for 30 days, in USD; and the Scan of a million claims. */
  readonly quietMonthUsd: number;
  readonly scanMillionMonthUsd: number;
}

const MINUTE = 60_000;

function units(meter: CapacityMeter): SweepRunUnits {
  const tally = meter.take();
  const counts = new Map<string, number>();
  for (const op of tally.operations) counts.set(op.command, (counts.get(op.command) ?? 0) + 1);
  const floor = (command: string) => (command === 'GetItemCommand' ? 1 : 0.5);
  const atLeast = tally.operations
    .filter(
      (op) => op.readUnits > 0 || op.command.endsWith('QueryCommand') || op.command === 'GetItemCommand',
    )
    .reduce((sum, op) => sum + Math.max(op.readUnits, floor(op.command)), 0);
  return {
    readUnitsAtLeast: Math.round(atLeast * 100) / 100,
    readUnits: Math.round(tally.readUnits * 100) / 100,
    writeUnits: Math.round(tally.writeUnits * 100) / 100,
    requests: [...counts].map(([command, n]) => `${command.replace(/Command$/, '')} x${n}`),
  };
}

async function seedFinished(dynamo: DynamoDBClient, table: string, count: number): Promise<void> {
  const store = new DynamoClaimStore({ client: dynamo, tableName: table });
  const processing = new ProcessingClaims(dynamo, table);
  const expiresAt = Math.floor(Date.now() / 1000) + 86_400;
  const one = async (i: number) => {
    const claim = {
      pk: `stripe:platform:evt_done_${i}`,
      provider: 'stripe',
      account: 'platform',
      eventId: `evt_done_${i}`,
      eventType: 'charge.refunded',
      expiresAt,
    };
    const now = Date.now();
    await store.createClaim(claim, { token: `r${i}`, expiresAt: now + 15_000, owner: 'receiver' }, now);
    const lease = { token: `p${i}`, expiresAt: now + 120_000, owner: 'processor' as const };
    await processing.beginProcessing(claim, lease, now, expiresAt);
    await processing.markStep(
      claim.pk,
      lease.token,
      { step: 'state', plannedEffects: [], done: 'applied' },
      now,
    );
  };
  for (let i = 0; i < count; i += 20)
    await Promise.all(Array.from({ length: Math.min(20, count - i) }, (_, j) => one(i + j)));
}

/** RECEIVED claims whose receiver lease ran out an hour ago; `withBody` have their claim-check object stored. */
async function seedStuck(
  dynamo: DynamoDBClient,
  table: string,
  archive: { client: ReturnType<typeof s3Client>; bucket: string },
  count: number,
  withBody: boolean,
): Promise<void> {
  const store = new DynamoClaimStore({ client: dynamo, tableName: table });
  const hourAgo = Date.now() - 60 * MINUTE;
  for (let i = 0; i < count; i++) {
    const id = `evt_stuck_${withBody ? 'body' : 'nobody'}_${i}`;
    const claim = {
      pk: `github:default:${id}`,
      provider: 'github',
      account: 'default',
      eventId: id,
      eventType: 'push',
      expiresAt: Math.floor(Date.now() / 1000) + 86_400,
    };
    const created = await store.createClaim(
      claim,
      { token: `s${i}`, expiresAt: hourAgo, owner: 'receiver' },
      hourAgo,
    );
    if (!withBody || !created.created) continue;
    const message = {
      v: 1,
      key: claim.pk,
      provider: 'github',
      account: 'default',
      eventId: id,
      eventType: 'push',
      receivedAt: new Date(hourAgo).toISOString(),
      claimExpiresAt: claim.expiresAt,
      headers: {},
      body: '{"ref":"refs/heads/main"}',
      bodyEncoding: 'utf8',
      archivedAt: new Date(hourAgo).toISOString(),
    };
    await archive.client.send(
      new PutObjectCommand({
        Bucket: archive.bucket,
        Key: archiveObjectKey('github', created.claim.firstSeenAt, claim.pk),
        Body: JSON.stringify(message),
      }),
    );
  }
}

export async function measureSweepCost(
  endpoints: Endpoints,
  options: { finished: number; stuck: number; progress: (line: string) => void },
): Promise<SweepCostResult> {
  if (!endpoints.s3Endpoint) throw new Error('the sweep benchmark needs the S3 server');
  const meter = new CapacityMeter();
  const dynamo = meter.attach(dynamoClient(endpoints));
  const sqs = sqsClient(endpoints);
  const s3 = s3Client(endpoints.s3Endpoint);
  const [table, queueUrl, bucket] = await Promise.all([
    createClaimsTable(dynamo),
    createQueue(sqs, 'sweep'),
    createBucket(s3),
  ]);
  options.progress(`  seeding ${options.finished} finished and ${2 * options.stuck} stuck claims...`);
  await seedFinished(dynamo, table, options.finished);
  await seedStuck(dynamo, table, { client: s3, bucket }, options.stuck, true);
  await seedStuck(dynamo, table, { client: s3, bucket }, options.stuck, false);
  meter.take();

  const deps = {
    claims: new SweepStore(dynamo, table),
    queue: new SqsEventQueue({ client: sqs, queueUrl }),
    archive: new S3PayloadArchive(s3, bucket),
    settings: {
      receivedGraceMs: SWEEPER_DEFAULTS.receivedGraceSeconds * 1000,
      processingGraceMs: SWEEPER_DEFAULTS.processingGraceSeconds * 1000,
      enqueuedStaleMs: SWEEPER_DEFAULTS.enqueuedStaleSeconds * 1000,
      maxRequeues: SWEEPER_DEFAULTS.maxRequeues,
      maxClaimsPerRun: SWEEPER_DEFAULTS.maxClaimsPerRun,
    },
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
  };
  const report = await sweep(deps);
  const dueRun = { ...units(meter), requeued: report.requeued.length, reported: report.reported.length };
  await sweep(deps);
  const quietRun = units(meter);

  let scanReadUnits = 0;
  let start: Record<string, never> | undefined;
  do {
    const page = await dynamo.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
    start = page.LastEvaluatedKey as typeof start;
  } while (start);
  scanReadUnits = Math.round(meter.take().readUnits * 100) / 100;
  dynamo.destroy();
  sqs.destroy();
  s3.destroy();

  const runsPerMonth = (30 * 24 * 60) / 5;
  const claims = options.finished + 2 * options.stuck;
  const scanPerMillion = Math.round((scanReadUnits / claims) * 1e6);
  const rru = PRICES.dynamoDbReadRequestUnit.usd;
  return {
    finishedClaims: options.finished,
    stuckWithBody: options.stuck,
    stuckWithoutBody: options.stuck,
    dueRun,
    quietRun,
    scanReadUnits,
    scanReadUnitsPerMillionClaims: scanPerMillion,
    quietMonthUsd: runsPerMonth * quietRun.readUnitsAtLeast * rru,
    scanMillionMonthUsd: runsPerMonth * scanPerMillion * rru,
  };
}
