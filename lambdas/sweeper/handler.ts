/**
 * The sweeper Lambda, run on a schedule (EventBridge rule in the stack; a timer in `npm start`).
 * One run: sweep the due unfinished claims (./core.ts), log a summary line, emit the StuckClaims
 * gauge and the counts as EMF metrics. A run that throws is retried by the next one: nothing it
 * left half done is lost (every step is fenced and repeat-safe).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SqsEventQueue } from '../queue/event-queue.js';
import { METRIC_NAMESPACE, SWEEPER_SERVICE, SweeperMetric } from '../shared/metric-names.js';
import { S3PayloadArchive } from '../store/payload-archive.js';
import { SweepStore } from '../store/sweep-store.js';
import { type SweeperDeps, type SweepReport, sweep } from './core.js';
import { loadSweeperSettings } from './settings.js';

export interface SweeperHandlerOptions {
  readonly deps: () => Omit<SweeperDeps, 'log'>;
  readonly logger?: Logger;
  readonly metrics?: Metrics;
}

export function createSweeperHandler(options: SweeperHandlerOptions): () => Promise<SweepReport> {
  const logger = options.logger ?? new Logger({ serviceName: SWEEPER_SERVICE });
  const metrics =
    options.metrics ?? new Metrics({ namespace: METRIC_NAMESPACE, serviceName: SWEEPER_SERVICE });
  let deps: SweeperDeps | undefined;
  return async () => {
    const ready: SweeperDeps = deps ?? { ...options.deps(), log: logger };
    deps = ready;
    const report = await sweep(ready);
    const summary = {
      due: report.due,
      requeued: report.requeued.length,
      redactionsResent: report.redactions.length,
      newlyStuck: report.reported.length,
      stuck: report.stuck,
      deferred: report.deferred,
      skipped: report.skipped,
      dropped: report.dropped,
      errors: report.errors,
      truncated: report.truncated,
    };
    // A quiet run (the usual one) emits and logs nothing above debug. The StuckClaims alarm reads
    // missing data as "not breaching", so a gauge left out when it is 0 alarms the same.
    const quiet = report.due === 0 && report.stuck === 0 && report.errors === 0;
    if (quiet) {
      logger.debug('sweep finished: nothing due', summary);
      return report;
    }
    metrics.addMetric(SweeperMetric.StuckClaims, MetricUnit.Count, report.stuck);
    metrics.addMetric(SweeperMetric.RequeuedClaims, MetricUnit.Count, report.requeued.length);
    metrics.addMetric(SweeperMetric.NewlyStuckClaims, MetricUnit.Count, report.reported.length);
    metrics.publishStoredMetrics();
    if (report.errors > 0 || report.truncated)
      logger.warn('sweep finished with claims left for the next run', summary);
    else logger.info('sweep finished', summary);
    return report;
  };
}

function defaultDeps(): Omit<SweeperDeps, 'log'> {
  const settings = loadSweeperSettings();
  return {
    settings,
    claims: new SweepStore(new DynamoDBClient({ maxAttempts: 5 }), settings.claimsTableName),
    queue: new SqsEventQueue({ client: new SQSClient({ maxAttempts: 5 }), queueUrl: settings.eventQueueUrl }),
    ...(settings.archiveBucket
      ? {
          archive: new S3PayloadArchive(
            new S3Client({ maxAttempts: 3, forcePathStyle: settings.archiveForcePathStyle }),
            settings.archiveBucket,
          ),
        }
      : {}),
  };
}

export const handler = createSweeperHandler({ deps: defaultDeps });
