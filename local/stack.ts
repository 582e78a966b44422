/**
 * Runs a synthesized stack on this machine: tables in DynamoDB Local, queues (with their redrive
 * policies) in the SQS emulator, every Lambda function from its synthesized bundle with its
 * template environment resolved to the local resources, the HTTP API's routes on loopback, and each
 * SQS event source mapping as a poller. No second, hand-written configuration: the template decides.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { headerValueFromSecret } from '../lambdas/processor/effect-headers.js';
import { DEFAULT_EFFECT_TIMEOUT_MS } from '../lambdas/processor/effects.js';
import * as processorSettings from '../lambdas/processor/settings.js';
import { configuredProviders } from '../lambdas/providers/configured.js';
import { getProvider, withProviders } from '../lambdas/providers/index.js';
import * as receiverSettings from '../lambdas/receiver/settings.js';
import { accountSecretsEnvVar } from '../lambdas/shared/secrets.js';
import {
  ARCHIVE_BUCKET,
  ARCHIVE_FORCE_PATH_STYLE,
  ConfigError,
  FAULT_POINTS,
  FAULT_POINTS_STATE_DIR,
} from '../lambdas/shared/settings.js';
import * as sweeperSettings from '../lambdas/sweeper/settings.js';
import { receiverOutputs } from './assembly.js';
import { localSecrets } from './dev-secrets.js';
import { type EffectsSink, startEffectsSink } from './effects-sink.js';
import {
  LOCAL_CREDENTIALS,
  type RunningEmulator,
  startDynamoDbLocal,
  startS3Server,
  startSqsEmulator,
} from './emulators.js';
import { type HttpRoute, startHttpApi } from './http-api.js';
import { LocalFunction } from './local-function.js';
import { nodeBinaryFor } from './node-runtime.js';
import { writeOutputsFile } from './outputs-file.js';
import { scheduledTargets, startSchedules } from './schedules.js';
import { LOCAL_DEFAULTS, LOCAL_ENV, loadLocalStackKnobs } from './settings.js';
import { concurrentBatches, SqsPoller } from './sqs-poller.js';
import {
  assetDirectory,
  type CfnTemplate,
  handlerEntry,
  IntrinsicResolver,
  LOCAL_ACCOUNT,
  LOCAL_REGION,
  type LocalResource,
  readSynthesizedStack,
  resourcesOfType,
} from './template.js';
import {
  type LocalTimings,
  localEffectTimeoutSeconds,
  localTimings,
  templateTimings,
  timingKnobs,
} from './timings.js';

export interface LocalStackOptions {
  /** The cdk.out directory to run. */
  readonly outdir: string;
  readonly stackName?: string;
  readonly port: number;
  /**
   * Where to write the outputs file (shape of `cdk deploy --outputs-file`), once every part is up;
   * `stop()` removes it unless another stack has written over it since.
   */
  readonly outputsFile?: string;
  /** Keep DynamoDB data in this directory instead of in memory. */
  readonly dataDirectory?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly log?: (line: string) => void;
  /** How to install the functions' Node when it is missing (./node-runtime.ts). @default `npm ci` */
  readonly nodeInstall?: (major: number) => string;
}

export interface RunningLocalStack {
  readonly stackName: string;
  readonly outputs: Readonly<Record<string, string>>;
  readonly baseUrl: string;
  stop(): Promise<void>;
}

/** Concurrent batches per event source mapping locally, at most (LOCAL_MAX_CONCURRENT_BATCHES). */
export const LOCAL_CONCURRENT_BATCHES_CAP = LOCAL_DEFAULTS.maxConcurrentBatches;

export async function startLocalStack(options: LocalStackOptions): Promise<RunningLocalStack> {
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => console.log(line));
  const { stackName, template, outdir } = readSynthesizedStack(options.outdir, options.stackName);
  // Local-only knobs (README, "Run it locally"), checked before anything starts.
  const knobs = loadLocalStackKnobs(env);
  const visibilityOverride = knobs.visibilityTimeoutSeconds;
  const maxReceiveOverride = knobs.maxReceiveCount;
  // Leases, timeouts and the visibility timeout, checked against the construct's rules; a short
  // lease moves the function and effect timeouts down with it (./timings.ts).
  const timings = localTimings(
    templateTimings(template, {
      receiverLease: receiverSettings.ENV.leaseSeconds,
      processingLease: processorSettings.ENV.leaseSeconds,
      sweepProcessingGrace: sweeperSettings.ENV.processingGraceMs,
    }),
    timingKnobs(env),
  );
  const leaseOverride = timings.leaseOverride;
  if (timings.moved.length > 0)
    log(`local timings: ${timings.moved.join(', ')} (docs/rules.md, "Leases and timeouts")`);
  // Each function's Node (its Lambda runtime's major), found before anything starts: a missing one
  // is a NodeRuntimeError saying how to install it, not a failure after Java and the servers started.
  for (const [, fn] of resourcesOfType(template, 'AWS::Lambda::Function'))
    nodeBinaryFor(
      String(fn.Properties?.Runtime ?? ''),
      options.nodeInstall ? { install: options.nodeInstall } : {},
    );

  const stoppers: Array<() => Promise<void>> = [];
  /** Stopped first, though started early: no request may reach a function that is stopping. */
  let stopApi: (() => Promise<void>) | undefined;
  const stopAll = async () => {
    if (stopApi) await stopApi().catch((error) => log(`stop failed: ${String(error)}`));
    for (const stop of stoppers.reverse())
      await stop().catch((error) => log(`stop failed: ${String(error)}`));
  };

  try {
    const [dynamo, sqs, s3, sink]: [RunningEmulator, RunningEmulator, RunningEmulator, EffectsSink] =
      await Promise.all([
        startDynamoDbLocal(options.dataDirectory ? { dataDirectory: options.dataDirectory } : {}),
        startSqsEmulator(),
        startS3Server(options.dataDirectory ? { directory: join(options.dataDirectory, 's3') } : {}),
        startEffectsSink(),
      ]);
    stoppers.push(dynamo.stop, sqs.stop, s3.stop, sink.stop);
    const clientConfig = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
    const dynamoClient = new DynamoDBClient({ ...clientConfig, endpoint: dynamo.endpoint });
    const sqsClient = new SQSClient({ ...clientConfig, endpoint: sqs.endpoint });

    const resources = new Map<string, LocalResource>();
    const resolver = new IntrinsicResolver(resources, stackName);

    // The API listens first, so its URL (what Square and Twilio sign, PUBLIC_BASE_URL) is known when
    // the functions start; its routes are filled in once they have.
    const routes: HttpRoute[] = [];
    const api = await startHttpApi({
      routes,
      port: options.port,
      onError: (e) => log(`[api] ${String(e)}`),
      // What API Gateway's access log would show for a request that never reached the receiver.
      onRefused: (line) => log(`[api] ${JSON.stringify(line)}`),
    });
    stopApi = api.stop;

    // Stand-ins that need no server: what Ref/GetAtt return for them.
    for (const [id, resource] of Object.entries(template.Resources)) {
      if (resource.Type === 'AWS::SecretsManager::Secret') {
        resources.set(id, { ref: `arn:aws:secretsmanager:${LOCAL_REGION}:${LOCAL_ACCOUNT}:secret:${id}` });
      } else if (resource.Type === 'AWS::ApiGatewayV2::Api') {
        resources.set(id, { ref: 'local', attributes: { ApiEndpoint: LOCAL_API_HOST } });
      } else if (resource.Type === 'AWS::Lambda::Function') {
        resources.set(id, {
          ref: id,
          attributes: { Arn: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${id}` },
        });
      } else if (resource.Type === 'AWS::ApiGatewayV2::Integration') {
        resources.set(id, { ref: id });
      }
    }

    await createTables(template, dynamoClient, resources, log);
    await createBuckets(template, s3.endpoint, resources, log);
    await createQueues(
      template,
      sqsClient,
      resolver,
      resources,
      { visibilityOverride, maxReceiveOverride },
      log,
    );

    const faultStateDirectory = mkdtempSync(join(tmpdir(), 'webhooks-faults-'));
    stoppers.push(async () => rmSync(faultStateDirectory, { recursive: true, force: true }));

    // A function fed by event source mappings gets an execution environment per concurrent batch,
    // up to a local cap: the deployed default (100) would be 100 node processes on a laptop.
    const batchCap = knobs.maxConcurrentBatches;
    const localBatches = (properties: Readonly<Record<string, unknown>>) =>
      Math.min(concurrentBatches(properties), batchCap);
    const batchesByFunction = new Map<string, number>();
    for (const [, mapping] of resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')) {
      const fnId = String(resolver.resolve(mapping.Properties?.FunctionName));
      batchesByFunction.set(
        fnId,
        (batchesByFunction.get(fnId) ?? 0) + localBatches(mapping.Properties ?? {}),
      );
    }

    // Functions: the synthesized bundles with their template environment, pointed at local servers.
    const functions = new Map<string, LocalFunction>();
    for (const [id, resource] of resourcesOfType(template, 'AWS::Lambda::Function')) {
      const props = resource.Properties ?? {};
      const variables = Object.fromEntries(
        Object.entries(
          resolver.resolve(
            (props.Environment as { Variables?: unknown } | undefined)?.Variables ?? {},
          ) as Record<string, string>,
        ).map(([name, value]) => [name, localApiUrl(String(value), api.url)]),
      );
      const environment = localEnvironment(variables, env, {
        dynamoEndpoint: dynamo.endpoint,
        sqsEndpoint: sqs.endpoint,
        s3Endpoint: s3.endpoint,
        sink,
        functionName: id,
        leaseOverride,
        processorTimeoutSeconds: timings.processorTimeoutSeconds,
        maxReceiveOverride,
        faultStateDirectory,
      });
      const { entry, exportName } = handlerEntry(
        assetDirectory(outdir, props.Code),
        String(props.Handler ?? 'index.handler'),
      );
      const fn = new LocalFunction({
        name: friendlyName(id),
        entry,
        handler: exportName,
        runtime: String(props.Runtime ?? ''),
        environment,
        timeoutSeconds: localTimeout(variables, Number(props.Timeout ?? 3), timings),
        memoryMb: Number(props.MemorySize ?? 128),
        maxConcurrency: batchesByFunction.get(id) ?? 0,
        log,
      });
      await fn.start();
      stoppers.push(() => fn.stop());
      functions.set(id, fn);
    }

    // Event source mappings: pollers that invoke the function with real SQS batch events.
    for (const [, resource] of resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')) {
      const props = resource.Properties ?? {};
      const queueArn = String(resolver.resolve(props.EventSourceArn));
      const queueUrl = [...resources.values()].find((r) => r.attributes?.Arn === queueArn)?.attributes
        ?.QueueUrl;
      const fnId = String(resolver.resolve(props.FunctionName));
      const fn = functions.get(fnId);
      if (!queueUrl || !fn)
        throw new Error(`event source mapping ${queueArn} -> ${fnId} has no local queue or function`);
      const reportsItemFailures = ((props.FunctionResponseTypes as string[] | undefined) ?? []).includes(
        'ReportBatchItemFailures',
      );
      const poller = new SqsPoller({
        client: sqsClient,
        queueUrl,
        batchSize: Number(props.BatchSize ?? 10),
        waitTimeSeconds: 1,
        concurrency: localBatches(props),
        functionName: friendlyName(fnId),
        handler: async (event) => {
          const result = (await fn.invoke(event)) as
            | { batchItemFailures?: Array<{ itemIdentifier: string }> }
            | undefined;
          // Without ReportBatchItemFailures, Lambda ignores the response: success deletes the batch.
          return reportsItemFailures
            ? { batchItemFailures: result?.batchItemFailures ?? [] }
            : { batchItemFailures: [] };
        },
        onError: (error) => log(`[poller] ${String(error)}`),
      });
      if (concurrentBatches(props) > batchCap)
        log(
          `[poller] ${friendlyName(fnId)}: ${batchCap} batches at once locally (deployed: ${concurrentBatches(props)}; LOCAL_MAX_CONCURRENT_BATCHES)`,
        );
      poller.start();
      stoppers.push(() => poller.stop());
    }

    // Scheduled rules (the sweeper): invoked on a short local period.
    const stopSchedules = startSchedules(
      scheduledTargets(
        template,
        resolver,
        (arn) =>
          [...resources.entries()].find(([id, r]) => functions.has(id) && r.attributes?.Arn === arn)?.[0],
      ),
      (id, event) => functions.get(id)?.invoke(event) ?? Promise.resolve(undefined),
      { periodSeconds: knobs.sweepIntervalSeconds, log },
    );
    stoppers.push(stopSchedules);

    // The HTTP API's routes.
    for (const [, resource] of resourcesOfType(template, 'AWS::ApiGatewayV2::Route')) {
      const props = resource.Properties ?? {};
      const [method = 'ANY', path = '/'] = String(props.RouteKey).split(' ');
      const integrationId = String(resolver.resolve(props.Target)).replace(/^integrations\//, '');
      const integration = template.Resources[integrationId]?.Properties ?? {};
      const fnArn = String(resolver.resolve(integration.IntegrationUri));
      const fnId = [...resources.entries()].find(([, r]) => r.attributes?.Arn === fnArn)?.[0] ?? '';
      const fn = functions.get(fnId);
      if (!fn) throw new Error(`route ${String(props.RouteKey)} targets no local function`);
      routes.push({ method, path, invoke: (event) => fn.invoke(event) });
    }

    const outputs = localOutputs(template, resolver, api.url, {
      LocalDynamoDbEndpoint: dynamo.endpoint,
      LocalSqsEndpoint: sqs.endpoint,
      LocalS3Endpoint: s3.endpoint,
      LocalEffectsUrl: sink.url,
    });
    if (options.outputsFile) {
      const written = writeOutputsFile(options.outputsFile, stackName, outputs);
      // Stopped first (stoppers run in reverse): clients stop finding the stack before it goes.
      stoppers.push(async () => {
        written.remove();
      });
    }
    dynamoClient.destroy();
    return { stackName, outputs, baseUrl: api.url, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

function friendlyName(logicalId: string): string {
  // WebhooksIngestReceiverFunction0036F769 -> receiver
  const match = /(Receiver|Processor)/.exec(logicalId);
  return match?.[1]?.toLowerCase() ?? logicalId;
}

async function createTables(
  template: CfnTemplate,
  client: DynamoDBClient,
  resources: Map<string, LocalResource>,
  log: (line: string) => void,
): Promise<void> {
  for (const [id, resource] of resourcesOfType(template, 'AWS::DynamoDB::Table')) {
    const props = resource.Properties ?? {};
    const name = typeof props.TableName === 'string' ? props.TableName : id;
    try {
      await client.send(
        new CreateTableCommand({
          TableName: name,
          KeySchema: props.KeySchema as never,
          AttributeDefinitions: props.AttributeDefinitions as never,
          BillingMode: 'PAY_PER_REQUEST',
          ...(props.GlobalSecondaryIndexes
            ? { GlobalSecondaryIndexes: props.GlobalSecondaryIndexes as never }
            : {}),
        }),
      );
      const ttl = props.TimeToLiveSpecification as { AttributeName?: string; Enabled?: boolean } | undefined;
      if (ttl?.Enabled && ttl.AttributeName) {
        await client.send(
          new UpdateTimeToLiveCommand({
            TableName: name,
            TimeToLiveSpecification: { AttributeName: ttl.AttributeName, Enabled: true },
          }),
        );
      }
    } catch (error) {
      // Kept data (`--persist`): the table is already there.
      if (!(error instanceof ResourceInUseException)) throw error;
    }
    const described = await client.send(new DescribeTableCommand({ TableName: name }));
    resources.set(id, { ref: name, attributes: { Arn: described.Table?.TableArn ?? name } });
    log(`table ${name} ready`);
  }
}

async function createBuckets(
  template: CfnTemplate,
  endpoint: string,
  resources: Map<string, LocalResource>,
  log: (line: string) => void,
): Promise<void> {
  const client = new S3Client({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoint,
    forcePathStyle: true,
  });
  for (const [id, resource] of resourcesOfType(template, 'AWS::S3::Bucket')) {
    const props = resource.Properties ?? {};
    const name = typeof props.BucketName === 'string' ? props.BucketName : id.toLowerCase();
    try {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    } catch (error) {
      const code = (error as { name?: string }).name;
      if (code !== 'BucketAlreadyOwnedByYou' && code !== 'BucketAlreadyExists') throw error;
    }
    resources.set(id, { ref: name, attributes: { Arn: `arn:aws:s3:::${name}` } });
    // s3rver does not implement lifecycle rules: archived objects are kept until the stack stops.
    log(`bucket ${name} ready`);
  }
  client.destroy();
}

async function createQueues(
  template: CfnTemplate,
  client: SQSClient,
  resolver: IntrinsicResolver,
  resources: Map<string, LocalResource>,
  overrides: { visibilityOverride: number | undefined; maxReceiveOverride: number | undefined },
  log: (line: string) => void,
): Promise<void> {
  const pending = new Map(resourcesOfType(template, 'AWS::SQS::Queue'));
  // Dead-letter queues first: a redrive policy names its DLQ's ARN.
  while (pending.size > 0) {
    let progressed = false;
    for (const [id, resource] of pending) {
      const props = resource.Properties ?? {};
      const redrive = props.RedrivePolicy as
        | { deadLetterTargetArn?: unknown; maxReceiveCount?: number }
        | undefined;
      let resolvedRedrive: { deadLetterTargetArn: string; maxReceiveCount: number } | undefined;
      if (redrive) {
        try {
          resolvedRedrive = {
            deadLetterTargetArn: String(resolver.resolve(redrive.deadLetterTargetArn)),
            maxReceiveCount: overrides.maxReceiveOverride ?? Number(redrive.maxReceiveCount ?? 10),
          };
        } catch {
          continue; // its DLQ is not created yet
        }
      }
      const name = typeof props.QueueName === 'string' ? props.QueueName : id;
      const attributes: Record<string, string> = {};
      const visibility =
        redrive && overrides.visibilityOverride ? overrides.visibilityOverride : props.VisibilityTimeout;
      if (visibility !== undefined) attributes.VisibilityTimeout = String(visibility);
      if (props.MessageRetentionPeriod !== undefined)
        attributes.MessageRetentionPeriod = String(props.MessageRetentionPeriod);
      if (resolvedRedrive) attributes.RedrivePolicy = JSON.stringify(resolvedRedrive);
      const created = await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
      const url = created.QueueUrl ?? '';
      const arn =
        (await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] })))
          .Attributes?.QueueArn ?? '';
      resources.set(id, { ref: url, attributes: { Arn: arn, QueueUrl: url, QueueName: name } });
      log(
        `queue ${name} ready${resolvedRedrive ? ` (visibility ${attributes.VisibilityTimeout ?? 30} s, DLQ after ${resolvedRedrive.maxReceiveCount} receives)` : ''}`,
      );
      pending.delete(id);
      progressed = true;
    }
    if (!progressed)
      throw new Error(`queues ${[...pending.keys()].join(', ')} have unresolvable redrive policies`);
  }
}

interface LocalEnvironmentContext {
  readonly dynamoEndpoint: string;
  readonly sqsEndpoint: string;
  readonly s3Endpoint: string;
  readonly sink: EffectsSink;
  readonly functionName: string;
  readonly leaseOverride: number | undefined;
  /** The processor's local timeout, which bounds its effects' timeouts (./timings.ts). */
  readonly processorTimeoutSeconds?: number | undefined;
  readonly maxReceiveOverride: number | undefined;
  readonly faultStateDirectory: string;
}

/** Sweeper settings a local run may override from its environment. */
const SWEEPER_OVERRIDES = [
  sweeperSettings.ENV.receivedGraceMs,
  sweeperSettings.ENV.processingGraceMs,
  sweeperSettings.ENV.enqueuedStaleMs,
  sweeperSettings.ENV.maxRequeues,
] as const;

/**
 * The processor's effect adapters, run locally: each calls the effects sink (`POST /<name>`) unless
 * `LOCAL_REAL_EFFECTS` names it (or is `*`) and it has a URL; a header from a secret gets its value
 * from `EFFECT_SECRET_<ADAPTER>` or a development value (Secrets Manager is not emulated).
 */
function localEffects(
  json: string,
  sink: EffectsSink,
  processorTimeoutSeconds: number | undefined,
  env: NodeJS.ProcessEnv,
): string {
  const effects = JSON.parse(json) as Record<
    string,
    {
      url?: string;
      honoursIdempotencyKey?: boolean;
      timeoutSeconds?: number;
      headers?: Record<string, { value?: string; secretArn?: string; jsonField?: string; prefix?: string }>;
    }
  >;
  const real = realEffects(env);
  const unknown = real === '*' ? [] : [...real].filter((name) => !Object.hasOwn(effects, name));
  if (unknown.length > 0)
    throw new ConfigError(
      `${LOCAL_ENV.realEffects} names ${unknown.join(', ')}, which the stack has no effect adapter of (it has ${Object.keys(effects).join(', ') || 'none'})`,
    );
  for (const [name, effect] of Object.entries(effects)) {
    // Each call must end a margin before the (possibly moved) processor timeout.
    const timeoutSeconds =
      processorTimeoutSeconds === undefined
        ? effect.timeoutSeconds
        : localEffectTimeoutSeconds(
            (effect.timeoutSeconds ?? DEFAULT_EFFECT_TIMEOUT_MS / 1000) * 1000,
            processorTimeoutSeconds,
          );
    const toSink = effect.url === undefined || !(real === '*' || real.has(name));
    // A development value must never reach a real service as a credential.
    const secretHeader = Object.entries(effect.headers ?? {}).find(
      ([, header]) => header.secretArn !== undefined,
    );
    if (!toSink && secretHeader !== undefined && env[effectSecretEnvVar(name)] === undefined)
      throw new ConfigError(
        `${LOCAL_ENV.realEffects} sends ${name} to ${effect.url}, whose header ${secretHeader[0]} comes from a secret: set ${effectSecretEnvVar(name)} to its value (Secrets Manager is not emulated)`,
      );
    effects[name] = {
      ...effect,
      ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }),
      ...(toSink ? { url: sink.urlOf(name) } : {}),
      ...(effect.headers === undefined ? {} : { headers: localHeaders(name, effect.headers, env) }),
    };
    if (toSink) sink.declare(name, effect.honoursIdempotencyKey === true);
  }
  return JSON.stringify(effects);
}

/** `LOCAL_REAL_EFFECTS`: the adapters that call their configured URL locally (`*`: all of them). */
function realEffects(env: NodeJS.ProcessEnv): ReadonlySet<string> | '*' {
  const raw = env[LOCAL_ENV.realEffects]?.trim() ?? '';
  if (raw === '*') return '*';
  return new Set(
    raw
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== ''),
  );
}

/** The variable holding an adapter's secret locally: `EFFECT_SECRET_CRM` for `crm`. */
export function effectSecretEnvVar(adapter: string): string {
  return `EFFECT_SECRET_${adapter.toUpperCase()}`;
}

/** The development value of an adapter's secret header when its variable is unset. */
export function devEffectSecret(adapter: string, jsonField: string | undefined): string {
  return `local-dev-${adapter}${jsonField === undefined ? '' : `-${jsonField}`}`;
}

/** Headers read from a secret get their local value (the variable's, or a development one). */
function localHeaders(
  adapter: string,
  headers: Record<string, { value?: string; secretArn?: string; jsonField?: string; prefix?: string }>,
  env: NodeJS.ProcessEnv,
): Record<string, { value: string }> {
  const given = env[effectSecretEnvVar(adapter)];
  return Object.fromEntries(
    Object.entries(headers).map(([header, setting]) => {
      if (setting.secretArn === undefined) return [header, { value: setting.value ?? '' }];
      let secret: string;
      try {
        secret =
          given === undefined
            ? devEffectSecret(adapter, setting.jsonField)
            : headerValueFromSecret(given, setting.jsonField);
      } catch (error) {
        throw new ConfigError(`${effectSecretEnvVar(adapter)}: ${(error as Error).message}`);
      }
      return [header, { value: `${setting.prefix ?? ''}${secret}` }];
    }),
  );
}

/** A function's local timeout: the receiver's and the processor's may move down with a short lease. */
function localTimeout(
  variables: Readonly<Record<string, string>>,
  templateTimeout: number,
  timings: LocalTimings,
): number {
  if (processorSettings.ENV.leaseSeconds in variables)
    return timings.processorTimeoutSeconds ?? templateTimeout;
  if (receiverSettings.ENV.leaseSeconds in variables)
    return timings.receiverTimeoutSeconds ?? templateTimeout;
  return templateTimeout;
}

/** The function's template environment, adapted to run against the local servers. */
export function localEnvironment(
  variables: Readonly<Record<string, string>>,
  env: NodeJS.ProcessEnv,
  context: LocalEnvironmentContext,
): Record<string, string> {
  const result: Record<string, string> = { ...variables };
  // Secrets come from environment variables locally (Secrets Manager is not emulated).
  if (receiverSettings.ENV.secretArnsJson in result) {
    delete result[receiverSettings.ENV.secretArnsJson];
    // The function's providers: the built-in ones and those its template configures. The template
    // leaves out development secrets: this process's registry has them (the same
    // WEBHOOK_HMAC_PROVIDERS synthesized the template).
    const registry = withProviders(configuredProviders(variables));
    for (const provider of Object.values(registry.PROVIDERS)) {
      result[provider.secret.envVar] = localSecrets(getProvider(provider.id) ?? provider, env).join(',');
      // Per-account secrets (docs/rules.md, "Tenancy") pass through as given.
      const perAccount = env[accountSecretsEnvVar(provider.id)];
      if (perAccount !== undefined) result[accountSecretsEnvVar(provider.id)] = perAccount;
    }
  }
  // The processor's effect adapters: those without a URL call the effects sink (`POST /<name>`),
  // which answers a repeated Idempotency-Key with the first result for the adapters that declare so.
  const effects = processorSettings.ENV.effects;
  if (result[effects] !== undefined)
    result[effects] = localEffects(result[effects], context.sink, context.processorTimeoutSeconds, env);
  if (context.leaseOverride !== undefined) {
    const receiverLease = receiverSettings.ENV.leaseSeconds;
    if (receiverLease in result) result[receiverLease] = String(context.leaseOverride);
    const processingLease = processorSettings.ENV.leaseSeconds;
    if (processingLease in result) result[processingLease] = String(context.leaseOverride);
  }
  const maxReceiveCount = processorSettings.ENV.maxReceiveCount;
  if (context.maxReceiveOverride !== undefined && maxReceiveCount in result) {
    result[maxReceiveCount] = String(context.maxReceiveOverride);
  }
  // The sweeper's graces, shortened for a local run or a test (docs/rules.md, "The sweeper").
  for (const name of SWEEPER_OVERRIDES) {
    if (name in result && env[name]?.trim()) result[name] = String(env[name]).trim();
  }
  const faultPoints = env[FAULT_POINTS.name];
  if (faultPoints) {
    result[FAULT_POINTS.name] = faultPoints;
    // Shared across the function's processes, so a count of 1 fires once for the whole stack.
    result[FAULT_POINTS_STATE_DIR.name] = context.faultStateDirectory;
  }
  return {
    ...result,
    AWS_REGION: LOCAL_REGION,
    AWS_DEFAULT_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: context.dynamoEndpoint,
    AWS_ENDPOINT_URL_SQS: context.sqsEndpoint,
    AWS_ENDPOINT_URL_S3: context.s3Endpoint,
    // s3rver serves path-style URLs only.
    ...(ARCHIVE_BUCKET.name in result ? { [ARCHIVE_FORCE_PATH_STYLE.name]: 'true' } : {}),
    AWS_LAMBDA_FUNCTION_NAME: context.functionName,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}

/** What the API's URL resolves to locally (its Ref is `local`). */
const LOCAL_API_HOST = `https://local.execute-api.${LOCAL_REGION}.amazonaws.com`;

/** `value` with the API's deployed URL replaced by the local server's (`baseUrl`). */
function localApiUrl(value: string, baseUrl: string): string {
  return value.startsWith(LOCAL_API_HOST) ? baseUrl + value.slice(LOCAL_API_HOST.length) : value;
}

/** The stack's outputs, resolved to the local resources; API URLs point at the local server. */
function localOutputs(
  template: CfnTemplate,
  resolver: IntrinsicResolver,
  baseUrl: string,
  extra: Record<string, string>,
): Record<string, string> {
  const outputs: Record<string, string> = {};
  for (const [name, output] of Object.entries(template.Outputs ?? {})) {
    let value: string;
    try {
      value = String(resolver.resolve(output.Value));
    } catch {
      continue; // an output about something not emulated
    }
    value = localApiUrl(value, baseUrl);
    if (value.startsWith('https://console.aws.amazon.com') || value.includes('.console.aws.amazon.com'))
      continue;
    outputs[name] = value;
  }
  // An app's own stack may declare none of the construct's outputs (no `webhookOutputs`): the CLI
  // and `webhooks send` find the stack by these names, so the local file has them whatever the app.
  for (const [name, value] of Object.entries(receiverOutputs(template, resolver, baseUrl)))
    outputs[name] ??= value;
  return { ...outputs, ...extra };
}
