/**
 * One Secrets Manager secret per provider, created holding the placeholder `{"current":"REPLACE_ME"}`
 * (which the receiver never accepts: the provider answers `500 not_configured` until the operator
 * puts the real value). The receiver gets the ARNs in `WEBHOOK_SECRET_ARNS`, never the values.
 */
import { RemovalPolicy, SecretValue, Validations } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { PROVIDERS } from '../../lambdas/providers/index.js';
import { PROVIDER_IDS, type ProviderId } from '../../lambdas/providers/types.js';
import { SECRET_PLACEHOLDER } from '../../lambdas/shared/secrets-manager.js';
import { providerPascal } from './naming.js';

/** What the operator puts in each provider's secret, and where the provider shows it. */
const SECRET_HINTS: Readonly<Record<ProviderId, string>> = {
  stripe: 'the endpoint signing secret (whsec_...) from Developers > Webhooks > your endpoint',
  github: "the webhook's secret, as typed in the repository or organization webhook settings",
  shopify: "the app's client secret (Partners dashboard / app settings > API credentials)",
  asaas: 'the webhook authentication token (asaas-access-token) set in the Asaas webhook settings',
  standard:
    'the endpoint signing secret (whsec_..., base64 after the prefix) from the Svix / Standard Webhooks sender',
};

export interface WebhookSecretsProps {
  /** @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
}

export class WebhookSecrets extends Construct {
  public readonly secrets: Readonly<Record<ProviderId, secretsmanager.Secret>>;

  constructor(scope: Construct, id: string, props: WebhookSecretsProps = {}) {
    super(scope, id);
    const secrets = {} as Record<ProviderId, secretsmanager.Secret>;
    for (const provider of PROVIDER_IDS) {
      const secret = new secretsmanager.Secret(this, providerPascal(provider), {
        description:
          `${PROVIDERS[provider].name} webhook signing secret for the idempotent webhook receiver. ` +
          `Put JSON {"current":"<secret>"} here: ${SECRET_HINTS[provider]}. While rotating, ` +
          `{"current":"<new>","previous":"<old>"} accepts both. "${SECRET_PLACEHOLDER}" is never accepted.`,
        // A placeholder, not a secret: it is in the template on purpose, and the receiver refuses it.
        // CloudFormation only writes it on creation (or if this text changes): a later deploy leaves
        // the value the operator put untouched.
        secretStringValue: SecretValue.unsafePlainText(JSON.stringify({ current: SECRET_PLACEHOLDER })),
        removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      });
      Validations.of(secret).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason:
          'The value is issued by the webhook provider (Stripe, GitHub, Shopify, Asaas, Svix dashboards), ' +
          'so no rotation Lambda can rotate it; operators rotate it by hand with the current/previous ' +
          'procedure in docs/deploy.md.',
      });
      secrets[provider] = secret;
    }
    this.secrets = secrets;
  }
}
