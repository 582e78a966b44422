/**
 * One Secrets Manager secret per provider, created holding the placeholder `{"current":"REPLACE_ME"}`
 * (which the receiver never accepts: the provider answers `500 not_configured` until the operator
 * puts the real value). The receiver gets the ARNs in `WEBHOOK_SECRET_ARNS`, never the values.
 */
import { RemovalPolicy, SecretValue, Validations } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { ProviderRegistry, ProviderTable } from '../../lambdas/providers/index.js';
import type { ProviderId } from '../../lambdas/providers/types.js';
import { SECRET_PLACEHOLDER } from '../../lambdas/shared/secrets-manager.js';
import { providerPascal } from './naming.js';

export interface WebhookSecretsProps {
  /** The providers to hold a secret for. */
  readonly registry: ProviderRegistry<string>;
  /** @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
}

export class WebhookSecrets extends Construct {
  public readonly secrets: ProviderTable<secretsmanager.Secret>;

  constructor(scope: Construct, id: string, props: WebhookSecretsProps) {
    super(scope, id);
    const secrets: Record<ProviderId, secretsmanager.Secret> = {};
    const providers = Object.values(props.registry.PROVIDERS);
    const issuers = providers.map((provider) => provider.name).join(', ');
    for (const { id: provider, name, secret: about } of providers) {
      const secret = new secretsmanager.Secret(this, providerPascal(provider), {
        description:
          `${name} webhook signing secret for the idempotent webhook receiver. ` +
          `Put JSON {"current":"<secret>"} here: ${about.hint}. While rotating, ` +
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
          `The value is issued by the webhook provider (the ${issuers} dashboards), ` +
          'so no rotation Lambda can rotate it; operators rotate it by hand with the current/previous ' +
          'procedure in docs/deploy.md.',
      });
      secrets[provider] = secret;
    }
    // Every registry holds the built-in providers: their secrets are always there.
    this.secrets = secrets as ProviderTable<secretsmanager.Secret>;
  }
}
