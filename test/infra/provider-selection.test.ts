/**
 * The construct's `builtInProviders` (which built-in providers are served) and `publicBaseUrl` (the
 * URL providers deliver to, which Square and Twilio sign).
 */
import { describe, expect, it } from 'vitest';
import { environmentOf, renderJoin, synthesize } from './support.js';

describe('builtInProviders', () => {
  const s = synthesize({ props: { builtInProviders: ['stripe', 'square'] } });
  const json = s.template.toJSON();

  it('routes, outputs and keeps secrets for the chosen ones only', () => {
    const routes = Object.values(s.template.findResources('AWS::ApiGatewayV2::Route')).map(
      (route) => route.Properties.RouteKey,
    );
    expect(routes.sort()).toEqual(['POST /webhooks/square', 'POST /webhooks/stripe']);
    expect(Object.keys(s.template.findResources('AWS::SecretsManager::Secret'))).toHaveLength(2);
    const webhookOutputs = Object.keys(json.Outputs).filter((name) => name.endsWith('WebhookUrl'));
    expect(webhookOutputs.sort()).toEqual(['SquareWebhookUrl', 'StripeWebhookUrl']);
    const arns = renderJoin(
      environmentOf(s.template, s.logicalId(s.stack.webhooks.receiverFunction)).WEBHOOK_SECRET_ARNS,
    );
    expect(Object.keys(JSON.parse(arns.replace(/<Ref:[^>]+>/g, 'arn')))).toEqual(['stripe', 'square']);
  });

  it('refuses an id that is no built-in provider, naming them', () => {
    expect(() => synthesize({ props: { builtInProviders: ['stripe', 'strpe' as 'stripe'] } })).toThrow(
      /builtInProviders: "strpe" is not a built-in provider \(they are stripe, github, shopify, asaas, standard, paddle, slack, square, twilio, discord\)/,
    );
    expect(() => synthesize({ props: { builtInProviders: ['stripe', 'stripe'] } })).toThrow(
      'builtInProviders: an id is listed twice',
    );
  });

  it('refuses options for a built-in provider that is not served', () => {
    expect(() => synthesize({ props: { builtInProviders: ['stripe'], providers: { github: {} } } })).toThrow(
      /providers: unknown provider "github".*builtInProviders/,
    );
  });
});

describe('publicBaseUrl', () => {
  it("defaults to the API's endpoint: the receiver's PUBLIC_BASE_URL is the outputs' base", () => {
    const s = synthesize();
    const env = environmentOf(s.template, s.logicalId(s.stack.webhooks.receiverFunction));
    const base = renderJoin(env.PUBLIC_BASE_URL);
    expect(base).toMatch(/^https:\/\/<Ref:\w+>\.execute-api\.<Ref:AWS::Region>\.<Ref:AWS::URLSuffix>\/$/);
    const square = renderJoin(s.template.toJSON().Outputs.SquareWebhookUrl.Value);
    expect(square).toBe(`${base}webhooks/square`);
  });

  it('is what the outputs show and what the receiver checks signed URLs against', () => {
    const s = synthesize({ props: { publicBaseUrl: 'https://hooks.example.com/api/' } });
    const env = environmentOf(s.template, s.logicalId(s.stack.webhooks.receiverFunction));
    expect(env.PUBLIC_BASE_URL).toBe('https://hooks.example.com/api/');
    expect(s.template.toJSON().Outputs.SquareWebhookUrl.Value).toBe(
      'https://hooks.example.com/api/webhooks/square',
    );
    expect(s.stack.webhooks.webhookUrls.stripe).toBe('https://hooks.example.com/api/webhooks/stripe');
  });

  it('refuses a base that is no http(s) URL, or has a query, naming the prop', () => {
    expect(() => synthesize({ props: { publicBaseUrl: 'hooks.example.com' } })).toThrow(
      /publicBaseUrl must be an absolute URL/,
    );
    expect(() => synthesize({ props: { publicBaseUrl: 'https://hooks.example.com/?a=1' } })).toThrow(
      /publicBaseUrl must have no query or fragment/,
    );
  });
});
