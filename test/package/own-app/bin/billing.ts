// bin/billing.ts
import { App } from 'aws-cdk-lib';
import { BillingStack } from '../lib/billing-stack';

new BillingStack(new App(), 'Billing');
