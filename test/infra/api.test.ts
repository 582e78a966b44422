/** The HTTP API: routes, throttling, access logs, and the webhook URL outputs. */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_IDS } from '../../lambdas/providers/types.js';
import { providerPascal } from '../../lib/constructs/naming.js';
import { renderJoin, type SynthesizedStack, synthesize } from './support.js';

describe('webhook HTTP API', () => {
  let s: SynthesizedStack;
  let apiId: string;
  beforeAll(() => {
    s = synthesize();
    apiId = s.logicalId(s.stack.webhooks.httpApi);
  });

  it.each(PROVIDER_IDS)('routes POST /webhooks/%s to the receiver', (provider) => {
    s.template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      ApiId: { Ref: apiId },
      RouteKey: `POST /webhooks/${provider}`,
    });
  });

  it('has exactly one route per provider and no catch-all route', () => {
    const routeKeys = Object.values(s.template.findResources('AWS::ApiGatewayV2::Route')).map(
      (route) => route.Properties.RouteKey,
    );
    expect(routeKeys.sort()).toEqual(PROVIDER_IDS.map((p) => `POST /webhooks/${p}`).sort());
  });

  it('sends every route to the receiver Lambda with payload format 2.0', () => {
    s.template.resourceCountIs('AWS::ApiGatewayV2::Integration', 1);
    s.template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      IntegrationType: 'AWS_PROXY',
      PayloadFormatVersion: '2.0',
      IntegrationUri: { 'Fn::GetAtt': [s.logicalId(s.stack.webhooks.receiverFunction), 'Arn'] },
    });
  });

  it('leaves the routes without an authorizer: deliveries are authenticated by signature in the Lambda', () => {
    s.template.allResourcesProperties('AWS::ApiGatewayV2::Route', { AuthorizationType: 'NONE' });
  });

  it('throttles the default stage at 1,000 requests per second with a burst of 2,000 (sized for bursts)', () => {
    s.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 },
    });
  });

  it('writes access logs to a log group kept for one month', () => {
    const stage = Object.values(s.template.findResources('AWS::ApiGatewayV2::Stage'))[0];
    const destination = stage?.Properties.AccessLogSettings.DestinationArn['Fn::GetAtt'][0] as string;
    expect(s.template.toJSON().Resources[destination].Properties.RetentionInDays).toBe(30);
  });

  it('keeps headers (signatures, tokens) out of the access log format', () => {
    s.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      AccessLogSettings: { Format: Match.stringLikeRegexp('requestId') },
    });
    const stage = Object.values(s.template.findResources('AWS::ApiGatewayV2::Stage'))[0];
    expect(stage?.Properties.AccessLogSettings.Format).not.toMatch(/header|\$input|body/i);
  });

  it.each(PROVIDER_IDS)('outputs the full https URL of the %s route', (provider) => {
    const output = s.template.findOutputs(`${providerPascal(provider)}WebhookUrl`);
    const url = renderJoin(output[`${providerPascal(provider)}WebhookUrl`]?.Value);
    expect(url).toBe(
      `https://<Ref:${apiId}>.execute-api.<Ref:AWS::Region>.<Ref:AWS::URLSuffix>/webhooks/${provider}`,
    );
  });
});
