/**
 * Providers by configuration, as a user adds them: `WEBHOOK_HMAC_PROVIDERS` names the two worked
 * examples of docs/configured-providers.md (examples/providers/onfido.json, a KYC vendor, and
 * examples/providers/partner.json, a generic `X-Signature` sender), `npm start` runs the stack, and
 * everything else is HTTP. Onfido's deliveries are checked against its official library
 * (@onfido/api's WebhookEventVerifier); the partner's are signed by the rule its docs would state.
 */
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { promisify } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { OnfidoInvalidSignatureError, WebhookEventVerifier } from '@onfido/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../local/emulators.js';
import { type LocalStackProcess, REPO_ROOT, startLocalStackProcess } from '../helpers/local-stack-process.js';

const ONFIDO_TOKEN = 'onfido-e2e-webhook-token';
const PARTNER_SECRET = 'partner-e2e-signing-secret';
const PROVIDERS_VALUE = '@examples/providers/onfido.json,@examples/providers/partner.json';

let stack: LocalStackProcess;
let outputs: Readonly<Record<string, string>>;
let doc: DynamoDBDocumentClient;

beforeAll(async () => {
  stack = await startLocalStackProcess(
    {
      WEBHOOK_HMAC_PROVIDERS: PROVIDERS_VALUE,
      WEBHOOK_SECRET_ONFIDO: ONFIDO_TOKEN,
      WEBHOOK_SECRET_PARTNER: PARTNER_SECRET,
    },
    'webhooks-configured',
  );
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

const post = async (url: string | undefined, body: string, headers: Record<string, string>) => {
  const response = await fetch(url ?? 'http://missing-output', { method: 'POST', headers, body });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
};
const claim = async (pk: string) =>
  (await doc.send(new GetCommand({ TableName: outputs.ClaimsTableName, Key: { pk }, ConsistentRead: true })))
    .Item;
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

it('publishes a webhook URL for each configured provider, beside the built-in ones', () => {
  expect(outputs.OnfidoWebhookUrl).toMatch(/\/webhooks\/onfido$/);
  expect(outputs.PartnerWebhookUrl).toMatch(/\/webhooks\/partner$/);
  expect(outputs.StripeWebhookUrl).toMatch(/\/webhooks\/stripe$/);
});

describe('a KYC vendor (Onfido): X-SHA2-Signature, hex HMAC-SHA256 of the raw body', () => {
  const checkEvent = (checkId: string, action = 'check.completed') =>
    JSON.stringify({
      payload: {
        resource_type: 'check',
        action,
        object: {
          id: checkId,
          status: action === 'check.completed' ? 'complete' : 'in_progress',
          completed_at_iso8601: '2026-12-01T10:00:00Z',
          href: `https://api.eu.onfido.com/v3.6/checks/${checkId}`,
        },
      },
    });
  // Onfido's documented rule; the official verifier below accepts exactly these signatures.
  const sign = (body: string, token = ONFIDO_TOKEN) => ({
    'content-type': 'application/json',
    'x-sha2-signature': createHmac('sha256', token).update(body).digest('hex'),
  });

  it('accepts what Onfido signs, absorbs the redelivery, and writes the check once', async () => {
    const body = checkEvent('chk_e2e_1');
    const headers = sign(body);
    // The official library reads this delivery as authentic.
    expect(
      new WebhookEventVerifier(ONFIDO_TOKEN).readPayload(body, headers['x-sha2-signature']),
    ).toMatchObject({ payload: { action: 'check.completed' } });

    const key = 'onfido:default:chk_e2e_1:check.completed';
    const first = await post(outputs.OnfidoWebhookUrl, body, headers);
    expect(first).toMatchObject({ status: 200, json: { outcome: 'accepted', key } });
    const again = await post(outputs.OnfidoWebhookUrl, body, headers);
    expect(again).toMatchObject({ status: 200, json: { outcome: 'duplicate', key } });

    expect(await done(key)).toMatchObject({ outcome: 'applied', provider: 'onfido' });
    const row = await doc.send(
      new GetCommand({
        TableName: outputs.ResourcesTableName,
        Key: { pk: 'onfido:default:check:chk_e2e_1' },
        ConsistentRead: true,
      }),
    );
    expect(row.Item).toMatchObject({ provider: 'onfido', kind: 'check', status: 'complete' });
  });

  it('keys each action of a check apart (a composite key: no event id in Onfido payloads)', async () => {
    const started = checkEvent('chk_e2e_2', 'check.started');
    const completed = checkEvent('chk_e2e_2');
    expect(await post(outputs.OnfidoWebhookUrl, started, sign(started))).toMatchObject({
      json: { outcome: 'accepted', key: 'onfido:default:chk_e2e_2:check.started' },
    });
    expect(await post(outputs.OnfidoWebhookUrl, completed, sign(completed))).toMatchObject({
      json: { outcome: 'accepted', key: 'onfido:default:chk_e2e_2:check.completed' },
    });
  });

  it('refuses a tampered body, another token and a missing signature with 401, writing nothing', async () => {
    const body = checkEvent('chk_e2e_forged');
    const before = await claimCount();
    const tampered = body.replace('complete"', 'consider"');
    const signature = sign(body)['x-sha2-signature'];
    expect(() => new WebhookEventVerifier(ONFIDO_TOKEN).readPayload(tampered, signature)).toThrow(
      OnfidoInvalidSignatureError,
    );
    const results = [
      await post(outputs.OnfidoWebhookUrl, tampered, sign(body)),
      await post(outputs.OnfidoWebhookUrl, body, sign(body, 'someone-elses-token')),
      await post(outputs.OnfidoWebhookUrl, body, { 'content-type': 'application/json' }),
    ];
    expect(results.map((r) => [r.status, r.json.reason])).toEqual([
      [401, 'signature_mismatch'],
      [401, 'signature_mismatch'],
      [401, 'missing_signature'],
    ]);
    expect(await claimCount()).toBe(before);
  });

  it('npm run send -- onfido posts the configured sample, signed with the development token', async () => {
    const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'send', '--', 'onfido'], {
      cwd: REPO_ROOT,
      // The shell's variables: WEBHOOK_HMAC_PROVIDERS tells `send` about the provider.
      env: stack.env,
      timeout: 30_000,
    });
    expect(stdout).toMatch(/200 {2}accepted {2}key=onfido:default:evt_[0-9a-f]+:check\.completed/);
  });
});

describe('a generic X-Signature sender: sha256=<hex> over "<X-Timestamp>.<body>"', () => {
  const invoice = (id: string, account = 'acct_42') =>
    JSON.stringify({ id, type: 'invoice.paid', account, data: { id: `inv_${id}`, amount: 4200 } });
  const sign = (body: string, at = Math.floor(Date.now() / 1000), secret = PARTNER_SECRET) => ({
    'content-type': 'application/json',
    'x-timestamp': String(at),
    'x-signature': `sha256=${createHmac('sha256', secret).update(`${at}.${body}`).digest('hex')}`,
  });

  it('accepts a signed delivery, scopes it to the account in the signed body, and completes it once', async () => {
    const body = invoice('evt_p1');
    const headers = sign(body);
    const key = 'partner:acct_42:evt_p1';
    expect(await post(outputs.PartnerWebhookUrl, body, headers)).toMatchObject({
      status: 200,
      json: { outcome: 'accepted', key },
    });
    expect(await post(outputs.PartnerWebhookUrl, body, headers)).toMatchObject({
      json: { outcome: 'duplicate', key },
    });
    // No applier for this provider in the example app: completed as unhandled, once.
    expect(await done(key)).toMatchObject({ outcome: 'unhandled', provider: 'partner' });
  });

  it('refuses stale, future, unsigned-timestamp, tampered and wrongly keyed deliveries with 401', async () => {
    const body = invoice('evt_p_forged');
    const now = Math.floor(Date.now() / 1000);
    const before = await claimCount();
    const { 'x-timestamp': _dropped, ...withoutTimestamp } = sign(body);
    const cases = [
      sign(body, now - 600),
      sign(body, now + 600),
      withoutTimestamp,
      // The timestamp is signed: moving it breaks the signature.
      { ...sign(body, now - 600), 'x-timestamp': String(now) },
      sign(body, now, 'another-secret'),
    ];
    const results = [];
    for (const headers of cases) results.push(await post(outputs.PartnerWebhookUrl, body, headers));
    results.push(await post(outputs.PartnerWebhookUrl, body.replace('4200', '9999'), sign(body)));
    expect(results.map((r) => [r.status, r.json.reason])).toEqual([
      [401, 'timestamp_outside_tolerance'],
      [401, 'timestamp_outside_tolerance'],
      [401, 'malformed_signature'],
      [401, 'signature_mismatch'],
      [401, 'signature_mismatch'],
      [401, 'signature_mismatch'],
    ]);
    expect(await claimCount()).toBe(before);
  });
});
