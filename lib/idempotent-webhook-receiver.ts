/**
 * IdempotentWebhookReceiver: the whole pipeline in one construct, for your own CDK app.
 *
 *   provider --HTTPS--> HTTP API --> receiver Lambda --> SQS --> processor Lambda --> business tables
 *                                      | claims table                  | DLQ, alarms, dashboard
 *
 * Each concern is its own construct under ./constructs; this one only resolves defaults, checks
 * that the timeouts and leases fit together, and wires the parts.
 */
import { Duration, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { effectHeaderNameProblem, effectHeaderValueProblem } from '../lambdas/processor/effect-headers.js';
import { DEFAULT_EFFECT_TIMEOUT_MS } from '../lambdas/processor/effects.js';
import { adapterNameProblem, tableNameProblem } from '../lambdas/processor/extension-names.js';
import {
  PROCESSOR_DEFAULTS as PROCESSOR_RUNTIME_DEFAULTS,
  permanentStatusesProblem,
} from '../lambdas/processor/settings.js';
import type { AdaptersOf, TablesOf, WebhookAppTypes } from '../lambdas/processor/types.js';
import { writeHmacProviderConfigs } from '../lambdas/providers/configured.js';
import { type HmacProviderConfig, HmacProviderConfigError } from '../lambdas/providers/hmac.js';
import {
  type BuiltInProviderId,
  type ProviderRegistry,
  ProviderRegistryError,
  type ProviderTable,
  providerRegistry,
} from '../lambdas/providers/index.js';
import type { ProviderId } from '../lambdas/providers/types.js';
import * as receiverSettings from '../lambdas/receiver/settings.js';
import { checkPublicBaseUrl } from '../lambdas/shared/public-url.js';
import { ruleBroken, type Setting } from '../lambdas/shared/settings.js';
import { type TimingNames, timingProblems } from '../lambdas/shared/timing-rules.js';
import * as sweeperSettings from '../lambdas/sweeper/settings.js';
import { ClaimSweeper } from './constructs/claim-sweeper.js';
import { type EffectHeader, EventProcessor, type WebhookEffect } from './constructs/event-processor.js';
import { PayloadArchive } from './constructs/payload-archive.js';
import { type ProviderSettingsOptions, providerSettingsJson } from './constructs/provider-settings.js';
import {
  type ProviderAlarmOptions,
  WebhookAlarms,
  type WebhookAlarmThresholds,
} from './constructs/webhook-alarms.js';
import { WebhookDashboard } from './constructs/webhook-dashboard.js';
import type { UserEntryCode } from './constructs/webhook-function.js';
import { WebhookIngest } from './constructs/webhook-ingest.js';
import { WebhookSecrets } from './constructs/webhook-secrets.js';
import { WebhookTables } from './constructs/webhook-tables.js';

export { EffectHeader, type WebhookEffect } from './constructs/event-processor.js';
export type { KeyRuleKind, ProviderKeyRules } from './constructs/provider-settings.js';
export type { DuplicateRatioAlarmOptions, WebhookAlarmThresholds } from './constructs/webhook-alarms.js';

/** Everything configurable per provider: the receiver's rules and the provider's alarms. */
export interface ProviderOptions extends ProviderSettingsOptions, ProviderAlarmOptions {}

/**
 * `App` (optional) is the app's types, shared with its processor module (`createProcessor<App>`,
 * docs/processor.md, "Types"): then `tables` must hold exactly the app's tables and `effects` only
 * the app's adapters, so a name the appliers use and the construct lacks does not compile.
 */
export interface IdempotentWebhookReceiverProps<App extends WebhookAppTypes = WebhookAppTypes> {
  /**
   * Per-provider claim TTL, signature tolerance, key rules and duplicate-ratio alarms, by route id:
   * a built-in provider's or one of `hmacProviders`. Any other key fails the synth.
   * @default the provider modules' defaults (lambdas/providers/*) and every alarm on, except GitHub's
   * low duplicate-ratio alarm
   */
  readonly providers?: Partial<Readonly<Record<ProviderId, ProviderOptions>>>;
  /**
   * Providers by configuration: senders that sign with an HMAC over the body (and perhaps a
   * timestamp and an id), described as data (docs/rules.md, "Providers by configuration"). Each gets
   * a route `POST /webhooks/<id>`, a secret, its alarms and dashboard lines and, through
   * `webhookOutputs`, a `<Id>WebhookUrl` output, like a built-in provider. Checked at synth time and
   * again when each function starts (`WEBHOOK_HMAC_PROVIDERS`); at most 2 KB as JSON, the share of
   * a function's 4 KB environment they may take.
   * @default none
   */
  readonly hmacProviders?: readonly HmacProviderConfig[];
  /**
   * The built-in providers to serve, e.g. `['stripe', 'github']`: only these get a route, a secret
   * ($0.40 a month each), alarms and outputs. A provider you do not use is then no open endpoint,
   * and its secret ARN leaves room in the receiver's 4 KB environment (with hmacProviders at their
   * 2 KB, about five built-in providers fit). Ids: `PROVIDER_IDS`.
   * @default every built-in provider
   */
  readonly builtInProviders?: readonly BuiltInProviderId[];
  /**
   * Steady-state requests per second for the whole API (default stage). Sized for a provider's
   * retry storm or a flash sale rather than for average traffic: a throttled GitHub delivery is lost.
   * @default 1000
   */
  readonly throttlingRateLimit?: number;
  /** Burst of requests for the whole API (default stage). @default 2000 */
  readonly throttlingBurstLimit?: number;
  /** @default Duration.seconds(10) */
  readonly receiverTimeout?: Duration;
  /** @default 512 */
  readonly receiverMemorySize?: number;
  /** How long a fresh claim is held while the receiver enqueues; must exceed `receiverTimeout`. @default Duration.seconds(15) */
  readonly receiverLease?: Duration;
  /**
   * Concurrency reserved for the receiver: guaranteed to it, and also its ceiling (deliveries beyond
   * it are throttled). A positive integer; Lambda refuses the deploy if it would leave fewer than 100
   * of the account's concurrency unreserved. Off by default: new accounts can have a concurrency
   * quota too small to reserve from, and `processorMaxConcurrency` already keeps the processor from
   * taking the pool (docs/capacity.md).
   * @default none: the receiver draws on the account's unreserved pool
   */
  readonly receiverReservedConcurrency?: number;
  /**
   * The processor's module (TypeScript or JavaScript) exporting `handler`, an SQS handler that
   * returns `SQSBatchResponse`: typically `createProcessor({ appliers })` from
   * `idempotent-webhook-receiver/processor` (docs/processor.md). It is bundled from your project by
   * NodejsFunction (the package's bundling options), which needs `esbuild` installed there.
   * @default the package's prebuilt default processor: no appliers, every event completed as `unhandled`
   */
  readonly processorEntry?: string;
  /**
   * Where `processorEntry` is bundled from.
   * @default the nearest lock file in or above the entry's directory, and that directory as the root
   */
  readonly processorBundling?: Pick<UserEntryCode, 'projectRoot' | 'depsLockFilePath'>;
  /**
   * Your business tables, by the name your appliers use (`context.read('invoices', ...)`, `table:
   * 'invoices'`). Each must have the string partition key `pk`. The processor may get, put, update
   * and condition-check their items, and nothing else; it is given no table you do not pass here.
   * Names start with a lower-case letter and hold letters, digits, `_` or `-`.
   * @default none
   */
  readonly tables?: { readonly [Name in TablesOf<App>]: dynamodb.ITable };
  /**
   * Your effect adapters, by the name your effects declare (`{ adapter: 'erp', run }`): each an
   * HTTP service the processor POSTs JSON to with an `Idempotency-Key` header. Declare whether it
   * honours the key: only effects whose adapter does are re-run when the processor cannot tell
   * whether they already ran. Names start with a lower-case letter and hold letters and digits.
   * @default none
   */
  readonly effects?: string extends AdaptersOf<App>
    ? Readonly<Record<string, WebhookEffect>>
    : { readonly [Name in AdaptersOf<App>]?: WebhookEffect };
  /** Extra environment variables for the processor (your handlers' settings). @default none */
  readonly processorEnvironment?: Readonly<Record<string, string>>;
  /** @default Duration.seconds(30) */
  readonly processorTimeout?: Duration;
  /** @default 512 */
  readonly processorMemorySize?: number;
  /**
   * How long the processor holds a claim while it applies an event; must exceed `processorTimeout`
   * and not exceed the queue's visibility timeout (6 x `processorTimeout` + `maxBatchingWindow`).
   * @default Duration.seconds(120)
   */
  readonly processingLease?: Duration;
  /** Receives before SQS moves a message to the DLQ (also the processor's `MAX_RECEIVE_COUNT`). @default 5 */
  readonly maxReceiveCount?: number;
  /** Messages per processor invocation. @default 10 */
  readonly batchSize?: number;
  /** How long the poller gathers a batch. @default Duration.seconds(1) */
  readonly maxBatchingWindow?: Duration;
  /**
   * The most processor invocations the queue's event source mapping runs at once
   * (`ScalingConfig.MaximumConcurrency`), an integer from 2 to 1000. Caps the processor so that a
   * backlog cannot take the account's concurrency from the receiver, and caps the load on the
   * processor's downstreams. 100 drains 1,000 events/s even at 1 s per batch of 10 (measured: about
   * 0.22 s) and leaves 900 of the default 1,000 account concurrency to the rest (docs/capacity.md).
   * @default 100
   */
  readonly processorMaxConcurrency?: number;
  /**
   * Concurrency reserved for the processor (also its ceiling). Must be at least
   * `processorMaxConcurrency`: below it the poller receives batches it cannot invoke, and each such
   * receive counts towards `maxReceiveCount`.
   * @default none: the processor draws on the account's unreserved pool, capped by `processorMaxConcurrency`
   */
  readonly processorReservedConcurrency?: number;
  /** Retention of the functions' and the API's log groups. @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Run the functions with `--enable-source-maps`, so an unexpected error's stack trace names the
   * TypeScript sources instead of the minified bundle. Off by default: it adds about 20 ms to each
   * cold start (the import, measured by `npm run bench`); the source maps ship in the bundles either
   * way, so a trace can be mapped afterwards.
   * @default false
   */
  readonly sourceMaps?: boolean;
  /**
   * How long the payload archive keeps each event's payload. It also holds the bodies of
   * claim-checked events, which a DLQ redrive still needs: at least the claim retention (15 days).
   * @default Duration.days(90)
   */
  readonly archiveRetention?: Duration;
  /**
   * How long a Shopify `customers/data_request` export (`compliance/shopify/...` in the archive
   * bucket) is kept for an operator to fetch and send to the merchant (docs/rules.md, section 11).
   * @default Duration.days(30)
   */
  readonly complianceExportRetention?: Duration;
  /**
   * Queue messages larger than this (bytes) carry a pointer to the body in the archive bucket
   * instead of the body: a claim check. From 1,024 to 1,048,576 (SQS's message limit). The default
   * is seven SQS billing chunks (448 KiB), where a claim check's S3 PUT and GET start to cost less
   * than the message's extra chunks (docs/performance.md, "Claim-check break-even").
   * @default 458752
   */
  readonly claimCheckThresholdBytes?: number;
  /**
   * Whether each duplicate delivery adds itself to its claim's `deliveries`: a second DynamoDB write
   * per duplicate (1 WRU, one more round trip), which the receiver's answer (`deliveries`) and
   * `webhooks inspect` report. `false`: a duplicate costs its failed conditional write alone, is
   * counted by the `Duplicate` metric only, and its answer carries no `deliveries`
   * (docs/performance.md, "The duplicate counter").
   * @default true
   */
  readonly countDuplicates?: boolean;
  /**
   * Whether the receiver marks each claim ENQUEUED once its event is sent: a third sequential
   * request and 1 WRU per new event. `false`: a new event is its claim write and its send; the claim
   * stays RECEIVED (flagged `unmarked`) until a processor takes it, and a duplicate arriving in that
   * window sends a copy of its own (one more message, which the processor absorbs) instead of waiting
   * for the mark. Cheaper below about one concurrent copy per event; the sweeper gives such a claim
   * `stuckEnqueuedAfter` before it calls it stuck (docs/performance.md, "The ENQUEUED mark").
   * @default true
   */
  readonly markEnqueued?: boolean;
  /**
   * The base URL providers deliver to, when a custom domain fronts the API
   * (`https://hooks.example.com`, or with the base path a mapping adds). The webhook URLs (outputs
   * and `webhookUrls`) become `<base>/webhooks/<provider>`, and it is the URL the receiver checks
   * Square's and Twilio's signatures against, as those providers sign the URL they post to. Never
   * taken from a request's Host header.
   * @default the API's own endpoint (`https://<api>.execute-api.<region>.amazonaws.com`)
   */
  readonly publicBaseUrl?: string;
  /**
   * How often the sweeper looks for claims stuck in RECEIVED, ENQUEUED or PROCESSING (whole minutes,
   * 1 to 60). Each run queries the index of unfinished claims once per shard (32 queries, about 16
   * read units when nothing is due).
   * @default Duration.minutes(5)
   */
  readonly sweepInterval?: Duration;
  /**
   * An ENQUEUED claim no processor has taken for this long is sent again from its stored body, or
   * reported stuck when it has none. Longer than any backlog you expect: a claim still queued behind
   * one gets an extra copy (absorbed) or a stuck report that clears when it is processed. At least
   * 15 minutes.
   * @default Duration.hours(1)
   */
  readonly stuckEnqueuedAfter?: Duration;
  /** Tables, secrets and the archive bucket when removed from the stack. @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
  /** Subscribed (by email) to the alarm topic. @default no subscription */
  readonly alarmEmail?: string;
  /** @default see WebhookAlarmThresholds */
  readonly alarmThresholds?: WebhookAlarmThresholds;
  /** Alarm names are `<prefix>-<severity>-<alarm>`. @default the stack name */
  readonly alarmNamePrefix?: string;
  /** @default a name generated by CloudFormation */
  readonly dashboardName?: string;
}

/**
 * Stage throttling: 1,000 requests/s with bursts of 2,000, a tenth of the account's default
 * regional API Gateway limit (10,000 rps, burst 5,000 shared by every API in the region), so a
 * retry storm is absorbed without one stack taking the whole account's capacity.
 */
export const THROTTLING_DEFAULTS = { rateLimit: 1_000, burstLimit: 2_000 } as const;

export const RECEIVER_DEFAULTS = {
  timeout: Duration.seconds(10),
  memorySize: 512,
  /** The receiver's own defaults (lambdas/receiver/settings.ts), the one home of the numbers. */
  lease: Duration.seconds(receiverSettings.DEFAULTS.leaseSeconds),
  claimCheckThresholdBytes: receiverSettings.DEFAULTS.claimCheckThresholdBytes,
  countDuplicates: receiverSettings.DEFAULTS.countDuplicates,
  markEnqueued: receiverSettings.DEFAULTS.markEnqueued,
} as const;

export const PROCESSOR_DEFAULTS = {
  timeout: Duration.seconds(30),
  memorySize: 512,
  /** The processor's own defaults (lambdas/processor/settings.ts). */
  lease: Duration.seconds(PROCESSOR_RUNTIME_DEFAULTS.leaseSeconds),
  maxReceiveCount: PROCESSOR_RUNTIME_DEFAULTS.maxReceiveCount,
  batchSize: 10,
  maxBatchingWindow: Duration.seconds(1),
  /** Concurrent batches at most: see `processorMaxConcurrency` and docs/capacity.md. */
  maxConcurrency: 100,
} as const;

/** The event source mapping's `ScalingConfig.MaximumConcurrency` range (AWS Lambda API, ScalingConfig). */
export const ESM_MAX_CONCURRENCY_RANGE = { min: 2, max: 1_000 } as const;

/** The sweeper's own defaults (lambdas/sweeper/settings.ts) as Durations, and the stack's own. */
export const SWEEPER_PROP_DEFAULTS = {
  interval: Duration.minutes(5),
  stuckEnqueuedAfter: Duration.seconds(sweeperSettings.DEFAULTS.enqueuedStaleSeconds),
  /** After the receiver lease: a provider retry usually comes first; the sweeper does not wait for one longer. */
  receivedGrace: Duration.seconds(sweeperSettings.DEFAULTS.receivedGraceSeconds),
  /** Added to the queue's visibility timeout: a released claim's redelivery comes within it. */
  processingMargin: Duration.minutes(1),
} as const;

export class IdempotentWebhookReceiverPropsError extends Error {
  override readonly name = 'IdempotentWebhookReceiverPropsError';
}

export class IdempotentWebhookReceiver<App extends WebhookAppTypes = WebhookAppTypes> extends Construct {
  public readonly claimsTable: dynamodb.Table;
  /** The payload archive (one object per processor batch and per claim-checked event, expired after `archiveRetention`). */
  public readonly archiveBucket: s3.Bucket;
  /** The business tables given in `tables`, by name. */
  public readonly businessTables: Readonly<Record<string, dynamodb.ITable>>;
  public readonly eventQueue: sqs.Queue;
  public readonly deadLetterQueue: sqs.Queue;
  public readonly httpApi: apigwv2.HttpApi;
  public readonly stage: apigwv2.HttpStage;
  public readonly receiverFunction: lambda.IFunction;
  public readonly processorFunction: lambda.IFunction;
  /** Runs every `sweepInterval`: recovers or reports stuck claims. */
  public readonly sweeperFunction: lambda.IFunction;
  /** The route ids: the built-in providers', then `hmacProviders`'. */
  public readonly providerIds: readonly ProviderId[];
  /** One secret per provider, holding `{"current":"REPLACE_ME"}` until the operator sets it. */
  public readonly secrets: ProviderTable<secretsmanager.Secret>;
  public readonly alarmTopic: sns.Topic;
  /** Every alarm, by definition id (`DuplicateRatioHigh-stripe`, `DeadLetterQueueNotEmpty`, ...). */
  public readonly alarms: Readonly<Record<string, cloudwatch.Alarm>>;
  public readonly dashboard: cloudwatch.Dashboard;
  /**
   * `https://.../webhooks/<provider>`, to paste into each provider's dashboard. A built-in provider
   * left out of `builtInProviders` has no entry (the type keeps every built-in key, as before that prop).
   */
  public readonly webhookUrls: ProviderTable<string>;
  public readonly dashboardUrl: string;

  constructor(scope: Construct, id: string, appProps: IdempotentWebhookReceiverProps<App> = {}) {
    super(scope, id);
    // The app's names were the compiler's to check; from here on they are strings.
    const props = appProps as IdempotentWebhookReceiverProps;
    const receiverTimeout = props.receiverTimeout ?? RECEIVER_DEFAULTS.timeout;
    const receiverLease = props.receiverLease ?? RECEIVER_DEFAULTS.lease;
    const processorTimeout = props.processorTimeout ?? PROCESSOR_DEFAULTS.timeout;
    const processingLease = props.processingLease ?? PROCESSOR_DEFAULTS.lease;
    const maxReceiveCount = props.maxReceiveCount ?? PROCESSOR_DEFAULTS.maxReceiveCount;
    const maxBatchingWindow = props.maxBatchingWindow ?? PROCESSOR_DEFAULTS.maxBatchingWindow;
    const processorMaxConcurrency = props.processorMaxConcurrency ?? PROCESSOR_DEFAULTS.maxConcurrency;
    const logRetention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;

    checkProps({ receiverTimeout, receiverLease, processorTimeout, processingLease, maxReceiveCount, props });
    checkConcurrencyProps(processorMaxConcurrency, props);
    checkExtensionProps(props);
    const hmacProviders = [...(props.hmacProviders ?? [])];
    const registry = checkedRegistry(hmacProviders, props);
    const businessTables = { ...props.tables };

    const tables = new WebhookTables(this, 'Tables', { removalPolicy });
    const secrets = new WebhookSecrets(this, 'Secrets', { registry, removalPolicy });
    const archive = new PayloadArchive(this, 'Archive', {
      removalPolicy,
      ...(props.archiveRetention ? { retention: props.archiveRetention } : {}),
      ...(props.complianceExportRetention
        ? { complianceExportRetention: props.complianceExportRetention }
        : {}),
    });

    const processing = new EventProcessor(this, 'Processing', {
      code:
        props.processorEntry === undefined
          ? { framework: 'processor' }
          : { entry: props.processorEntry, ...props.processorBundling },
      claimsTable: tables.claims,
      tables: businessTables,
      effects: { ...props.effects },
      hmacProviders,
      timeout: processorTimeout,
      memorySize: props.processorMemorySize ?? PROCESSOR_DEFAULTS.memorySize,
      lease: processingLease,
      maxReceiveCount,
      batchSize: props.batchSize ?? PROCESSOR_DEFAULTS.batchSize,
      maxBatchingWindow,
      maxConcurrency: processorMaxConcurrency,
      ...(props.processorReservedConcurrency === undefined
        ? {}
        : { reservedConcurrency: props.processorReservedConcurrency }),
      ...(props.processorEnvironment ? { extraEnvironment: props.processorEnvironment } : {}),
      logRetention,
      sourceMaps: props.sourceMaps ?? false,
      archiveBucket: archive.bucket,
      // Shopify's redact topics delete from the archive: only a stack that serves Shopify may.
      compliance: registry.PROVIDER_IDS.includes('shopify'),
    });
    // A processor that crashed mid-event must have lost its lease by the time SQS shows the message
    // again, or the retry finds the claim still held and the receive is wasted on the way to the DLQ.
    const [visibilityProblem] = timingProblems(
      {
        processingLeaseSeconds: processingLease.toSeconds(),
        visibilityTimeoutSeconds: processing.visibilityTimeout.toSeconds(),
      },
      PROP_NAMES,
    );
    if (visibilityProblem !== undefined) {
      throw new IdempotentWebhookReceiverPropsError(
        `${visibilityProblem} (the visibility timeout is 6 x processorTimeout + maxBatchingWindow)`,
      );
    }

    const ingest = new WebhookIngest(this, 'Ingest', {
      claimsTable: tables.claims,
      eventQueue: processing.queue,
      providerIds: registry.PROVIDER_IDS,
      hmacProviders,
      secrets: secrets.secrets,
      providerSettingsJson: providerSettingsJson(registry, props.providers),
      timeout: receiverTimeout,
      memorySize: props.receiverMemorySize ?? RECEIVER_DEFAULTS.memorySize,
      lease: receiverLease,
      claimRetention: processing.claimRetention,
      archiveBucket: archive.bucket,
      claimCheckThresholdBytes: props.claimCheckThresholdBytes ?? RECEIVER_DEFAULTS.claimCheckThresholdBytes,
      countDuplicates: props.countDuplicates ?? RECEIVER_DEFAULTS.countDuplicates,
      markEnqueued: props.markEnqueued ?? RECEIVER_DEFAULTS.markEnqueued,
      ...(props.publicBaseUrl === undefined ? {} : { publicBaseUrl: props.publicBaseUrl }),
      throttlingRateLimit: props.throttlingRateLimit ?? THROTTLING_DEFAULTS.rateLimit,
      throttlingBurstLimit: props.throttlingBurstLimit ?? THROTTLING_DEFAULTS.burstLimit,
      ...(props.receiverReservedConcurrency === undefined
        ? {}
        : { reservedConcurrency: props.receiverReservedConcurrency }),
      logRetention,
      sourceMaps: props.sourceMaps ?? false,
    });

    if (archive.retention.toSeconds() < processing.claimRetention.toSeconds()) {
      throw new IdempotentWebhookReceiverPropsError(
        `archiveRetention (${archive.retention.toDays()} days) must be at least the claim retention ` +
          `(${processing.claimRetention.toDays()} days): a redriven claim check must still find its body`,
      );
    }

    const exportRetention = props.complianceExportRetention;
    if (
      exportRetention !== undefined &&
      (exportRetention.toSeconds() < 86_400 || exportRetention.toSeconds() % 86_400 !== 0)
    ) {
      throw new IdempotentWebhookReceiverPropsError(
        `complianceExportRetention must be a whole number of days, at least 1 (S3 lifecycle rules count in days); got ${exportRetention.toSeconds()} s`,
      );
    }

    const sweepInterval = props.sweepInterval ?? SWEEPER_PROP_DEFAULTS.interval;
    const sweeper = new ClaimSweeper(this, 'Sweeping', {
      claimsTable: tables.claims,
      eventQueue: processing.queue,
      archiveBucket: archive.bucket,
      interval: sweepInterval,
      receivedGrace: SWEEPER_PROP_DEFAULTS.receivedGrace,
      processingGrace: processing.visibilityTimeout.plus(SWEEPER_PROP_DEFAULTS.processingMargin),
      enqueuedStaleAfter: props.stuckEnqueuedAfter ?? SWEEPER_PROP_DEFAULTS.stuckEnqueuedAfter,
      logRetention,
      sourceMaps: props.sourceMaps ?? false,
    });

    const alarms = new WebhookAlarms(this, 'Alarms', {
      sweeper: sweeper.function,
      sweepInterval,
      api: ingest.api,
      accessLogGroup: ingest.accessLogGroup,
      processor: processing.processor,
      eventQueue: processing.queue,
      deadLetterQueue: processing.deadLetterQueue,
      registry,
      // The default processor completes every event as unhandled on purpose.
      alarmUnhandled: props.processorEntry !== undefined,
      ...(props.providers ? { providers: props.providers } : {}),
      ...(props.alarmThresholds ? { thresholds: props.alarmThresholds } : {}),
      ...(props.alarmEmail ? { alarmEmail: props.alarmEmail } : {}),
      ...(props.alarmNamePrefix ? { alarmNamePrefix: props.alarmNamePrefix } : {}),
    });

    const dashboard = new WebhookDashboard(this, 'Dashboard', {
      providerIds: registry.PROVIDER_IDS,
      api: ingest.api,
      receiver: ingest.receiver,
      processor: processing.processor,
      eventQueue: processing.queue,
      deadLetterQueue: processing.deadLetterQueue,
      alarms: Object.values(alarms.alarms),
      ...(props.dashboardName ? { dashboardName: props.dashboardName } : {}),
    });

    this.archiveBucket = archive.bucket;
    this.claimsTable = tables.claims;
    this.businessTables = businessTables;
    this.eventQueue = processing.queue;
    this.deadLetterQueue = processing.deadLetterQueue;
    this.httpApi = ingest.api;
    this.stage = ingest.stage;
    this.receiverFunction = ingest.receiver;
    this.processorFunction = processing.processor;
    this.sweeperFunction = sweeper.function;
    this.providerIds = registry.PROVIDER_IDS;
    this.secrets = secrets.secrets;
    this.alarmTopic = alarms.topic;
    this.alarms = alarms.alarms;
    this.dashboard = dashboard.dashboard;
    this.dashboardUrl = dashboard.url;
    // The chosen built-in providers and the configured ones (all built-in ones unless `builtInProviders`).
    this.webhookUrls = Object.fromEntries(
      registry.PROVIDER_IDS.map((p) => [p, ingest.webhookUrl(p)]),
    ) as ProviderTable<string>;
  }
}

/** The timing values as this construct's props name them (lambdas/shared/timing-rules.ts). */
const PROP_NAMES: TimingNames = {
  receiverTimeoutSeconds: 'receiverTimeout',
  receiverLeaseSeconds: 'receiverLease',
  processorTimeoutSeconds: 'processorTimeout',
  processingLeaseSeconds: 'processingLease',
  visibilityTimeoutSeconds: "the event queue's visibility timeout",
  sweepProcessingGraceSeconds: 'the sweeper processing grace',
  effectTimeout: (adapter) => `effects: ${adapter}.timeout`,
};

function checkProps(values: {
  receiverTimeout: Duration;
  receiverLease: Duration;
  processorTimeout: Duration;
  processingLease: Duration;
  maxReceiveCount: number;
  props: IdempotentWebhookReceiverProps;
}): void {
  const fail = (message: string): never => {
    throw new IdempotentWebhookReceiverPropsError(message);
  };
  const { receiverTimeout, receiverLease, processorTimeout, processingLease, maxReceiveCount, props } =
    values;
  // Props that become a function's variable pass that variable's own rule first (its settings module).
  checkSetting(
    fail,
    'receiverLease',
    receiverSettings.SETTINGS.leaseSeconds,
    receiverLease.toSeconds(),
    ' s',
  );
  if (props.stuckEnqueuedAfter !== undefined)
    checkSetting(
      fail,
      'stuckEnqueuedAfter',
      sweeperSettings.SETTINGS.enqueuedStaleMs,
      props.stuckEnqueuedAfter.toSeconds(),
      ' s',
    );
  // Leases outlive their functions, effects fit in the processor's invocation (lambdas/shared/timing-rules.ts).
  const [timingProblem] = timingProblems(
    {
      receiverTimeoutSeconds: receiverTimeout.toSeconds(),
      receiverLeaseSeconds: receiverLease.toSeconds(),
      processorTimeoutSeconds: processorTimeout.toSeconds(),
      processingLeaseSeconds: processingLease.toSeconds(),
      effectTimeoutsMs: Object.fromEntries(
        Object.entries(props.effects ?? {}).map(([name, effect]) => [
          name,
          (effect.timeout?.toSeconds() ?? DEFAULT_EFFECT_TIMEOUT_MS / 1000) * 1000,
        ]),
      ),
    },
    PROP_NAMES,
  );
  if (timingProblem !== undefined) fail(timingProblem);
  // API Gateway stops waiting for an integration after 30 s; a longer receiver would answer no one.
  if (receiverTimeout.toSeconds() > 30) fail('receiverTimeout must be at most 30 seconds');
  if (!Number.isInteger(maxReceiveCount) || maxReceiveCount < 1 || maxReceiveCount > 1000) {
    fail('maxReceiveCount must be an integer from 1 to 1000');
  }
  const threshold = props.claimCheckThresholdBytes;
  if (
    threshold !== undefined &&
    !Token.isUnresolved(threshold) &&
    ruleBroken(receiverSettings.SETTINGS.claimCheckThresholdBytes, threshold)
  ) {
    const { min, max } = receiverSettings.CLAIM_CHECK_THRESHOLD_RANGE;
    fail(`claimCheckThresholdBytes must be an integer from ${min} to ${max}`);
  }
  if (props.publicBaseUrl !== undefined && !Token.isUnresolved(props.publicBaseUrl)) {
    try {
      checkPublicBaseUrl(props.publicBaseUrl);
    } catch (error) {
      fail((error as Error).message.replace('PUBLIC_BASE_URL', 'publicBaseUrl'));
    }
  }
  const interval = props.sweepInterval;
  if (interval !== undefined) {
    const minutes = interval.toSeconds() / 60;
    if (!Number.isInteger(minutes) || minutes < 1 || minutes > 60)
      fail(`sweepInterval must be whole minutes from 1 to 60, got ${interval.toSeconds()} s`);
  }
  // Stricter than the sweeper's own rule (a local run sweeps after seconds): deployed, a claim still
  // queued behind a backlog would get an extra copy or a stuck report (docs/rules.md, "The sweeper").
  if (props.stuckEnqueuedAfter !== undefined && props.stuckEnqueuedAfter.toSeconds() < 15 * 60)
    fail(`stuckEnqueuedAfter must be at least 15 minutes, got ${props.stuckEnqueuedAfter.toSeconds()} s`);
  for (const [name, value] of [
    ['throttlingRateLimit', props.throttlingRateLimit],
    ['throttlingBurstLimit', props.throttlingBurstLimit],
  ] as const) {
    if (value !== undefined && !(value > 0)) fail(`${name} must be positive`);
  }
}

/** The names of the business tables and the effect adapters (lambdas/processor/extension-names.ts). */
/**
 * The built-in providers plus `hmacProviders`, each config checked, no id taken twice; and the
 * `providers` options only for providers that exist (a misspelt key would otherwise be ignored).
 */
function checkedRegistry(
  hmacProviders: readonly HmacProviderConfig[],
  props: IdempotentWebhookReceiverProps,
): ProviderRegistry<string> {
  let registry: ProviderRegistry<string>;
  try {
    registry = providerRegistry(hmacProviders, props.builtInProviders);
    if (
      props.builtInProviders !== undefined &&
      new Set(props.builtInProviders).size !== props.builtInProviders.length
    )
      throw new IdempotentWebhookReceiverPropsError('builtInProviders: an id is listed twice');
    // The functions' environment gets them as JSON: its size is checked here, before any construct.
    writeHmacProviderConfigs(hmacProviders);
  } catch (error) {
    if (error instanceof ProviderRegistryError && / is not a built-in provider /.test(error.message))
      throw new IdempotentWebhookReceiverPropsError(`builtInProviders: ${error.message}`);
    if (error instanceof HmacProviderConfigError || error instanceof ProviderRegistryError)
      throw new IdempotentWebhookReceiverPropsError(`hmacProviders: ${error.message}`);
    throw error;
  }
  for (const id of Object.keys(props.providers ?? {})) {
    if (!registry.isProviderId(id))
      throw new IdempotentWebhookReceiverPropsError(
        `providers: unknown provider ${JSON.stringify(id)}: the providers are ${registry.PROVIDER_IDS.join(', ')}` +
          ' (add a provider by configuration with hmacProviders, or a built-in one to builtInProviders)',
      );
  }
  return registry;
}

function checkExtensionProps(props: IdempotentWebhookReceiverProps): void {
  for (const [name, table] of Object.entries(props.tables ?? {})) {
    const problem = tableNameProblem(name) ?? partitionKeyProblem(name, table);
    if (problem) throw new IdempotentWebhookReceiverPropsError(`tables: ${problem}`);
  }
  for (const [name, effect] of Object.entries(props.effects ?? {})) {
    const problem = adapterNameProblem(name);
    if (problem) throw new IdempotentWebhookReceiverPropsError(`effects: ${problem}`);
    const url = effect.url;
    // A token (another construct's URL) is checked by the processor when it starts.
    if (url !== undefined && !Token.isUnresolved(url) && !URL.canParse(url)) {
      throw new IdempotentWebhookReceiverPropsError(
        `effects: ${name}.url must be a URL, got ${JSON.stringify(url)}`,
      );
    }
    const seen = new Set<string>();
    for (const [header, value] of Object.entries(effect.headers ?? {})) {
      const valueProblem = effectHeaderProblem(value);
      const headerProblem =
        effectHeaderNameProblem(header) ??
        (seen.has(header.toLowerCase())
          ? `header ${JSON.stringify(header)} is given twice (header names are case-insensitive)`
          : valueProblem && `header ${JSON.stringify(header)}: ${valueProblem}`);
      seen.add(header.toLowerCase());
      if (headerProblem)
        throw new IdempotentWebhookReceiverPropsError(`effects: ${name}.headers: ${headerProblem}`);
    }
    const statusProblem = permanentStatusesProblem(effect.permanentStatuses);
    if (statusProblem) throw new IdempotentWebhookReceiverPropsError(`effects: ${name}.${statusProblem}`);
  }
}

/** What is wrong with a header's value or secret options (checked again when the processor starts). */
function effectHeaderProblem(value: string | EffectHeader): string | undefined {
  const text = (candidate: string | undefined) =>
    candidate === undefined || Token.isUnresolved(candidate)
      ? undefined
      : effectHeaderValueProblem(candidate);
  if (typeof value === 'string') return text(value);
  const { source } = value;
  if (source.kind === 'plain') return text(source.value);
  if (source.jsonField !== undefined && source.jsonField === '')
    return 'jsonField must be a non-empty string';
  const prefixProblem = text(source.prefix);
  return prefixProblem === undefined ? undefined : `prefix: ${prefixProblem}`;
}

/**
 * Appliers address rows by `pk` alone (lambdas/processor/state-store.ts): a table built here with
 * another partition key, or with a sort key, would fail every write at run time, so it fails the
 * synth. Read from the table's CloudFormation resource (`Table` and `TableV2` alike); an imported
 * table has none here: the processor's first write meets it.
 */
function partitionKeyProblem(name: string, table: dynamodb.ITable): string | undefined {
  const resource = table.node.defaultChild as
    | {
        keySchema?: unknown;
        attributeDefinitions?: unknown;
      }
    | undefined;
  if (resource === undefined) return undefined;
  // TableV2 keeps its definitions in a lazy value until synthesis: resolve both.
  const stack = Stack.of(table);
  const keys: unknown = stack.resolve(resource.keySchema);
  const definitions: unknown = stack.resolve(resource.attributeDefinitions);
  if (!Array.isArray(keys) || !Array.isArray(definitions)) return undefined;
  const hash = keys.find((key: { keyType?: unknown }) => key.keyType === 'HASH') as
    | { attributeName: string }
    | undefined;
  const type = (
    definitions.find(
      (definition: { attributeName?: unknown }) => definition.attributeName === hash?.attributeName,
    ) as { attributeType?: string } | undefined
  )?.attributeType;
  const fix = "give it partitionKey: { name: 'pk', type: AttributeType.STRING } and no sort key";
  if (hash === undefined || hash.attributeName !== 'pk' || type !== 'S')
    return `table ${JSON.stringify(name)} has partition key ${hash?.attributeName ?? 'none'} (${type ?? '?'}): appliers address rows by the string partition key pk alone, so ${fix}`;
  if (keys.some((key: { keyType?: unknown }) => key.keyType === 'RANGE'))
    return `table ${JSON.stringify(name)} has a sort key: appliers address rows by the partition key pk alone, so ${fix}`;
  return undefined;
}

/**
 * A prop that becomes a function's variable, checked with the variable's rule (`must be a positive
 * integer`) at synth time. A token's value is unknown until deploy: skipped.
 */
function checkSetting(
  fail: (message: string) => never,
  prop: string,
  setting: Pick<Setting<number>, 'name' | 'rule'>,
  value: number,
  unit = '',
): void {
  if (Token.isUnresolved(value)) return;
  const broken = ruleBroken(setting, value);
  if (broken) fail(`${prop} (${value}${unit}) ${broken}: it is written to the function as ${setting.name}`);
}

/** The concurrency props: the event source mapping's range, and reserved concurrency that fits it. */
function checkConcurrencyProps(processorMaxConcurrency: number, props: IdempotentWebhookReceiverProps): void {
  const fail = (message: string): never => {
    throw new IdempotentWebhookReceiverPropsError(message);
  };
  const { min, max } = ESM_MAX_CONCURRENCY_RANGE;
  if (
    !Number.isInteger(processorMaxConcurrency) ||
    processorMaxConcurrency < min ||
    processorMaxConcurrency > max
  ) {
    fail(`processorMaxConcurrency must be an integer from ${min} to ${max}`);
  }
  const reserved = props.processorReservedConcurrency;
  // AWS: do not set maximum concurrency above the function's reserved concurrency, or the poller
  // takes batches it cannot invoke. https://repost.aws/knowledge-center/lambda-sqs-scaling
  if (reserved !== undefined && (!Number.isInteger(reserved) || reserved < processorMaxConcurrency)) {
    fail(
      `processorReservedConcurrency (${reserved}) must be an integer of at least processorMaxConcurrency ` +
        `(${processorMaxConcurrency}): below it the poller receives batches it cannot invoke, and each ` +
        'receive counts towards maxReceiveCount',
    );
  }
  const receiver = props.receiverReservedConcurrency;
  if (receiver !== undefined && (!Number.isInteger(receiver) || receiver < 1)) {
    fail('receiverReservedConcurrency must be a positive integer (0 would throttle every delivery)');
  }
}
