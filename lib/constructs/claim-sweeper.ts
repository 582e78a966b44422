/**
 * The sweeper: a Lambda run on a schedule (EventBridge rule) that recovers or reports claims stuck
 * in RECEIVED, ENQUEUED or PROCESSING (lambdas/sweeper/core.ts). It reads the claims table's sparse
 * index of unfinished claims, never the whole table, and sends events again from the archive bucket.
 */
import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { SWEEPER_SERVICE } from '../../lambdas/shared/metric-names.js';
import { UNFINISHED_INDEX } from '../../lambdas/store/unfinished-index.js';
import * as sweeperSettings from '../../lambdas/sweeper/settings.js';
import { grantArchiveListing, grantArchivePrefix } from './payload-archive.js';
import { WebhookFunction } from './webhook-function.js';

export interface ClaimSweeperProps {
  readonly claimsTable: dynamodb.ITable;
  readonly eventQueue: sqs.IQueue;
  readonly archiveBucket: s3.IBucket;
  /** How often the sweeper runs. */
  readonly interval: Duration;
  /** A RECEIVED claim is stale this long after its receiver lease ran out. */
  readonly receivedGrace: Duration;
  /** A PROCESSING claim is stale this long after its lease ran out: longer than the queue's visibility timeout. */
  readonly processingGrace: Duration;
  /** An ENQUEUED claim no processor has taken for this long is stale. */
  readonly enqueuedStaleAfter: Duration;
  readonly logRetention: logs.RetentionDays;
  /** Run the function with `--enable-source-maps`. @default false */
  readonly sourceMaps?: boolean;
}

export class ClaimSweeper extends Construct {
  public readonly function: lambda.IFunction;
  public readonly rule: events.Rule;

  constructor(scope: Construct, id: string, props: ClaimSweeperProps) {
    super(scope, id);
    const sweeper = new WebhookFunction(this, 'Sweeper', {
      code: { framework: 'sweeper' },
      description: 'Recovers or reports webhook claims stuck in RECEIVED, ENQUEUED or PROCESSING',
      // 500 claims per run at 8 at a time is seconds; the margin covers a slow S3 read or two.
      timeout: Duration.minutes(2),
      memorySize: 256,
      logRetention: props.logRetention,
      sourceMaps: props.sourceMaps ?? false,
      environment: {
        POWERTOOLS_SERVICE_NAME: SWEEPER_SERVICE,
        ...sweeperSettings.toEnvironment({
          claimsTableName: props.claimsTable.tableName,
          eventQueueUrl: props.eventQueue.queueUrl,
          archiveBucket: props.archiveBucket.bucketName,
          // toSeconds() refuses a fraction of a second: the variables hold whole seconds.
          receivedGraceMs: props.receivedGrace.toSeconds() * 1000,
          processingGraceMs: props.processingGrace.toSeconds() * 1000,
          enqueuedStaleMs: props.enqueuedStaleAfter.toSeconds() * 1000,
          maxRequeues: sweeperSettings.DEFAULTS.maxRequeues,
          maxClaimsPerRun: sweeperSettings.DEFAULTS.maxClaimsPerRun,
        }),
      },
    });
    sweeper.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        resources: [props.claimsTable.tableArn],
      }),
    );
    // The index only: no Scan, no Query on the table itself.
    sweeper.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [`${props.claimsTable.tableArn}/index/${UNFINISHED_INDEX}`],
      }),
    );
    sweeper.role.addToPolicy(
      new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [props.eventQueue.queueArn] }),
    );
    grantArchiveListing(sweeper.role, props.archiveBucket);
    grantArchivePrefix(
      sweeper.role,
      props.archiveBucket,
      ['s3:GetObject'],
      'The sweeper reads the stored body of the one event it re-sends; object names are per event, so GetObject is scoped to the archive prefix of this one bucket.',
    );
    this.function = sweeper.function;

    this.rule = new events.Rule(this, 'Schedule', {
      description: 'Runs the claim sweeper',
      schedule: events.Schedule.rate(props.interval),
      // A failed run is not retried: the next scheduled run sweeps the same claims again.
      targets: [new targets.LambdaFunction(sweeper.function, { retryAttempts: 0 })],
    });
  }
}
