#!/usr/bin/env node
/**
 * The repository's CDK app: the example app's stack (examples/payments), checked by cdk-nag's AWS
 * Solutions rules on every synth. `npx cdk deploy -c alarmEmail=ops@example.com` subscribes an
 * address to the alarms; `-c ledgerUrl=... -c mailerUrl=...` point the example's effects somewhere.
 * `WEBHOOK_HMAC_PROVIDERS` (JSON, or `@file[,@file]`) adds providers by configuration, for
 * `npm start` and `cdk deploy` alike (docs/configured-providers.md).
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { PaymentsExampleStack } from '../examples/payments/stack.js';
import { HMAC_PROVIDERS_ENV, readHmacProviderConfigs } from '../lambdas/providers/configured.js';

const app = new App();
const context = (name: string): string | undefined => {
  const value: unknown = app.node.tryGetContext(name);
  return typeof value === 'string' && value ? value : undefined;
};
const alarmEmail = context('alarmEmail');
const ledgerUrl = context('ledgerUrl');
const mailerUrl = context('mailerUrl');
const hmacProviders = readHmacProviderConfigs(process.env[HMAC_PROVIDERS_ENV]);
new PaymentsExampleStack(app, 'IdempotentWebhooks', {
  receiver: { ...(alarmEmail ? { alarmEmail } : {}), ...(hmacProviders.length ? { hmacProviders } : {}) },
  effectUrls: { ...(ledgerUrl ? { ledger: ledgerUrl } : {}), ...(mailerUrl ? { mailer: mailerUrl } : {}) },
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
