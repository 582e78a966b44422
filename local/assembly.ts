/**
 * What the local runner needs to know of any app's cloud assembly: which stack holds the
 * IdempotentWebhookReceiver construct (an app may have several stacks, or a Stage's nested ones),
 * and the outputs the CLI reads by name when the stack does not declare them itself (an app's own
 * `Stack` without `webhookOutputs`): the local runner writes them anyway, so `webhooks send` and
 * `webhooks inspect` work against any app.
 */
import { tableOutputName } from '../lambdas/processor/extension-names.js';
import * as processorSettings from '../lambdas/processor/settings.js';
import { webhookUrlOutputId } from '../lambdas/shared/naming.js';
// Not the receiver's settings module: it loads the provider registry, which a bad
// WEBHOOK_HMAC_PROVIDERS fails before the runner can answer it in one line.
import {
  ARCHIVE_BUCKET,
  CLAIMS_TABLE,
  EVENT_QUEUE_URL,
  WEBHOOK_SECRET_ARNS,
} from '../lambdas/shared/settings.js';
import {
  type CfnResource,
  type CfnTemplate,
  type IntrinsicResolver,
  listStacks,
  readStackTemplate,
  resourcesOfType,
  type StackArtifact,
  stackNamed,
} from './template.js';

/** A failure the runner reports in one line (no stack trace): what is wrong and what to do. */
export class LocalRunError extends Error {
  override readonly name = 'LocalRunError';
}

const variablesOf = (fn: CfnResource): Record<string, unknown> =>
  ((fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ??
    {}) as Record<string, unknown>;

/**
 * The construct's receiver functions: the only functions given both the claims table and the secret
 * ARNs (the processor and the sweeper have no secrets, an app's own functions none of these names).
 */
export function receiverFunctions(template: CfnTemplate): Array<[string, CfnResource]> {
  return resourcesOfType(template, 'AWS::Lambda::Function').filter(([, fn]) => {
    const variables = variablesOf(fn);
    return CLAIMS_TABLE.name in variables && WEBHOOK_SECRET_ARNS.name in variables;
  });
}

const describe = (stack: StackArtifact): string =>
  stack.displayName === stack.id ? stack.id : `${stack.id} (${stack.displayName})`;

/**
 * The stack to run: the one holding the construct, or the one `--stack` names among those. A
 * LocalRunError when there is none, or several and no choice.
 */
export function chooseReceiverStack(outdir: string, wanted?: string): StackArtifact {
  const stacks = listStacks(outdir);
  const holding = stacks.filter((stack) => receiverFunctions(readStackTemplate(stack)).length > 0);
  const names = (list: readonly StackArtifact[]) => list.map(describe).join(', ') || 'none';
  if (wanted !== undefined) {
    const named = stacks.find((stack) => stackNamed(stack, wanted));
    if (!named) throw new LocalRunError(`no stack ${wanted} in ${outdir} (stacks: ${names(stacks)})`);
    if (!holding.includes(named))
      throw new LocalRunError(
        `stack ${wanted} holds no IdempotentWebhookReceiver (the stacks that do: ${names(holding)})`,
      );
    return named;
  }
  const [only, ...more] = holding;
  if (!only)
    throw new LocalRunError(
      `no stack in ${outdir} holds an IdempotentWebhookReceiver (stacks: ${names(stacks)})`,
    );
  if (more.length > 0)
    throw new LocalRunError(
      `stacks ${names(holding)} each hold an IdempotentWebhookReceiver: pick one with --stack NAME`,
    );
  return only;
}

/**
 * The outputs `webhookOutputs` (lib/webhook-stack.ts) would declare, resolved locally from the
 * construct's resources: `<Provider>WebhookUrl` per route, `ClaimsTableName`, `EventQueueUrl`,
 * `DeadLetterQueueUrl`, `ArchiveBucketName`, `<Table>TableName`. What cannot be resolved is left out.
 */
export function receiverOutputs(
  template: CfnTemplate,
  resolver: IntrinsicResolver,
  baseUrl: string,
): Record<string, string> {
  const outputs: Record<string, string> = {};
  const resolved = (value: unknown): string | undefined => {
    try {
      const result = resolver.resolve(value);
      return typeof result === 'string' && result !== '' ? result : undefined;
    } catch {
      return undefined;
    }
  };
  const set = (name: string, value: string | undefined) => {
    if (value !== undefined && !(name in outputs)) outputs[name] = value;
  };
  for (const [, route] of resourcesOfType(template, 'AWS::ApiGatewayV2::Route')) {
    const match = /^POST (\/webhooks\/([^/\s]+))$/.exec(String(route.Properties?.RouteKey ?? ''));
    if (match?.[1] && match[2]) set(webhookUrlOutputId(match[2]), baseUrl + match[1]);
  }
  const [receiver] = receiverFunctions(template);
  if (!receiver) return outputs;
  const variables = variablesOf(receiver[1]);
  set('ClaimsTableName', resolved(variables[CLAIMS_TABLE.name]));
  const processor = resourcesOfType(template, 'AWS::Lambda::Function').find(
    ([, fn]) => processorSettings.ENV.tableNames in variablesOf(fn),
  );
  const tables = processor
    ? resolved(variablesOf(processor[1])[processorSettings.ENV.tableNames])
    : undefined;
  for (const [name, table] of Object.entries(tables ? (JSON.parse(tables) as Record<string, string>) : {}))
    set(tableOutputName(name), table);
  const queueUrl = resolved(variables[EVENT_QUEUE_URL.name]);
  set('EventQueueUrl', queueUrl);
  // The event queue's redrive policy names its DLQ by ARN; the DLQ's Ref is its URL.
  const queue = resourcesOfType(template, 'AWS::SQS::Queue').find(
    ([id]) => queueUrl !== undefined && resolved({ Ref: id }) === queueUrl,
  );
  const dlqArn = (queue?.[1].Properties?.RedrivePolicy as { deadLetterTargetArn?: unknown } | undefined)
    ?.deadLetterTargetArn;
  const dlq = (dlqArn as { 'Fn::GetAtt'?: unknown[] } | undefined)?.['Fn::GetAtt']?.[0];
  if (typeof dlq === 'string') set('DeadLetterQueueUrl', resolved({ Ref: dlq }));
  set('ArchiveBucketName', resolved(variables[ARCHIVE_BUCKET.name]));
  return outputs;
}
