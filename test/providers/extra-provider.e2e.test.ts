/**
 * Issue 13's "done when": a provider is one file plus one registry line. Acme
 * (test/fixtures/providers/acme.ts) is not in the repository's registry; this file adds it with
 * the one line below (the registry line, lambdas/providers/built-in.ts, mocked), and drives it over HTTP
 * through the receiver Lambda handler into the queue and through the processor handler, on DynamoDB
 * Local and the SQS emulator. Nothing else learns about Acme: routes, settings, secrets, forwarded
 * headers, samples and signing all come from its module.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EXAMPLE_APPLIERS } from '../../examples/payments/appliers/index.js';
import type { Applier } from '../../lambdas/processor/types.js';
import { getProvider, PROVIDER_IDS } from '../../lambdas/providers/index.js';
import type { ProviderId } from '../../lambdas/providers/types.js';
import type { QueueMessage } from '../../lambdas/queue/event-message.js';
import { createReceiverHandler } from '../../lambdas/receiver/handler.js';
import { StaticSecretSource } from '../../lambdas/shared/secrets.js';
import { startHttpApi } from '../../local/http-api.js';
import { sampleDelivery } from '../../local/samples.js';
import { acmeProvider } from '../fixtures/providers/acme.js';
import { peekMessageBody } from '../helpers/aws.js';
import { createPipelineHarness, type PipelineHarness } from '../helpers/pipeline-harness.js';

// The one registry line: the repository's providers plus Acme.
vi.mock('../../lambdas/providers/built-in.js', async (original) => {
  const { BUILT_IN_PROVIDERS } = await original<typeof import('../../lambdas/providers/built-in.js')>();
  const { acmeProvider } = await import('../fixtures/providers/acme.js');
  return { BUILT_IN_PROVIDERS: [...BUILT_IN_PROVIDERS, acmeProvider] };
});

const ACME = 'acme' as ProviderId;
const SECRET = 'acme-endpoint-secret';

/** Acme widgets land in the Resources table, keyed by tenant and widget. */
const acmeWidget: Applier = {
  async plan(event, context) {
    const widget = event.payload.data as { id?: string; colour?: string } | undefined;
    if (!widget?.id) return { outcome: 'noop' };
    const pk = `acme:${event.account}:widget:${widget.id}`;
    const order = { at: Math.floor(Date.parse(event.receivedAt) / 1000), rank: 0, eventId: event.eventId };
    const { newer } = await context.read('resources', pk, order);
    if (!newer) return { outcome: 'stale' };
    return {
      writes: [
        {
          table: 'resources',
          pk,
          order,
          attributes: { provider: 'acme', kind: 'widget', colour: widget.colour },
        },
      ],
    };
  },
};

const context = {
  functionName: 'receiver',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:receiver',
  memoryLimitInMB: '256',
  awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
  getRemainingTimeInMillis: () => 10_000,
} as unknown as Context;

let pipeline: PipelineHarness;
let api: { url: string; stop(): Promise<void> };

beforeAll(async () => {
  pipeline = await createPipelineHarness({
    appliers: { ...EXAMPLE_APPLIERS, acme: { 'widget.*': acmeWidget } },
  });
  const handler = createReceiverHandler({
    deps: () => ({ ...pipeline.receiver.deps, secrets: new StaticSecretSource({ [ACME]: [SECRET] }) }),
    logger: new Logger({ serviceName: 'webhook-receiver', logLevel: 'SILENT' }),
  });
  api = await startHttpApi({
    port: 0,
    routes: [
      {
        method: 'POST',
        path: '/webhooks/{provider}',
        invoke: (event: APIGatewayProxyEventV2) => handler(event, context),
      },
    ],
  });
});

afterAll(async () => {
  await api?.stop();
  await pipeline?.stop();
});

async function post(delivery: { body: string; headers: Record<string, string> }) {
  const response = await fetch(`${api.url}/webhooks/acme`, {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body,
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

describe('a provider added with one file and one registry line', () => {
  it('is in the registry the whole pipeline reads', () => {
    expect(PROVIDER_IDS).toContain('acme');
    expect(getProvider('acme')).toBe(acmeProvider);
    expect(getProvider('stripe')?.id).toBe('stripe');
  });

  it('accepts a signed delivery over HTTP, absorbs its replay, refuses a tampered body, and processes it once', async () => {
    const delivery = sampleDelivery(ACME, { secret: SECRET, objectId: 'wid_1', eventId: 'dlv-1' });

    const first = await post(delivery);
    expect(first).toMatchObject({ status: 200, json: { outcome: 'accepted', key: 'acme:main:dlv-1' } });

    // The queue message carries Acme's forwarded headers (its `headers.forward`), never its signature.
    const message = JSON.parse(
      await peekMessageBody(pipeline.receiver.sqs, pipeline.receiver.queueUrl),
    ) as QueueMessage;
    expect(message).toMatchObject({
      provider: 'acme',
      eventId: 'dlv-1',
      eventType: 'widget.painted',
      objectId: 'wid_1',
    });
    expect(message.headers).toEqual({
      'content-type': 'application/json',
      'user-agent': 'Acme-Webhooks/1.0',
      'acme-delivery': 'dlv-1',
      'acme-attempt': '1',
    });

    const replay = await post(delivery);
    expect(replay).toMatchObject({ status: 200, json: { outcome: 'duplicate', deliveries: 2 } });

    const tampered = await post({ ...delivery, body: delivery.body.replace('teal', 'pink') });
    expect(tampered).toMatchObject({ status: 401, json: { outcome: 'invalid_signature' } });
    const unsigned = await post({
      ...delivery,
      headers: { ...delivery.headers, 'acme-signature': 't=1,v1=00' },
    });
    expect(unsigned.status).toBe(401);

    await pipeline.drainQueue();
    expect(await pipeline.receiver.claim('acme:main:dlv-1')).toMatchObject({ status: 'DONE', deliveries: 2 });
    expect(await pipeline.row('resources', 'acme:main:widget:wid_1')).toMatchObject({
      provider: 'acme',
      kind: 'widget',
      colour: 'teal',
    });
    expect(await pipeline.receiver.claims()).toHaveLength(1);
  });

  it('refuses a delivery signed with another secret', async () => {
    const delivery = sampleDelivery(ACME, { secret: 'not-the-secret' });
    expect(await post(delivery)).toMatchObject({ status: 401, json: { reason: 'signature_mismatch' } });
  });
});
