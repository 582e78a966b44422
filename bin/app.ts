#!/usr/bin/env node
/**
 * The CDK app: the example stack, checked by cdk-nag's AWS Solutions rules on every synth.
 * `npx cdk deploy -c alarmEmail=ops@example.com` subscribes an address to the alarms.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { IdempotentWebhooksStack } from '../lib/webhook-stack.js';

const app = new App();
const alarmEmail: unknown = app.node.tryGetContext('alarmEmail');
new IdempotentWebhooksStack(app, 'IdempotentWebhooks', {
  receiver: typeof alarmEmail === 'string' && alarmEmail ? { alarmEmail } : {},
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
