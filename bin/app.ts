#!/usr/bin/env node
/**
 * The repository's CDK app: the example app's stack (examples/payments), checked by cdk-nag's AWS
 * Solutions rules on every synth. `npx cdk deploy -c alarmEmail=ops@example.com` subscribes an
 * address to the alarms; `-c ledgerUrl=... -c mailerUrl=...` point the example's effects somewhere.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { PaymentsExampleStack } from '../examples/payments/stack.js';

const app = new App();
const context = (name: string): string | undefined => {
  const value: unknown = app.node.tryGetContext(name);
  return typeof value === 'string' && value ? value : undefined;
};
const alarmEmail = context('alarmEmail');
const ledgerUrl = context('ledgerUrl');
const mailerUrl = context('mailerUrl');
new PaymentsExampleStack(app, 'IdempotentWebhooks', {
  receiver: alarmEmail ? { alarmEmail } : {},
  effectUrls: { ...(ledgerUrl ? { ledger: ledgerUrl } : {}), ...(mailerUrl ? { mailer: mailerUrl } : {}) },
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
