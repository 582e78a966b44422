/**
 * Synthesizes the example app's stack (examples/payments/stack.ts, what bin/app.ts deploys), or with
 * `bare` the construct with no extension props (lib/webhook-stack.ts), for assertion tests. Bundling is skipped unless asked for
 * (`aws:cdk:bundling-stacks: []`): the template is the same, only the asset hashes differ, and the
 * bundles themselves are checked in bundle.test.ts. CDK's built-in CloudFormation validation is off
 * unless asked for too; nag.test.ts runs it once.
 */
import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IConstruct } from 'constructs';
import { PaymentsExampleStack, type PaymentsExampleStackProps } from '../../examples/payments/stack.js';
import {
  IdempotentWebhookReceiver,
  type IdempotentWebhookReceiverProps,
} from '../../lib/idempotent-webhook-receiver.js';
import { IdempotentWebhooksStack } from '../../lib/webhook-stack.js';

export interface SynthesizedStack {
  readonly app: App;
  readonly stack: PaymentsExampleStack | IdempotentWebhooksStack;
  readonly template: Template;
  /**
   * The CloudFormation logical id of a construct's (or its default child's) resource; fails the
   * test for a construct that is not there.
   */
  logicalId(construct: IConstruct | undefined): string;
}

export interface SynthesizeOptions {
  readonly props?: IdempotentWebhookReceiverProps;
  /** The example's effect URLs (ignored with `bare`). @default none */
  readonly effectUrls?: PaymentsExampleStackProps['effectUrls'];
  /** The construct with its defaults and `props` only: no business tables, effects or processorEntry. @default false */
  readonly bare?: boolean;
  /** Run esbuild. @default false */
  readonly bundle?: boolean;
  /** Run CDK's built-in CloudFormation validation (seconds of WebAssembly per synth). @default false */
  readonly cfnValidation?: boolean;
}

export function synthesize(options: SynthesizeOptions = {}): SynthesizedStack {
  const app = new App({
    context: options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] },
    builtinCloudFormationValidation: options.cfnValidation ?? false,
  });
  const stack = options.bare
    ? new IdempotentWebhooksStack(app, 'TestWebhooks', {
        ...(options.props ? { receiver: options.props } : {}),
      })
    : new PaymentsExampleStack(app, 'TestWebhooks', {
        ...(options.props ? { receiver: options.props } : {}),
        ...(options.effectUrls ? { effectUrls: options.effectUrls } : {}),
      });
  const template = Template.fromStack(stack);
  return {
    app,
    stack,
    template,
    logicalId: (construct) => {
      if (construct === undefined) throw new Error('no such construct in the stack');
      const element = (construct.node.defaultChild ?? construct) as CfnElement;
      // Resolved, so an overridden id (the example's tables keep their pre-0.2 ids) is the one seen.
      return Stack.of(construct).resolve(element.logicalId) as string;
    },
  };
}

export type Json = Record<string, unknown>;

/** The statements of every AWS::IAM::Policy attached to a role (by the role's logical id). */
export function statementsOfRole(template: Template, roleLogicalId: string): Json[] {
  const policies = template.findResources('AWS::IAM::Policy');
  return Object.values(policies)
    .filter((policy) =>
      ((policy.Properties as Json).Roles as Json[]).some((role) => role.Ref === roleLogicalId),
    )
    .flatMap((policy) => ((policy.Properties as Json).PolicyDocument as Json).Statement as Json[]);
}

export const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** `{"Fn::GetAtt": [id, "Arn"]}` */
export const arnOf = (logicalId: string) => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });

/** The environment variables of a function resource. */
export function environmentOf(template: Template, functionLogicalId: string): Json {
  const fn = template.toJSON().Resources[functionLogicalId] as Json;
  return ((fn.Properties as Json).Environment as Json).Variables as Json;
}

/** Renders an `Fn::Join` (or a plain string) with tokens as `<Ref:id>` / `<GetAtt:id.attr>`. */
export function renderJoin(value: unknown): string {
  if (typeof value === 'string') return value;
  const object = value as Json;
  if (object.Ref) return `<Ref:${object.Ref}>`;
  if (object['Fn::GetAtt']) return `<GetAtt:${(object['Fn::GetAtt'] as string[]).join('.')}>`;
  const join = object['Fn::Join'] as [string, unknown[]] | undefined;
  if (join) return join[1].map(renderJoin).join(join[0]);
  return JSON.stringify(value);
}

/** Builds the construct only (no synth, no bundling): enough for the checks its constructor makes. */
export function buildReceiver(props: IdempotentWebhookReceiverProps): IdempotentWebhookReceiver {
  return new IdempotentWebhookReceiver(
    new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'PropsCheck'),
    'Webhooks',
    props,
  );
}

/** One of the example's business tables (`payments`, `orders`, `resources`). */
export function exampleTable(s: SynthesizedStack, name: string): ITable {
  const table = s.stack.webhooks.businessTables[name];
  if (!table) throw new Error(`the synthesized stack has no business table ${name}`);
  return table;
}
