/**
 * Paddle, Slack, Square, Twilio and Discord over HTTP against `npm start`, signed as each provider signs (the
 * provider tests cross-check those rules against the official libraries): accepted once, absorbed on
 * redelivery, refused when forged, stale or tampered; Slack's handshake answered with nothing
 * claimed; Twilio answered in TwiML; Discord's PING answered with PONG and its interactions deferred; Square's and Twilio's signed URLs taken from the stack's own URL, never from the Host header.
 */
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISCORD_DEV_PUBLIC_KEY } from '../../lambdas/providers/discord.js';
import { LOCAL_CREDENTIALS } from '../../local/emulators.js';
import { sampleDelivery } from '../../local/samples.js';
import { parseSendArgs, sendSample } from '../../local/send.js';
import { type LocalStackProcess, startLocalStackProcess } from '../helpers/local-stack-process.js';
import { TEST_SECRETS } from '../helpers/signing.js';

let stack: LocalStackProcess;
let outputs: Readonly<Record<string, string>>;
let doc: DynamoDBDocumentClient;

beforeAll(async () => {
  stack = await startLocalStackProcess({}, 'webhooks-more-providers');
  outputs = stack.outputs;
  doc = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: 'us-east-1',
      credentials: LOCAL_CREDENTIALS,
      endpoint: outputs.LocalDynamoDbEndpoint,
    }),
  );
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  doc?.destroy();
}, 30_000);

const url = (provider: 'paddle' | 'slack' | 'square' | 'twilio' | 'discord') => {
  const value = outputs[`${provider[0]?.toUpperCase()}${provider.slice(1)}WebhookUrl`];
  if (!value) throw new Error(`no ${provider} URL in the outputs`);
  return value;
};
const post = async (to: string, body: string | Buffer, headers: Record<string, string>) => {
  const response = await fetch(to, { method: 'POST', headers, body });
  const text = await response.text();
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    json: JSON.parse(text) as Record<string, unknown>,
  };
};
const claim = async (pk: string) =>
  (await doc.send(new GetCommand({ TableName: outputs.ClaimsTableName, Key: { pk }, ConsistentRead: true })))
    .Item;
const resource = async (pk: string) =>
  (
    await doc.send(
      new GetCommand({ TableName: outputs.ResourcesTableName, Key: { pk }, ConsistentRead: true }),
    )
  ).Item;
const done = (key: string) =>
  stack.waitFor(`claim ${key} DONE`, async () => {
    const item = await claim(key);
    return item?.status === 'DONE' ? item : undefined;
  });
const claimCount = async () =>
  (
    await doc.send(
      new ScanCommand({ TableName: outputs.ClaimsTableName, Select: 'COUNT', ConsistentRead: true }),
    )
  ).Count ?? 0;
const now = () => Math.floor(Date.now() / 1000);

it('publishes a webhook URL for each', () => {
  for (const provider of ['paddle', 'slack', 'square', 'twilio', 'discord'] as const)
    expect(url(provider)).toMatch(new RegExp(`/webhooks/${provider}$`));
});

describe.each([
  [
    'paddle',
    'transaction.completed',
    'paddle:default:evt_e2e_paddle_1',
    'paddle:default:transaction:txn_e2e_1',
  ],
  ['slack', 'app_mention', 'slack:T061EG9R6:Ev_e2e_slack_1', undefined],
  [
    'square',
    'payment.updated',
    'square:6SSW7HV8K2ST5:e2e-square-1',
    'square:6SSW7HV8K2ST5:payment:SQPAYE2E1',
  ],
] as const)('%s', (provider, type, key, row) => {
  const eventId = key.split(':').at(-1) ?? '';
  const objectId = row?.split(':').at(-1) ?? 'C0E2E';
  const signed = (overrides: { secret?: string; nowSeconds?: number } = {}) =>
    sampleDelivery(provider, {
      type,
      eventId,
      objectId,
      secret: overrides.secret ?? TEST_SECRETS[provider],
      nowSeconds: overrides.nowSeconds ?? now(),
      url: url(provider),
    });

  it('accepts the signed delivery once, absorbs the redelivery, and applies it once', async () => {
    const delivery = signed();
    expect(await post(url(provider), delivery.body, delivery.headers)).toMatchObject({
      status: 200,
      json: { outcome: 'accepted', key },
    });
    expect(await post(url(provider), delivery.body, delivery.headers)).toMatchObject({
      status: 200,
      json: { outcome: 'duplicate', key, deliveries: 2 },
    });
    const completed = await done(key);
    if (row === undefined) {
      // No applier in the example for Slack events: completed as unhandled, nothing written.
      expect(completed).toMatchObject({ outcome: 'unhandled', provider });
    } else {
      expect(completed).toMatchObject({ outcome: 'applied', provider });
      expect(await resource(row)).toMatchObject({ provider, objectId, lastEventId: eventId });
    }
  });

  it('refuses a wrong secret, a tampered body and missing headers with 401, writing nothing', async () => {
    const before = await claimCount();
    const forged = signed({ secret: 'not-the-secret' });
    expect(await post(url(provider), forged.body, forged.headers)).toMatchObject({
      status: 401,
      json: { outcome: 'invalid_signature', reason: 'signature_mismatch' },
    });
    const delivery = signed();
    const tampered = delivery.body.replace(eventId, `${eventId}x`);
    expect(await post(url(provider), tampered, delivery.headers)).toMatchObject({
      status: 401,
      json: { reason: 'signature_mismatch' },
    });
    expect(await post(url(provider), delivery.body, { 'content-type': 'application/json' })).toMatchObject({
      status: 401,
      json: { reason: 'missing_signature' },
    });
    expect(await claimCount()).toBe(before);
  });

  // Square signs no timestamp: a replay of it is a duplicate of its claim.
  if (provider === 'square') return;
  it('refuses a timestamp 10 minutes old or ahead', async () => {
    for (const offset of [-600, 600]) {
      const delivery = signed({ nowSeconds: now() + offset });
      expect(await post(url(provider), delivery.body, delivery.headers)).toMatchObject({
        status: 401,
        json: { reason: 'timestamp_outside_tolerance' },
      });
    }
  });
});

describe("Slack's url_verification handshake", () => {
  it('is answered with its challenge as JSON, with no claim and no message', async () => {
    const before = await claimCount();
    const delivery = sampleDelivery('slack', {
      type: 'url_verification',
      eventId: 'challenge-e2e-3eZbrw1aBm2r',
      secret: TEST_SECRETS.slack,
      nowSeconds: now(),
    });
    const answer = await post(url('slack'), delivery.body, delivery.headers);
    expect(answer).toEqual({
      status: 200,
      type: 'application/json',
      json: { challenge: 'challenge-e2e-3eZbrw1aBm2r' },
    });
    expect(await claimCount()).toBe(before);
  });

  it('is refused with 401 when not signed by Slack', async () => {
    const delivery = sampleDelivery('slack', {
      type: 'url_verification',
      secret: 'not-the-signing-secret',
      nowSeconds: now(),
    });
    expect(await post(url('slack'), delivery.body, delivery.headers)).toMatchObject({
      status: 401,
      json: { outcome: 'invalid_signature', reason: 'signature_mismatch' },
    });
  });
});

describe("Square's signed URL", () => {
  /** POSTs with a Host header of the sender's choosing, as an attacker can. */
  const postWithHost = (host: string, body: string, headers: Record<string, string>) =>
    new Promise<{ status: number; json: Record<string, unknown> }>((resolve, reject) => {
      const target = new URL(url('square'));
      const request = httpRequest(
        {
          hostname: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          headers: { ...headers, host: host },
        },
        (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => {
            text += chunk.toString();
          });
          response.on('end', () => resolve({ status: response.statusCode ?? 0, json: JSON.parse(text) }));
        },
      );
      request.on('error', reject);
      request.end(body);
    });

  it('is the stack URL whatever the Host header says; a signature over a Host-made URL is refused', async () => {
    const genuine = sampleDelivery('square', {
      eventId: 'e2e-square-host-1',
      secret: TEST_SECRETS.square,
      nowSeconds: now(),
      url: url('square'),
    });
    expect(await postWithHost('evil.example', genuine.body, genuine.headers)).toMatchObject({
      status: 200,
      json: { outcome: 'accepted' },
    });
    const hostMade = sampleDelivery('square', {
      eventId: 'e2e-square-host-2',
      secret: TEST_SECRETS.square,
      nowSeconds: now(),
      url: 'http://evil.example/webhooks/square',
    });
    expect(await postWithHost('evil.example', hostMade.body, hostMade.headers)).toMatchObject({
      status: 401,
      json: { reason: 'signature_mismatch' },
    });
  });
});

describe('twilio', () => {
  const messageSid = 'SMe2e0000000000000000000000000001';
  // The event id is `<sid>:<status>`; each part of a key is percent-encoded (lambdas/shared/keys.ts).
  const key = `twilio:AC0123456789abcdef0123456789abcdef:${messageSid}%3Adelivered`;
  const signed = (overrides: { secret?: string; to?: string } = {}) =>
    sampleDelivery('twilio', {
      type: 'message.delivered',
      objectId: messageSid,
      secret: overrides.secret ?? TEST_SECRETS.twilio,
      nowSeconds: now(),
      url: overrides.to ?? url('twilio'),
    });
  const postForm = async (body: string, headers: Record<string, string>) => {
    const response = await fetch(url('twilio'), { method: 'POST', headers, body });
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      outcome: response.headers.get('x-webhook-outcome'),
      text: await response.text(),
    };
  };
  const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';

  it('answers a signed status callback with empty TwiML, absorbs its retry, and applies it once', async () => {
    const delivery = signed();
    expect(delivery.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(await postForm(delivery.body, delivery.headers)).toEqual({
      status: 200,
      type: 'text/xml',
      outcome: 'accepted',
      text: EMPTY_TWIML,
    });
    expect(await postForm(delivery.body, delivery.headers)).toMatchObject({
      status: 200,
      outcome: 'duplicate',
    });
    const completed = await done(key);
    expect(completed).toMatchObject({ outcome: 'applied', provider: 'twilio', deliveries: 2 });
    expect(await resource(`twilio:AC0123456789abcdef0123456789abcdef:message:${messageSid}`)).toMatchObject({
      provider: 'twilio',
      objectId: messageSid,
      status: 'delivered',
    });
  });

  it('keeps a message at its latest state when an earlier status callback arrives after it', async () => {
    const sid = 'SMe2e0000000000000000000000000002';
    const row = `twilio:AC0123456789abcdef0123456789abcdef:message:${sid}`;
    for (const type of ['message.delivered', 'message.sent'] as const) {
      const delivery = sampleDelivery('twilio', {
        type,
        objectId: sid,
        secret: TEST_SECRETS.twilio,
        nowSeconds: now(),
        url: url('twilio'),
      });
      expect(await postForm(delivery.body, delivery.headers)).toMatchObject({
        status: 200,
        outcome: 'accepted',
      });
      await done(`twilio:AC0123456789abcdef0123456789abcdef:${sid}%3A${type.slice('message.'.length)}`);
    }
    expect(await resource(row)).toMatchObject({ status: 'delivered' });
  });

  it('applies a JSON status callback signed by the bodySHA256 of its URL though its content type is not JSON', async () => {
    // Twilio signs a JSON body by its hash in the URL; the content type is not part of what is signed.
    const sid = 'SMe2e0000000000000000000000000003';
    const body = JSON.stringify({
      AccountSid: 'AC0123456789abcdef0123456789abcdef',
      MessageSid: sid,
      MessageStatus: 'delivered',
      ApiVersion: '2010-04-01',
    });
    const to = `${url('twilio')}?bodySHA256=${createHash('sha256').update(body).digest('hex')}`;
    const headers = {
      'content-type': 'text/plain; charset=utf-8',
      'x-twilio-signature': twilio.getExpectedTwilioSignature(TEST_SECRETS.twilio, to, {}),
    };
    expect(twilio.validateRequestWithBody(TEST_SECRETS.twilio, headers['x-twilio-signature'], to, body)).toBe(
      true,
    );
    const response = await fetch(to, { method: 'POST', headers, body });
    expect({ status: response.status, outcome: response.headers.get('x-webhook-outcome') }).toEqual({
      status: 200,
      outcome: 'accepted',
    });
    // The processor reads the body as the receiver did (JSON), so the applier sees the message.
    const completed = await done(`twilio:AC0123456789abcdef0123456789abcdef:${sid}%3Adelivered`);
    expect(completed).toMatchObject({ outcome: 'applied', provider: 'twilio' });
    expect(await resource(`twilio:AC0123456789abcdef0123456789abcdef:message:${sid}`)).toMatchObject({
      provider: 'twilio',
      objectId: sid,
      status: 'delivered',
    });
  });

  it('refuses a wrong token, a tampered parameter, another URL and a missing signature with 401 JSON, writing nothing', async () => {
    const before = await claimCount();
    const forged = signed({ secret: 'not-the-auth-token' });
    const delivery = signed();
    const elsewhere = signed({ to: url('twilio').replace('/webhooks/twilio', '/webhooks/twilio-other') });
    const withoutSignature = { 'content-type': 'application/x-www-form-urlencoded' };
    for (const [body, headers, reason] of [
      [forged.body, forged.headers, 'signature_mismatch'],
      [
        delivery.body.replace('MessageStatus=delivered', 'MessageStatus=read'),
        delivery.headers,
        'signature_mismatch',
      ],
      [elsewhere.body, elsewhere.headers, 'signature_mismatch'],
      [delivery.body, withoutSignature, 'missing_signature'],
    ] as const) {
      const answer = await postForm(body, headers);
      expect(answer).toMatchObject({ status: 401, type: 'application/json', outcome: null });
      expect(JSON.parse(answer.text)).toMatchObject({ outcome: 'invalid_signature', reason });
    }
    expect(await claimCount()).toBe(before);
  });
});

describe('discord', () => {
  const app = '1187301233440161844';
  /** An interaction id (snowflake) for a moment in milliseconds, so tests control the order. */
  const snowflakeAt = (ms: number, worker = 1) =>
    (((BigInt(ms) - 1_420_070_400_000n) << 22n) | BigInt(worker)).toString();
  const signed = (
    type: string,
    overrides: { eventId?: string; objectId?: string; secret?: string; nowSeconds?: number } = {},
  ) =>
    sampleDelivery('discord', {
      type,
      ...(overrides.eventId === undefined ? {} : { eventId: overrides.eventId }),
      ...(overrides.objectId === undefined ? {} : { objectId: overrides.objectId }),
      secret: overrides.secret ?? TEST_SECRETS.discord,
      nowSeconds: overrides.nowSeconds ?? now(),
    });
  const postInteraction = async (body: string, headers: Record<string, string>) => {
    const response = await fetch(url('discord'), { method: 'POST', headers, body });
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      outcome: response.headers.get('x-webhook-outcome'),
      json: JSON.parse(await response.text()) as Record<string, unknown>,
    };
  };

  it('verifies with the development public key, which the local stack was given', () => {
    expect(TEST_SECRETS.discord).toBe(DISCORD_DEV_PUBLIC_KEY);
  });

  it('is sent by npm run send, which reports the verdict of the interaction response', async () => {
    const parsed = parseSendArgs(['discord', '--dup', '2']);
    if (parsed.help) throw new Error('unexpected help');
    const lines: string[] = [];
    const report = await sendSample(parsed.args, {
      outputs,
      env: stack.env,
      log: (line) => lines.push(line),
    });
    expect(report.deliveries.map((d) => [d.status, d.outcome])).toEqual([
      [200, 'accepted'],
      [200, 'duplicate'],
    ]);
    expect(lines.filter((line) => line.includes('{"type":5}'))).toEqual([
      expect.stringMatching(/#1 +200 {2}accepted {2}\{"type":5\}/),
      expect.stringMatching(/#2 +200 {2}duplicate {2}\{"type":5\}/),
    ]);
  });

  it('answers a signed PING with PONG, claiming and queueing nothing; a forged PING gets 401', async () => {
    const before = await claimCount();
    const ping = signed('ping');
    expect(await postInteraction(ping.body, ping.headers)).toEqual({
      status: 200,
      type: 'application/json',
      outcome: null,
      json: { type: 1 },
    });
    // Discord checks endpoints with bad signatures too: they must get 401.
    const forged = signed('ping', { secret: '11'.repeat(32) });
    expect(await postInteraction(forged.body, forged.headers)).toMatchObject({
      status: 401,
      json: { outcome: 'invalid_signature', reason: 'signature_mismatch' },
    });
    expect(await claimCount()).toBe(before);
  });

  it('defers a command with {"type":5}, answers its replay the same, and records it once', async () => {
    const interactionId = snowflakeAt(Date.now());
    const key = `discord:${app}:${interactionId}`;
    const command = signed('application_command.refund', { eventId: interactionId });
    expect(await postInteraction(command.body, command.headers)).toEqual({
      status: 200,
      type: 'application/json',
      outcome: 'accepted',
      json: { type: 5 },
    });
    expect(await postInteraction(command.body, command.headers)).toMatchObject({
      status: 200,
      outcome: 'duplicate',
      json: { type: 5 },
    });
    expect(await done(key)).toMatchObject({ outcome: 'applied', provider: 'discord', deliveries: 2 });
    expect(await resource(`discord:${app}:command:${interactionId}`)).toMatchObject({
      provider: 'discord',
      kind: 'command',
      command: 'refund',
      status: 'requested',
      lastEventId: interactionId,
    });
  });

  it('keeps the later click on a message when two in one second arrive out of order', async () => {
    const message = snowflakeAt(Date.now() - 60_000, 2);
    const second = Math.floor(Date.now() / 1000) * 1000;
    const earlier = snowflakeAt(second + 100);
    const later = snowflakeAt(second + 900);
    for (const [type, eventId] of [
      ['message_component.reject', later],
      ['message_component.approve', earlier],
    ] as const) {
      const click = signed(type, { eventId, objectId: message });
      expect(await postInteraction(click.body, click.headers)).toMatchObject({
        status: 200,
        outcome: 'accepted',
        json: { type: 6 },
      });
      await done(`discord:${app}:${eventId}`);
    }
    expect(await resource(`discord:${app}:message:${message}`)).toMatchObject({
      kind: 'message',
      status: 'reject',
      lastEventId: later,
    });
  });

  it('refuses another key, a tampered body, missing headers and a stale timestamp with 401, writing nothing', async () => {
    const before = await claimCount();
    const eventId = snowflakeAt(Date.now());
    const otherKey = signed('application_command.refund', { eventId, secret: '22'.repeat(32) });
    const delivery = signed('application_command.refund', { eventId });
    const stale = signed('application_command.refund', { eventId, nowSeconds: now() - 600 });
    for (const [body, headers, reason] of [
      [otherKey.body, otherKey.headers, 'signature_mismatch'],
      [delivery.body.replace('"refund"', '"refunds"'), delivery.headers, 'signature_mismatch'],
      [delivery.body, { 'content-type': 'application/json' }, 'missing_signature'],
      [stale.body, stale.headers, 'timestamp_outside_tolerance'],
    ] as const) {
      expect(await postInteraction(body, headers)).toMatchObject({
        status: 401,
        type: 'application/json',
        outcome: null,
        json: { outcome: 'invalid_signature', reason },
      });
    }
    expect(await claimCount()).toBe(before);
  });
});
