/**
 * Metric builders: every metric the alarms and the dashboard read, in one place, with the names,
 * namespace and dimensions the Lambdas emit (lambdas/shared/metric-names.ts). No alarm wiring here.
 *
 * The Lambdas' EMF lines carry the dimension set `["service","provider"]`, `service` being
 * `POWERTOOLS_SERVICE_NAME`: the constants below are what the stack sets it to, so a metric here and
 * the function's output always agree.
 */
import { Duration } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { ProviderId } from '../../lambdas/providers/types.js';
import {
  METRIC_NAMESPACE,
  PROCESSOR_SERVICE,
  PROVIDER_DIMENSION,
  type ProcessorMetric,
  RECEIVER_SERVICE,
  ReceiverMetric,
  SWEEPER_SERVICE,
  type SweeperMetric,
} from '../../lambdas/shared/metric-names.js';

const SERVICE_DIMENSION = 'service';

export { PROCESSOR_SERVICE, RECEIVER_SERVICE };

export type ReceiverMetricName = (typeof ReceiverMetric)[keyof typeof ReceiverMetric];
export type ProcessorMetricName = (typeof ProcessorMetric)[keyof typeof ProcessorMetric];

export interface MetricWindow {
  readonly period?: Duration;
  readonly statistic?: string;
  readonly label?: string;
}

/** An EMF metric as the Lambdas emit it: `service`, and `provider` where the metric has one. */
function emfMetric(
  service: string,
  metricName: string,
  provider: ProviderId | undefined,
  window: MetricWindow,
) {
  return new cloudwatch.Metric({
    namespace: METRIC_NAMESPACE,
    metricName,
    dimensionsMap: { [SERVICE_DIMENSION]: service, ...(provider ? { [PROVIDER_DIMENSION]: provider } : {}) },
    statistic: window.statistic ?? cloudwatch.Stats.SUM,
    period: window.period ?? Duration.minutes(5),
    ...(window.label ? { label: window.label } : {}),
  });
}

export const receiverMetric = (name: ReceiverMetricName, provider: ProviderId, window: MetricWindow = {}) =>
  emfMetric(RECEIVER_SERVICE, name, provider, window);

export const processorMetric = (name: ProcessorMetricName, provider: ProviderId, window: MetricWindow = {}) =>
  emfMetric(PROCESSOR_SERVICE, name, provider, window);

/**
 * A processor metric the processor also emits summed over every provider (dimension `service`
 * only), so one alarm covers them all (SEARCH cannot back an alarm): `EffectsInDoubt`.
 */
export const processorTotalMetric = (name: ProcessorMetricName, window: MetricWindow = {}) =>
  emfMetric(PROCESSOR_SERVICE, name, undefined, window);

/**
 * `part / whole` once `whole` reaches `minWhole` in the period, else `whenQuiet`. Counters the
 * Lambdas did not emit in a period have no datapoint (EMF emits no zeros): FILL makes them 0, so
 * "no duplicates at all" is a ratio of 0 rather than no data.
 */
export function guardedRatio(options: {
  /** Metric ids in the expression: `<part>_<idSuffix>`, unique within a graph or alarm. */
  readonly ids: { readonly part: string; readonly whole: string };
  readonly part: cloudwatch.IMetric;
  readonly whole: cloudwatch.IMetric;
  readonly minWhole: number;
  readonly whenQuiet: number;
  readonly period: Duration;
  readonly label: string;
}): cloudwatch.MathExpression {
  const { part, whole } = options.ids;
  return new cloudwatch.MathExpression({
    expression: `IF(FILL(${whole}, 0) >= ${options.minWhole}, FILL(${part}, 0) / FILL(${whole}, 1), ${options.whenQuiet})`,
    usingMetrics: { [part]: options.part, [whole]: options.whole },
    period: options.period,
    label: options.label,
  });
}

/** Duplicate / Received for one provider. */
export function duplicateRatio(
  provider: ProviderId,
  options: { readonly period: Duration; readonly minDeliveries: number; readonly whenQuiet: number },
): cloudwatch.MathExpression {
  return guardedRatio({
    ids: { part: `duplicate_${provider}`, whole: `received_${provider}` },
    part: receiverMetric(ReceiverMetric.Duplicate, provider, { period: options.period }),
    whole: receiverMetric(ReceiverMetric.Received, provider, { period: options.period }),
    minWhole: options.minDeliveries,
    whenQuiet: options.whenQuiet,
    period: options.period,
    label: `${provider} duplicate ratio`,
  });
}

/** InvalidSignature / Received for one provider. */
export function invalidSignatureRatio(
  provider: ProviderId,
  options: { readonly period: Duration; readonly minDeliveries: number },
): cloudwatch.MathExpression {
  return guardedRatio({
    ids: { part: `invalid_${provider}`, whole: `received_${provider}` },
    part: receiverMetric(ReceiverMetric.InvalidSignature, provider, { period: options.period }),
    whole: receiverMetric(ReceiverMetric.Received, provider, { period: options.period }),
    minWhole: options.minDeliveries,
    whenQuiet: 0,
    period: options.period,
    label: `${provider} invalid signature ratio`,
  });
}

/** An API Gateway status class / requests for the whole API, 0 below `minRequests`. */
function apiStatusRate(
  api: apigwv2.IHttpApi,
  which: { readonly part: cloudwatch.Metric; readonly id: string; readonly label: string },
  options: { readonly period: Duration; readonly minRequests: number },
): cloudwatch.MathExpression {
  return guardedRatio({
    ids: { part: which.id, whole: 'requests' },
    part: which.part,
    whole: api.metricCount({ period: options.period, statistic: cloudwatch.Stats.SUM }),
    minWhole: options.minRequests,
    whenQuiet: 0,
    period: options.period,
    label: which.label,
  });
}

/**
 * API Gateway's 5xx / requests: what providers see, including what the function cannot report
 * itself (timeouts, crashes, throttled invocations).
 */
export const apiServerErrorRate = (
  api: apigwv2.IHttpApi,
  options: { readonly period: Duration; readonly minRequests: number },
): cloudwatch.MathExpression =>
  apiStatusRate(
    api,
    {
      part: api.metricServerError({ period: options.period, statistic: cloudwatch.Stats.SUM }),
      id: 'errors',
      label: 'API 5xx rate',
    },
    options,
  );

/** API Gateway 4xx (401, 404, 413, 429, ...) / requests. */
export const apiClientErrorRate = (
  api: apigwv2.IHttpApi,
  options: { readonly period: Duration; readonly minRequests: number },
): cloudwatch.MathExpression =>
  apiStatusRate(
    api,
    {
      part: api.metricClientError({ period: options.period, statistic: cloudwatch.Stats.SUM }),
      id: 'clientErrors',
      label: 'API 4xx rate',
    },
    options,
  );

export const queueOldestMessageAge = (queue: sqs.IQueue, period = Duration.minutes(1)) =>
  queue.metricApproximateAgeOfOldestMessage({ period, statistic: cloudwatch.Stats.MAXIMUM });

export const queueVisibleMessages = (queue: sqs.IQueue, period = Duration.minutes(1)) =>
  queue.metricApproximateNumberOfMessagesVisible({ period, statistic: cloudwatch.Stats.MAXIMUM });

export const functionErrors = (fn: lambda.IFunction, period = Duration.minutes(5)) =>
  fn.metricErrors({ period, statistic: cloudwatch.Stats.SUM });

/**
 * One outcome summed over every provider (and the `unknown` route value): for the dashboard only,
 * since SEARCH cannot back an alarm.
 */
export function receiverOutcomeTotal(name: ReceiverMetricName, period = Duration.minutes(5)) {
  return new cloudwatch.MathExpression({
    expression: `SUM(SEARCH('{${METRIC_NAMESPACE},${SERVICE_DIMENSION},${PROVIDER_DIMENSION}} ${SERVICE_DIMENSION}="${RECEIVER_SERVICE}" MetricName="${name}"', 'Sum', ${period.toSeconds()}))`,
    period,
    label: name,
  });
}

export function processorOutcomeTotal(name: ProcessorMetricName, period = Duration.minutes(5)) {
  return new cloudwatch.MathExpression({
    expression: `SUM(SEARCH('{${METRIC_NAMESPACE},${SERVICE_DIMENSION},${PROVIDER_DIMENSION}} ${SERVICE_DIMENSION}="${PROCESSOR_SERVICE}" MetricName="${name}"', 'Sum', ${period.toSeconds()}))`,
    period,
    label: name,
  });
}

export type SweeperMetricName = (typeof SweeperMetric)[keyof typeof SweeperMetric];

/** A sweeper metric: dimension `service` only (one run covers every provider); Maximum by default. */
export const sweeperMetric = (metricName: SweeperMetricName, window: MetricWindow = {}): cloudwatch.Metric =>
  emfMetric(SWEEPER_SERVICE, metricName, undefined, { statistic: cloudwatch.Stats.MAXIMUM, ...window });
