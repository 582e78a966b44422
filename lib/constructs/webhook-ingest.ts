/**
 * Ingest: the HTTP API (one `POST /webhooks/<provider>` route per provider, stage throttling,
 * access logs) and the receiver Lambda behind it, with exactly the permissions it needs.
 *
 * Routes are explicit per provider rather than one `POST /webhooks/{provider}`: a path naming no
 * provider is answered `404` by API Gateway without invoking (or paying for) the function, and each
 * route can be throttled on its own (stage `RouteSettings`). The receiver reads the provider from
 * the path's last segment when there is no path parameter (lambdas/receiver/http.ts).
 */
import { type Duration, Stack, Validations } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { HmacProviderConfig } from '../../lambdas/providers/hmac.js';
import type { ProviderId } from '../../lambdas/providers/types.js';
import * as receiverSettings from '../../lambdas/receiver/settings.js';
import { METRIC_NAMESPACE } from '../../lambdas/shared/metric-names.js';
import { publicWebhookUrl } from '../../lambdas/shared/public-url.js';
import { RECEIVER_SERVICE } from './metrics.js';
import { grantArchivePrefix } from './payload-archive.js';
import { WebhookFunction } from './webhook-function.js';

export interface WebhookIngestProps {
  readonly claimsTable: dynamodb.ITable;
  readonly eventQueue: sqs.IQueue;
  /** One route per provider: the built-in ones and `hmacProviders`, in that order. */
  readonly providerIds: readonly ProviderId[];
  /** Providers by configuration, written to the receiver's `WEBHOOK_HMAC_PROVIDERS`. */
  readonly hmacProviders: readonly HmacProviderConfig[];
  readonly secrets: Readonly<Partial<Record<ProviderId, secretsmanager.ISecret>>>;
  /** JSON for `PROVIDER_SETTINGS`, already validated. */
  readonly providerSettingsJson: string;
  readonly timeout: Duration;
  readonly memorySize: number;
  readonly lease: Duration;
  /** The least a claim lives: the processor's claim retention (DLQ retention + redrive margin). */
  readonly claimRetention: Duration;
  /** Where claim-checked bodies go: the payload archive. */
  readonly archiveBucket: s3.IBucket;
  /** Queue messages over this many bytes become claim checks. */
  readonly claimCheckThresholdBytes: number;
  /** Whether a duplicate adds itself to its claim's `deliveries` (lambdas/receiver/settings.ts). */
  readonly countDuplicates: boolean;
  /** Whether the receiver marks a claim ENQUEUED after its send (lambdas/receiver/settings.ts). */
  readonly markEnqueued: boolean;
  /** The base URL providers deliver to (a custom domain). @default the API's own endpoint */
  readonly publicBaseUrl?: string;
  readonly throttlingRateLimit: number;
  readonly throttlingBurstLimit: number;
  /** Concurrency reserved for (and capping) the receiver. @default none (the unreserved pool) */
  readonly reservedConcurrency?: number;
  readonly logRetention: logs.RetentionDays;
  /** Run the function with `--enable-source-maps`. @default false */
  readonly sourceMaps?: boolean;
}

export class WebhookIngest extends Construct {
  public readonly api: apigwv2.HttpApi;
  public readonly stage: apigwv2.HttpStage;
  public readonly accessLogGroup: logs.LogGroup;
  public readonly receiver: lambda.IFunction;
  public readonly receiverLogGroup: logs.ILogGroup;
  public readonly routes: Readonly<Record<ProviderId, apigwv2.HttpRoute>>;

  constructor(scope: Construct, id: string, props: WebhookIngestProps) {
    super(scope, id);
    const secretOf = (provider: ProviderId): secretsmanager.ISecret => {
      const secret = props.secrets[provider];
      if (!secret) throw new Error(`no secret was created for provider ${provider}`);
      return secret;
    };
    const secretArns = Object.fromEntries(props.providerIds.map((p) => [p, secretOf(p).secretArn]));

    const receiver = new WebhookFunction(this, 'Receiver', {
      code: { framework: 'receiver' },
      description: 'Webhook receiver: verify the signature, claim the key once, enqueue',
      // Providers give up on a delivery after 5-10 s (Stripe/GitHub 10 s, Shopify 5 s): past 10 s
      // nobody is listening for the answer, and the provider's retry will be handled fresh.
      timeout: props.timeout,
      // CPU scales with memory: 512 MB keeps the HMAC, JSON parsing and TLS set-up off the
      // latency path at a cost of cents; the function itself needs far less.
      memorySize: props.memorySize,
      ...(props.reservedConcurrency === undefined
        ? {}
        : { reservedConcurrentExecutions: props.reservedConcurrency }),
      logRetention: props.logRetention,
      sourceMaps: props.sourceMaps ?? false,
      environment: {
        ...receiverSettings.toEnvironment({
          claimsTableName: props.claimsTable.tableName,
          eventQueueUrl: props.eventQueue.queueUrl,
          leaseSeconds: props.lease.toSeconds(),
          claimRetentionSeconds: props.claimRetention.toSeconds(),
          archiveBucket: props.archiveBucket.bucketName,
          claimCheckThresholdBytes: props.claimCheckThresholdBytes,
          countDuplicates: props.countDuplicates,
          markEnqueued: props.markEnqueued,
          // Checked at synth time by providerSettingsJson (./provider-settings.ts).
          providers: JSON.parse(props.providerSettingsJson) as receiverSettings.ProviderSettingsOverrides,
          // ARNs only: the values are read at run time (lambdas/shared/secrets-manager.ts).
          secretArnsJson: Stack.of(this).toJsonString(secretArns),
          // Checked by the construct (providerRegistry); the registry reads them at cold start.
          hmacProviders: props.hmacProviders,
        }),
        POWERTOOLS_SERVICE_NAME: RECEIVER_SERVICE,
        POWERTOOLS_METRICS_NAMESPACE: METRIC_NAMESPACE,
      },
    });
    this.receiver = receiver.function;
    this.receiverLogGroup = receiver.logGroup;

    // Exactly what the claim store and the queue adapter call, on exactly these resources.
    receiver.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem'],
        resources: [props.claimsTable.tableArn],
      }),
    );
    receiver.role.addToPolicy(
      new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [props.eventQueue.queueArn] }),
    );
    // Claim checks: write a large body under the archive prefix, nothing else.
    grantArchivePrefix(
      receiver.role,
      props.archiveBucket,
      ['s3:PutObject'],
      'A claim-checked body is stored under a key derived from its idempotency key, unknown in advance: PutObject is scoped to the archive prefix of this one bucket.',
    );
    receiver.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        resources: props.providerIds.map((p) => secretOf(p).secretArn),
      }),
    );

    this.accessLogGroup = new logs.LogGroup(this, 'AccessLogs', { retention: props.logRetention });
    this.api = new apigwv2.HttpApi(this, 'Api', {
      description: 'Idempotent webhook receiver: POST /webhooks/<provider>',
      createDefaultStage: false,
    });
    this.stage = new apigwv2.HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: props.throttlingRateLimit, burstLimit: props.throttlingBurstLimit },
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(this.accessLogGroup),
        // No headers or body: signatures and tokens travel in headers and must never be logged.
        format: accessLogFormat(),
      },
    });

    const integration = new HttpLambdaIntegration('Receiver', this.receiver, {
      payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0,
    });
    const routes: Record<ProviderId, apigwv2.HttpRoute> = {};
    for (const provider of props.providerIds) {
      const [route] = this.api.addRoutes({
        path: `/webhooks/${provider}`,
        methods: [apigwv2.HttpMethod.POST],
        integration,
      });
      if (!route) throw new Error(`no route created for ${provider}`);
      routes[provider] = route;
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'Webhook providers cannot send AWS credentials or JWTs: every delivery is authenticated by its ' +
          'provider signature (an HMAC over the raw body, or a shared token) inside the receiver Lambda, ' +
          'before anything is written.',
      });
    }
    this.routes = routes;

    // The URL Square and Twilio sign. It names the API by id only (the API does not depend on the
    // function; the integration and routes do), so the function can hold it without a cycle.
    this.publicBaseUrl = props.publicBaseUrl ?? this.stage.url;
    receiver.function.addEnvironment(receiverSettings.ENV.publicBaseUrl, this.publicBaseUrl);
  }

  /** Where providers deliver to: the `publicBaseUrl` prop, else the API's endpoint. */
  public readonly publicBaseUrl: string;

  /** `<public base URL>/webhooks/<provider>`: by default `https://<api>.execute-api.<region>.amazonaws.com/webhooks/<provider>` */
  webhookUrl(provider: ProviderId): string {
    return publicWebhookUrl(this.publicBaseUrl, provider);
  }
}

/**
 * The API's access log line, one per request: ids, route, status and latencies, never headers or
 * bodies. The bench prices a line of it (bench/log-sources.ts).
 */
export const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  requestTime: '$context.requestTime',
  ip: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  httpMethod: '$context.httpMethod',
  path: '$context.path',
  routeKey: '$context.routeKey',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationStatus: '$context.integrationStatus',
  integrationLatency: '$context.integrationLatency',
  integrationError: '$context.integrationErrorMessage',
  error: '$context.error.message',
} as const;

function accessLogFormat(): apigw.AccessLogFormat {
  return apigw.AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS));
}
