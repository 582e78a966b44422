/**
 * The event queue, its dead-letter queue, and the processor Lambda that drains it with partial
 * batch failures. The queue's visibility timeout is derived from the processor's timeout.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { toEnvironment } from '../../lambdas/processor/settings.js';
import type { HmacProviderConfig } from '../../lambdas/providers/hmac.js';
import { COMPLIANCE_PREFIX } from '../../lambdas/shared/archive-layout.js';
import { DLQ_RETENTION_SECONDS, REDRIVE_MARGIN_SECONDS } from '../../lambdas/shared/claim-retention.js';
import { METRIC_NAMESPACE } from '../../lambdas/shared/metric-names.js';
import { SQS_MAX_MESSAGE_BYTES } from '../../lambdas/shared/payload-limits.js';
import { PROCESSOR_SERVICE } from './metrics.js';
import { grantArchiveListing, grantArchivePrefix } from './payload-archive.js';
import { WebhookFunction, type WebhookFunctionCode } from './webhook-function.js';

/**
 * AWS: "set the source queue's visibility timeout to at least six times the timeout that you
 * configure on your function" (plus the batching window, during which messages already count as in
 * flight). https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html
 */
export const VISIBILITY_TIMEOUT_FACTOR = 6;

/**
 * A header an effect adapter sends: a plain value, which is written in the template (an API version,
 * never a credential), or a Secrets Manager secret's value, read by the processor at run time, so
 * only the secret's ARN is in the template (lambdas/processor/effect-headers.ts).
 */
export class EffectHeader {
  /** A value written in the template as it is: not for credentials. */
  static plain(value: string): EffectHeader {
    return new EffectHeader({ kind: 'plain', value });
  }

  /**
   * The secret's value (trimmed), or one string field of its JSON (`jsonField`), after `prefix`
   * (`'Bearer '`). The processor is granted read access to the secret; it caches the value for five
   * minutes and reads it again after a 401 or 403 answer (a rotation).
   */
  static fromSecret(
    secret: secretsmanager.ISecret,
    options: { readonly jsonField?: string; readonly prefix?: string } = {},
  ): EffectHeader {
    return new EffectHeader({ kind: 'secret', secret, ...options });
  }

  private constructor(
    /** @internal */
    readonly source:
      | { readonly kind: 'plain'; readonly value: string }
      | {
          readonly kind: 'secret';
          readonly secret: secretsmanager.ISecret;
          readonly jsonField?: string;
          readonly prefix?: string;
        },
  ) {}
}

/** One effect adapter of the processor: an HTTP service its appliers call (lambdas/processor/effects.ts). */
export interface WebhookEffect {
  /**
   * The service's endpoint (POSTed JSON with an `Idempotency-Key` header).
   * @default unset: the adapter is declared but not configured, so appliers skip the effects that
   * use it (`context.has(name)` is false); the local stack points it at its effects sink
   */
  readonly url?: string;
  /**
   * Whether the service returns the first result for a repeated `Idempotency-Key` instead of acting
   * again. Only such effects are re-run when the processor cannot tell whether they already ran.
   * @default false
   */
  readonly honoursIdempotencyKey?: boolean;
  /**
   * The longest one call may take before the processor gives up on it (whole seconds). A call that
   * times out may have acted: an effect that may act twice is then recorded as in doubt, never
   * called again. Must be shorter than `processorTimeout` by more than a second.
   * @default Duration.seconds(5)
   */
  readonly timeout?: Duration;
  /**
   * Headers sent with each call, besides `content-type` and `idempotency-key` (which the adapter
   * sets itself): a string or `EffectHeader.plain(...)` is written in the template as it is;
   * `EffectHeader.fromSecret(secret, { prefix: 'Bearer ' })` is read from Secrets Manager at run
   * time. Locally (`webhooks local`), a secret's value comes from `EFFECT_SECRET_<ADAPTER>` or a
   * development value (docs/processor.md, "Effects").
   * @default none
   */
  readonly headers?: Readonly<Record<string, string | EffectHeader>>;
  /**
   * Statuses that mean the request can never succeed (a 400 or 422 for a body the service will
   * always refuse, a 404 for a record deleted upstream): the event then fails at once, its claim
   * FAILED and its message moved to the DLQ, instead of being retried `maxReceiveCount` times.
   * @default none: every failed call is retried
   */
  readonly permanentStatuses?: readonly number[];
}

/** The header as `EFFECTS` carries it (lambdas/processor/effect-headers.ts). */
function headerSetting(header: string | EffectHeader): Record<string, string> {
  if (typeof header === 'string') return { value: header };
  const { source } = header;
  if (source.kind === 'plain') return { value: source.value };
  return {
    secretArn: source.secret.secretArn,
    ...(source.jsonField === undefined ? {} : { jsonField: source.jsonField }),
    ...(source.prefix === undefined ? {} : { prefix: source.prefix }),
  };
}

/** The secrets an effect's headers read (each granted to the processor). */
export function effectSecrets(effect: WebhookEffect): secretsmanager.ISecret[] {
  return Object.values(effect.headers ?? {}).flatMap((header) =>
    typeof header !== 'string' && header.source.kind === 'secret' ? [header.source.secret] : [],
  );
}

export interface EventProcessorProps {
  /** The default processor's bundle, or the user's `processorEntry`. */
  readonly code: WebhookFunctionCode;
  readonly claimsTable: dynamodb.ITable;
  /** Business tables by the name appliers use; the processor may read and write their items. */
  readonly tables: Readonly<Record<string, dynamodb.ITable>>;
  /** Effect adapters by the name effects declare (`{ adapter: '<name>', run }`). */
  readonly effects: Readonly<Record<string, WebhookEffect>>;
  /** Providers by configuration: the processor reads their payloads as the receiver does. */
  readonly hmacProviders: readonly HmacProviderConfig[];
  readonly timeout: Duration;
  readonly memorySize: number;
  readonly lease: Duration;
  readonly maxReceiveCount: number;
  readonly batchSize: number;
  readonly maxBatchingWindow: Duration;
  /** Concurrent invocations the event source mapping may run (`ScalingConfig.MaximumConcurrency`). */
  readonly maxConcurrency: number;
  /** Concurrency reserved for (and capping) the processor. @default none (the unreserved pool) */
  readonly reservedConcurrency?: number;
  readonly extraEnvironment?: Readonly<Record<string, string>>;
  readonly logRetention: logs.RetentionDays;
  /** Run the function with `--enable-source-maps`. @default false */
  readonly sourceMaps?: boolean;
  /** Where the processor archives payloads. */
  readonly archiveBucket: s3.IBucket;
  /**
   * Shopify is served: its compliance requests may delete archived events and write exports
   * (lambdas/processor/compliance.ts). @default false
   */
  readonly compliance?: boolean;
}

export class EventProcessor extends Construct {
  public readonly queue: sqs.Queue;
  public readonly deadLetterQueue: sqs.Queue;
  public readonly processor: lambda.IFunction;
  public readonly processorLogGroup: logs.ILogGroup;
  public readonly visibilityTimeout: Duration;
  /** How long claims are kept after each attempt: the DLQ's retention plus a redrive margin. */
  public readonly claimRetention: Duration;

  constructor(scope: Construct, id: string, props: EventProcessorProps) {
    super(scope, id);

    // Standard queues keep a message's original enqueue time when it moves to the DLQ, so the DLQ
    // must retain longer than the source queue (4 days) for the message to survive there.
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      retentionPeriod: Duration.seconds(DLQ_RETENTION_SECONDS),
      maxMessageSizeBytes: SQS_MAX_MESSAGE_BYTES,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    // The DLQ's retention above, plus the time a redrive at its last moment needs to be processed.
    this.claimRetention = Duration.seconds(DLQ_RETENTION_SECONDS + REDRIVE_MARGIN_SECONDS);
    this.visibilityTimeout = Duration.seconds(
      VISIBILITY_TIMEOUT_FACTOR * props.timeout.toSeconds() + props.maxBatchingWindow.toSeconds(),
    );
    this.queue = new sqs.Queue(this, 'EventQueue', {
      visibilityTimeout: this.visibilityTimeout,
      retentionPeriod: Duration.days(4),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
      // SQS's largest message, stated rather than left to a default (lambdas/shared/payload-limits.ts).
      maxMessageSizeBytes: SQS_MAX_MESSAGE_BYTES,
    });

    const processor = new WebhookFunction(this, 'Processor', {
      code: props.code,
      description: 'Webhook processor: apply each queued event once to the business tables',
      // A batch of up to 10 events, each a few DynamoDB transactions and optional HTTP calls
      // (the effect adapters): 30 s leaves room for slow downstreams without holding messages for long.
      timeout: props.timeout,
      // As for the receiver: more memory is more CPU, and the batch is processed in one process.
      memorySize: props.memorySize,
      ...(props.reservedConcurrency === undefined
        ? {}
        : { reservedConcurrentExecutions: props.reservedConcurrency }),
      logRetention: props.logRetention,
      sourceMaps: props.sourceMaps ?? false,
      environment: {
        ...toEnvironment({
          claimsTableName: props.claimsTable.tableName,
          // {"<name>": "<table name>"}: the names appliers use, mapped to the deployed tables.
          tableNames: Stack.of(this).toJsonString(
            Object.fromEntries(Object.entries(props.tables).map(([name, table]) => [name, table.tableName])),
          ),
          // {"<name>": {"url": ..., "honoursIdempotencyKey": ..., "timeoutSeconds": ...}}
          effects: Stack.of(this).toJsonString(
            Object.fromEntries(
              Object.entries(props.effects).map(([name, effect]) => [
                name,
                {
                  ...(effect.url === undefined ? {} : { url: effect.url }),
                  honoursIdempotencyKey: effect.honoursIdempotencyKey ?? false,
                  ...(effect.timeout === undefined ? {} : { timeoutSeconds: effect.timeout.toSeconds() }),
                  ...(effect.headers === undefined
                    ? {}
                    : {
                        headers: Object.fromEntries(
                          Object.entries(effect.headers).map(([header, value]) => [
                            header.toLowerCase(),
                            headerSetting(value),
                          ]),
                        ),
                      }),
                  ...(effect.permanentStatuses === undefined
                    ? {}
                    : { permanentStatuses: [...effect.permanentStatuses] }),
                },
              ]),
            ),
          ),
          leaseSeconds: props.lease.toSeconds(),
          // The processor marks a claim FAILED on the attempt SQS will not redeliver.
          maxReceiveCount: props.maxReceiveCount,
          // Claims outlive the DLQ's copy of their message (lambdas/shared/claim-retention.ts).
          claimRetentionSeconds: this.claimRetention.toSeconds(),
          archiveBucket: props.archiveBucket.bucketName,
          // An event that can never succeed is moved here at once (lambdas/processor/failures.ts).
          deadLetterQueueUrl: this.deadLetterQueue.queueUrl,
          hmacProviders: props.hmacProviders,
        }),
        POWERTOOLS_SERVICE_NAME: PROCESSOR_SERVICE,
        POWERTOOLS_METRICS_NAMESPACE: METRIC_NAMESPACE,
        ...props.extraEnvironment,
      },
    });
    this.processor = processor.function;
    this.processorLogGroup = processor.logGroup;

    // TransactWriteItems is authorised per item: each table needs the action of every item kind it
    // takes part in (Put, Update, ConditionCheck), not a "TransactWriteItems" action.
    processor.role.addToPolicy(
      new iam.PolicyStatement({
        actions: [
          'dynamodb:GetItem',
          'dynamodb:UpdateItem',
          'dynamodb:PutItem',
          'dynamodb:ConditionCheckItem',
        ],
        resources: [props.claimsTable.tableArn],
      }),
    );
    // The business tables: the same item actions, on the tables given and nothing else (none: no statement).
    const businessTables = Object.values(props.tables);
    if (businessTables.length > 0) {
      processor.role.addToPolicy(
        new iam.PolicyStatement({
          actions: [
            'dynamodb:GetItem',
            'dynamodb:PutItem',
            'dynamodb:UpdateItem',
            'dynamodb:ConditionCheckItem',
          ],
          resources: businessTables.map((table) => table.tableArn),
        }),
      );
    }

    // The archive: write objects under the events/ prefix, and read claim-checked bodies back.
    grantArchiveListing(processor.role, props.archiveBucket);
    grantArchivePrefix(
      processor.role,
      props.archiveBucket,
      ['s3:PutObject', 's3:GetObject'],
      'One object per batch (named by a random id) and one per claim-checked event (named by its idempotency key): the object names cannot be known in advance, so PutObject and GetObject are scoped to the archive prefix of this one bucket.',
    );

    if (props.compliance === true) {
      grantArchivePrefix(
        processor.role,
        props.archiveBucket,
        ['s3:DeleteObject'],
        "Shopify's customers/redact and shop/redact remove that customer's or shop's events from archive objects whose names are per batch and per event, never known in advance.",
      );
      grantArchivePrefix(
        processor.role,
        props.archiveBucket,
        ['s3:PutObject', 's3:DeleteObject'],
        "Shopify's customers/data_request writes one export per request (named by shop, customer and request id); a redact deletes that customer's exports.",
        COMPLIANCE_PREFIX,
      );
    }

    // An event that can never succeed is sent to the DLQ by the processor itself.
    this.deadLetterQueue.grantSendMessages(processor.role);
    // The secrets effect headers read (each secret only; its key too when it has its own).
    for (const secret of Object.values(props.effects).flatMap(effectSecrets))
      secret.grantRead(processor.role);

    // Grants the poller's SQS actions on this queue only (Receive, Delete, ChangeVisibility, ...).
    this.processor.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: props.batchSize,
        maxBatchingWindow: props.maxBatchingWindow,
        reportBatchItemFailures: true,
        // The poller stops receiving at this many concurrent batches instead of scaling towards
        // 1,000 and taking the account's concurrency from the receiver (docs/capacity.md).
        // https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html
        maxConcurrency: props.maxConcurrency,
      }),
    );
  }
}
