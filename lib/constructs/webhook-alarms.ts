/**
 * Alarms, declared as data (one `AlarmDefinition` per alarm, built from ./metrics.ts) and wired in
 * one loop to an SNS topic. Each alarm's description says what it means and what to do, so the
 * notification itself is the runbook; docs/deploy.md has the same table.
 *
 * Missing data: every metric here is event-driven (EMF counters, Lambda and API Gateway metrics
 * exist only when something happened; SQS stops publishing for idle queues), so "no data" means
 * "nothing happened" and is not breaching, except where an alarm says otherwise.
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { ProviderRegistry } from '../../lambdas/providers/index.js';
import type { ProviderId } from '../../lambdas/providers/types.js';
import {
  METRIC_NAMESPACE,
  OVERSIZED_DELIVERIES_METRIC,
  ProcessorMetric,
  SweeperMetric,
  THROTTLED_DELIVERIES_METRIC,
} from '../../lambdas/shared/metric-names.js';
import {
  apiClientErrorRate,
  apiServerErrorRate,
  duplicateRatio,
  functionErrors,
  invalidSignatureRatio,
  processorTotalMetric,
  queueOldestMessageAge,
  queueVisibleMessages,
  sweeperMetric,
} from './metrics.js';

export type AlarmSeverity = 'critical' | 'warning';

/** One alarm, as data. */
export interface AlarmDefinition {
  /** Construct id and alarm name suffix, e.g. `DuplicateRatioHigh-stripe`. */
  readonly id: string;
  readonly severity: AlarmSeverity;
  /** What it means and what to do: the alarm's description, i.e. the notification text. */
  readonly summary: string;
  readonly runbook: string;
  readonly metric: cloudwatch.IMetric;
  readonly threshold: number;
  readonly comparisonOperator: cloudwatch.ComparisonOperator;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm?: number;
  readonly treatMissingData: cloudwatch.TreatMissingData;
}

/** Per-provider switch and tuning for a duplicate-ratio alarm. */
export interface DuplicateRatioAlarmOptions {
  /**
   * @default true, except the low alarm for GitHub (it never retries automatically, so zero
   * duplicates is its normal state)
   */
  readonly enabled?: boolean;
  /** @default 0.5 for the high alarm; 0.0001 (i.e. "zero") for the low alarm */
  readonly threshold?: number;
  /**
   * Deliveries per period below which the ratio is not judged (a single retry in a quiet period
   * is not a storm; an hour with few deliveries may well have no duplicate).
   * @default 10 per 5 minutes for the high alarm; 1000 per hour for the low alarm
   */
  readonly minDeliveries?: number;
}

export interface ProviderAlarmOptions {
  /** Duplicate / Received too high: a retry storm. */
  readonly duplicateRatioHigh?: DuplicateRatioAlarmOptions;
  /** Duplicate / Received collapsed to zero while traffic flows: retries are no longer recognised. */
  readonly duplicateRatioLow?: DuplicateRatioAlarmOptions;
}

export interface WebhookAlarmThresholds {
  /** API Gateway 5xx / requests, over 5-minute periods. @default 0.05 */
  readonly serverErrorRate?: number;
  /** API Gateway 4xx / requests, over 5-minute periods. @default 0.2 */
  readonly clientErrorRate?: number;
  /** InvalidSignature / Received per provider, over 5-minute periods. @default 0.2 */
  readonly invalidSignatureRatio?: number;
  /** Age of the oldest message in the DLQ. @default Duration.hours(1) */
  readonly deadLetterMaxAge?: Duration;
  /** Age of the oldest message in the event queue (processing lag). @default Duration.minutes(5) */
  readonly processingLag?: Duration;
  /** Processor invocation errors (whole batches failing) per 5 minutes. @default 1 */
  readonly processorErrors?: number;
  /**
   * Events completed as `unhandled` (no applier for their provider and type) per 5 minutes, when
   * the stack has a processor of its own (`processorEntry`). A misspelt provider or event type key
   * makes every such event unhandled; a type you subscribe to on purpose and ignore should have an
   * applier that says so (`ignoreEvent` from `idempotent-webhook-receiver/processor`).
   * @default 1
   */
  readonly unhandledEvents?: number;
}

export interface WebhookAlarmsProps {
  readonly api: apigwv2.IHttpApi;
  /** The API's access log: oversized deliveries are counted from it. @default no oversized alarm */
  readonly accessLogGroup?: logs.ILogGroup;
  readonly processor: lambda.IFunction;
  /**
   * Whether events completed as `unhandled` are alarmed: on for a processor of the app's own (with
   * appliers), off for the default processor (which handles nothing on purpose). @default false
   */
  readonly alarmUnhandled?: boolean;
  /** The claim sweeper: its StuckClaims gauge and its errors are alarmed. @default no sweeper alarms */
  readonly sweeper?: lambda.IFunction;
  /** How often the sweeper runs: the StuckClaims alarm's period is at least this. @default Duration.minutes(5) */
  readonly sweepInterval?: Duration;
  readonly eventQueue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  /** The providers whose duplicate ratios are alarmed. */
  readonly registry: ProviderRegistry<string>;
  /** @default defaults for every provider */
  readonly providers?: Partial<Readonly<Record<ProviderId, ProviderAlarmOptions>>>;
  /** @default see WebhookAlarmThresholds */
  readonly thresholds?: WebhookAlarmThresholds;
  /** Subscribed to the alarm topic. @default no subscription */
  readonly alarmEmail?: string;
  /** @default the stack name */
  readonly alarmNamePrefix?: string;
}

const DEFAULTS = {
  duplicateRatioHigh: { threshold: 0.5, minDeliveries: 10 },
  duplicateRatioLow: { threshold: 0.0001, minDeliveries: 1000 },
  serverErrorRate: 0.05,
  serverErrorMinRequests: 10,
  clientErrorRate: 0.2,
  invalidSignatureRatio: 0.2,
  invalidSignatureMinDeliveries: 5,
  unhandledEvents: 1,
  deadLetterMaxAge: Duration.hours(1),
  processingLag: Duration.minutes(5),
  processorErrors: 1,
} as const;

const FIVE_MINUTES = Duration.minutes(5);
const ONE_MINUTE = Duration.minutes(1);
const { GREATER_THAN_THRESHOLD, GREATER_THAN_OR_EQUAL_TO_THRESHOLD, LESS_THAN_THRESHOLD } =
  cloudwatch.ComparisonOperator;
const NOT_BREACHING = cloudwatch.TreatMissingData.NOT_BREACHING;

/** Every alarm of the stack, as data. */
export function alarmDefinitions(props: WebhookAlarmsProps): AlarmDefinition[] {
  const t = props.thresholds ?? {};
  const definitions: AlarmDefinition[] = [];

  for (const { id: provider, alarms } of Object.values(props.registry.PROVIDERS)) {
    const high = {
      ...DEFAULTS.duplicateRatioHigh,
      enabled: true,
      ...props.providers?.[provider]?.duplicateRatioHigh,
    };
    const low = {
      ...DEFAULTS.duplicateRatioLow,
      // Off by default for a provider that never redelivers on its own (its module's `alarms`).
      enabled: alarms.duplicateRatioLow,
      ...props.providers?.[provider]?.duplicateRatioLow,
    };
    if (high.enabled) {
      definitions.push({
        id: `DuplicateRatioHigh-${provider}`,
        severity: 'warning',
        summary: `More than ${high.threshold * 100}% of ${provider} deliveries are duplicates for 15 minutes: a retry storm.`,
        runbook:
          'The provider is redelivering events it thinks failed: look for receiver 5xx, timeouts or 503 in_flight ' +
          'in the receiver log, and at the provider dashboard for failed deliveries. Nothing is lost or applied ' +
          'twice (duplicates are absorbed); fix the cause of the failed answers.',
        metric: duplicateRatio(provider, {
          period: FIVE_MINUTES,
          minDeliveries: high.minDeliveries,
          whenQuiet: 0,
        }),
        threshold: high.threshold,
        comparisonOperator: GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        // Quiet periods evaluate to 0 inside the expression; no data at all means no traffic.
        treatMissingData: NOT_BREACHING,
      });
    }
    if (low.enabled) {
      definitions.push({
        id: `DuplicateRatioLow-${provider}`,
        severity: 'warning',
        summary: `No ${provider} delivery was a duplicate in an hour with at least ${low.minDeliveries} deliveries.`,
        runbook:
          'Retries may no longer be recognised as duplicates (key rule changed, claims table replaced, claim TTL ' +
          'too short), so the processor may be applying events twice. Compare recent claims for one event id ' +
          '(docs/rules.md, keys) and check the last deploy. If traffic is simply clean, raise minDeliveries.',
        // Below the traffic floor the expression yields 1: "not enough traffic to judge" never alarms.
        metric: duplicateRatio(provider, {
          period: Duration.hours(1),
          minDeliveries: low.minDeliveries,
          whenQuiet: 1,
        }),
        threshold: low.threshold,
        comparisonOperator: LESS_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: NOT_BREACHING,
      });
    }
    definitions.push({
      id: `InvalidSignatureRatio-${provider}`,
      severity: 'critical',
      summary: `More than ${(t.invalidSignatureRatio ?? DEFAULTS.invalidSignatureRatio) * 100}% of ${provider} deliveries fail signature checks for 10 minutes.`,
      runbook:
        'Usually the secret in Secrets Manager does not match the provider (rotated on one side only): compare ' +
        'them, and during a rotation keep the old value as "previous" (docs/deploy.md). The receiver log ' +
        'line has the reason (signature_mismatch, timestamp_outside_tolerance: check clocks). A burst from ' +
        'unknown IPs in the access log is a scanner: consider a WAF.',
      metric: invalidSignatureRatio(provider, {
        period: FIVE_MINUTES,
        minDeliveries: DEFAULTS.invalidSignatureMinDeliveries,
      }),
      threshold: t.invalidSignatureRatio ?? DEFAULTS.invalidSignatureRatio,
      comparisonOperator: GREATER_THAN_THRESHOLD,
      evaluationPeriods: 2,
      treatMissingData: NOT_BREACHING,
    });
  }

  definitions.push(
    {
      id: 'ApiServerErrorRate',
      severity: 'critical',
      summary: `More than ${(t.serverErrorRate ?? DEFAULTS.serverErrorRate) * 100}% of webhook requests answered 5xx in 2 of 3 five-minute periods.`,
      runbook:
        'Providers are being refused and will retry (GitHub will not: redeliver from its UI afterwards). ' +
        'Receiver log: enqueue_failed (SQS), not_configured (a secret is missing or still REPLACE_ME), ' +
        'internal_error (a setting or DynamoDB); no log line but a 5xx in the access log: the function timed ' +
        'out or was throttled (check its Duration, Throttles and the account concurrency).',
      metric: apiServerErrorRate(props.api, {
        period: FIVE_MINUTES,
        minRequests: DEFAULTS.serverErrorMinRequests,
      }),
      threshold: t.serverErrorRate ?? DEFAULTS.serverErrorRate,
      comparisonOperator: GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: NOT_BREACHING,
    },
    {
      id: 'ApiClientErrorRate',
      severity: 'warning',
      summary: `More than ${(t.clientErrorRate ?? DEFAULTS.clientErrorRate) * 100}% of webhook requests answered 4xx in 2 of 3 five-minute periods.`,
      runbook:
        'Deliveries are being refused before or by the receiver. The access log has the status: 429 is ' +
        'API Gateway throttling (see throttled-deliveries), 413 a payload too large (oversized-deliveries), ' +
        '401 a signature or secret problem (invalid-signature-ratio), 404 a wrong URL or a scanner. GitHub ' +
        'does not retry any of them: redeliver from its UI once fixed.',
      metric: apiClientErrorRate(props.api, {
        period: FIVE_MINUTES,
        minRequests: DEFAULTS.serverErrorMinRequests,
      }),
      threshold: t.clientErrorRate ?? DEFAULTS.clientErrorRate,
      comparisonOperator: GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: NOT_BREACHING,
    },
    ...(props.accessLogGroup ? ACCESS_LOG_COUNTS.map(accessLogCountAlarm) : []),
    {
      id: 'DeadLetterQueueNotEmpty',
      severity: 'critical',
      summary: 'An event failed processing on every attempt and is now in the dead-letter queue.',
      runbook:
        'Nothing is lost yet: the message is kept 14 days from receipt. Read it (aws sqs receive-message on ' +
        'the DeadLetterQueueUrl output), find the processor error for its key in the processor log, fix the ' +
        'cause, then redrive it (aws sqs start-message-move-task). Its claim is FAILED, so a provider retry ' +
        'is also accepted again.',
      metric: queueVisibleMessages(props.deadLetterQueue, ONE_MINUTE),
      threshold: 0,
      comparisonOperator: GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      // A DLQ holding messages always reports; no data means an empty, idle queue.
      treatMissingData: NOT_BREACHING,
    },
    {
      id: 'DeadLetterQueueMessageAge',
      severity: 'critical',
      summary: `A message has been in the dead-letter queue for over ${(t.deadLetterMaxAge ?? DEFAULTS.deadLetterMaxAge).toHumanString()} (age counts from its first receipt).`,
      runbook:
        'The DLQ is not being handled and SQS deletes messages 14 days after receipt: redrive or archive them ' +
        'now (see DeadLetterQueueNotEmpty).',
      metric: queueOldestMessageAge(props.deadLetterQueue, FIVE_MINUTES),
      threshold: (t.deadLetterMaxAge ?? DEFAULTS.deadLetterMaxAge).toSeconds(),
      comparisonOperator: GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: NOT_BREACHING,
    },
    {
      id: 'ProcessingLag',
      severity: 'critical',
      summary: `The oldest event waiting in the event queue has been older than ${(t.processingLag ?? DEFAULTS.processingLag).toHumanString()} for 3 minutes.`,
      runbook:
        'The processor is not keeping up or not running: check its Errors, Throttles and Duration, that the ' +
        'event source mapping is enabled, and downstreams (the effect adapters) for slowness. Events are safe in ' +
        'the queue (4 days retention) and applied once when processing resumes.',
      metric: queueOldestMessageAge(props.eventQueue, ONE_MINUTE),
      threshold: (t.processingLag ?? DEFAULTS.processingLag).toSeconds(),
      comparisonOperator: GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      // The processor's poller keeps the queue active, so SQS always reports it; missing data is a
      // CloudWatch gap, not a backlog.
      treatMissingData: NOT_BREACHING,
    },
    {
      id: 'ProcessorErrors',
      severity: 'warning',
      summary: 'Processor invocations failed as a whole (threw or timed out), not just single events.',
      runbook:
        'Every message of those batches returns to the queue and counts a receive towards the DLQ. Look for ' +
        'the error or "Task timed out" in the processor log: a bug, a missing permission, or a downstream ' +
        'slower than the function timeout. Per-event failures are in ProcessingFailed on the dashboard.',
      metric: functionErrors(props.processor, FIVE_MINUTES),
      threshold: t.processorErrors ?? DEFAULTS.processorErrors,
      comparisonOperator: GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      // Lambda reports Errors only for periods with invocations: none is no error.
      treatMissingData: NOT_BREACHING,
    },
    {
      id: 'EffectsInDoubt',
      severity: 'warning',
      summary:
        'An effect that may act twice (its service ignores Idempotency-Key) was called, but whether it acted is unknown: it will not be called again.',
      runbook:
        'Find the events in the processor log ("effect in doubt": key, effect, reason) or with `webhooks inspect ' +
        '<key>` (unresumedEffects). Check the service itself (was the email sent?) and send it by hand if not. ' +
        'Many at once: the service is slow or failing (the reasons say: timeouts, 5xx); consider an adapter ' +
        'that honours Idempotency-Key, which is then simply retried (docs/rules.md, "Effects in doubt").',
      metric: processorTotalMetric(ProcessorMetric.EffectsInDoubt, { period: FIVE_MINUTES }),
      threshold: 1,
      comparisonOperator: GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      // Emitted only when an effect is in doubt: no data is none.
      treatMissingData: NOT_BREACHING,
    },
  );
  if (props.alarmUnhandled === true) {
    definitions.push({
      id: 'UnhandledEvents',
      severity: 'warning',
      summary:
        'Events were completed as unhandled: no applier is registered for their provider and event type.',
      runbook:
        'The processor log says which ("no business applier for this event type": provider, eventType, key). ' +
        'A misspelt provider or event-type key in createProcessor({ appliers }) makes every such event unhandled: ' +
        'fix the key, deploy, and replay the events (`webhooks replay <provider> <event-id> --force`). A type ' +
        'the endpoint receives on purpose and ignores: register `ignoreEvent` for it, or unsubscribe it at the provider.',
      metric: processorTotalMetric(ProcessorMetric.Unhandled, { period: FIVE_MINUTES }),
      threshold: t.unhandledEvents ?? DEFAULTS.unhandledEvents,
      comparisonOperator: GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      // Emitted only when an event is unhandled: no data is none.
      treatMissingData: NOT_BREACHING,
    });
  }
  if (props.sweeper) definitions.push(...sweeperAlarms(props.sweeper, props.sweepInterval ?? FIVE_MINUTES));
  return definitions;
}

function sweeperAlarms(sweeper: lambda.IFunction, interval: Duration): AlarmDefinition[] {
  // The gauge comes once per run: a period shorter than the interval would see gaps as "OK".
  const period = interval.toSeconds() > FIVE_MINUTES.toSeconds() ? interval : FIVE_MINUTES;
  return [
    {
      id: 'StuckClaims',
      severity: 'critical',
      summary:
        'The sweeper found claims it cannot recover by itself: accepted events that are not applied and have no stored body to send again.',
      runbook:
        'List them with `webhooks stuck` (key, status, reason). RECEIVED: never queued and not stored; a ' +
        'provider retry recovers it (Stripe, Shopify retry; GitHub: redeliver from its UI). ENQUEUED: queued ' +
        'but never processed; check the DLQ and the processing-lag alarm (a long backlog also shows here and ' +
        'clears as it drains). PROCESSING: the last attempt died and the message is in the DLQ: redrive it. ' +
        'Each report clears itself when the claim is taken over, replayed to DONE, or its TTL passes.',
      metric: sweeperMetric(SweeperMetric.StuckClaims, { period, statistic: cloudwatch.Stats.MAXIMUM }),
      threshold: 1,
      comparisonOperator: GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      // No data: the sweeper did not run (SweeperErrors says why), not a stuck claim.
      treatMissingData: NOT_BREACHING,
    },
    {
      id: 'SweeperErrors',
      severity: 'warning',
      summary: 'A sweeper run failed: stuck claims are not being recovered or reported until it runs again.',
      runbook:
        'Read the error in the sweeper log group (a permission, a throttled table, a bad setting). Nothing is ' +
        'lost: every claim the run did not finish is due again for the next run.',
      metric: functionErrors(sweeper, period),
      threshold: 1,
      comparisonOperator: GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: NOT_BREACHING,
    },
  ];
}

/**
 * Access-log lines of a delivery refused for its size: API Gateway's own 413 (over 10 MiB), the
 * receiver's 413 (a lowered MAX_BODY_BYTES), and Lambda refusing an invocation over its payload
 * limit (`RequestEntityTooLargeException`, whatever status API Gateway maps it to).
 */
export const OVERSIZED_FILTER_PATTERN =
  '{ ($.status = "413") || ($.integrationError = "*RequestEntityTooLarge*") || ($.integrationError = "*must be smaller than*") }';

/**
 * Deliveries refused before the receiver could count them, counted from the API access log by a
 * metric filter each (the filter publishes only when a line matches: no data is none), alarmed on
 * the first one in five minutes.
 */
interface AccessLogCount {
  readonly id: string;
  readonly metricName: string;
  readonly pattern: string;
  readonly summary: string;
  readonly runbook: string;
}

const ACCESS_LOG_COUNTS: readonly AccessLogCount[] = [
  {
    id: 'ThrottledDeliveries',
    metricName: THROTTLED_DELIVERIES_METRIC,
    pattern: '{ $.status = "429" }',
    summary:
      'API Gateway throttled webhook deliveries (429): a burst above the stage limits. Providers that do not retry (GitHub) lose those events.',
    runbook:
      'Count the 429 lines in the access log per routeKey. Raise throttlingRateLimit / throttlingBurstLimit ' +
      '(stage defaults 1,000 rps and 2,000 burst) and check the account-level API Gateway limit ' +
      '(10,000 rps per region by default) and the receiver concurrency. Stripe and Shopify retry 429s; ' +
      'redeliver GitHub deliveries from its UI.',
  },
  {
    id: 'OversizedDeliveries',
    metricName: OVERSIZED_DELIVERIES_METRIC,
    pattern: OVERSIZED_FILTER_PATTERN,
    summary:
      'A webhook delivery was refused for its size (413, or a Lambda request-too-large error): the event is lost unless the provider resends it.',
    runbook:
      'Find it in the API access log (status 413 or an integrationError naming RequestEntityTooLarge): ' +
      'routeKey names the provider, responseLength and the time locate it in the provider dashboard. ' +
      'Over 10 MiB API Gateway refuses it; over about 6 MB (less for base64 bodies) Lambda does ' +
      '(docs/rules.md, "Payload size"). A provider retry will be refused the same way: fetch the event ' +
      'from the provider API (GitHub: the REST API for the push, Shopify/Stripe: the object) and apply ' +
      'it by hand, and ask the provider side to send smaller payloads (fewer commits per push).',
  },
];

function accessLogCountAlarm(count: AccessLogCount): AlarmDefinition {
  return {
    id: count.id,
    severity: 'critical',
    summary: count.summary,
    runbook: count.runbook,
    metric: new cloudwatch.Metric({
      namespace: METRIC_NAMESPACE,
      metricName: count.metricName,
      statistic: cloudwatch.Stats.SUM,
      period: FIVE_MINUTES,
    }),
    threshold: 1,
    comparisonOperator: GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: NOT_BREACHING,
  };
}

/** Kebab-case `DuplicateRatioHigh-stripe` -> `duplicate-ratio-high-stripe`. */
export const alarmSlug = (id: string): string => id.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();

export class WebhookAlarms extends Construct {
  /** Every alarm notifies this topic (ALARM and OK). */
  public readonly topic: sns.Topic;
  public readonly topicKey: kms.Key;
  public readonly alarms: Readonly<Record<string, cloudwatch.Alarm>>;
  public readonly definitions: readonly AlarmDefinition[];

  constructor(scope: Construct, id: string, props: WebhookAlarmsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const prefix = props.alarmNamePrefix ?? stack.stackName;

    // A customer managed key, not alias/aws/sns: CloudWatch alarms cannot publish to a topic
    // encrypted with the AWS managed key, whose policy cannot grant them kms:GenerateDataKey.
    // https://repost.aws/knowledge-center/cloudwatch-configure-alarm-sns
    this.topicKey = new kms.Key(this, 'TopicKey', {
      description: 'Encrypts the webhook alarm topic; CloudWatch alarms may use it to publish',
      enableKeyRotation: true,
      // It protects messages in flight only: nothing stored needs it once the stack is gone.
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    this.topicKey.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
      }),
    );
    this.topic = new sns.Topic(this, 'Topic', {
      displayName: `${prefix} webhook alarms`,
      masterKey: this.topicKey,
      enforceSSL: true,
    });
    // The topic policy replaces SNS's default one: let this account's alarms publish, and no one else's.
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          ArnLike: {
            'aws:SourceArn': `arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:*`,
          },
        },
      }),
    );
    if (props.alarmEmail) this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));

    this.definitions = alarmDefinitions(props);
    if (props.accessLogGroup) {
      for (const count of ACCESS_LOG_COUNTS) {
        new logs.MetricFilter(this, `${count.id}Filter`, {
          logGroup: props.accessLogGroup,
          filterPattern: logs.FilterPattern.literal(count.pattern),
          metricNamespace: METRIC_NAMESPACE,
          metricName: count.metricName,
          metricValue: '1',
        });
      }
    }
    const action = new actions.SnsAction(this.topic);
    const alarms: Record<string, cloudwatch.Alarm> = {};
    for (const definition of this.definitions) {
      const alarm = new cloudwatch.Alarm(this, definition.id, {
        alarmName: `${prefix}-${definition.severity}-${alarmSlug(definition.id)}`,
        alarmDescription: `[${definition.severity}] ${definition.summary} What to do: ${definition.runbook}`,
        metric: definition.metric,
        threshold: definition.threshold,
        comparisonOperator: definition.comparisonOperator,
        evaluationPeriods: definition.evaluationPeriods,
        ...(definition.datapointsToAlarm ? { datapointsToAlarm: definition.datapointsToAlarm } : {}),
        treatMissingData: definition.treatMissingData,
      });
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
      alarms[definition.id] = alarm;
    }
    this.alarms = alarms;
  }
}
