/**
 * `npm run send` / `webhooks send` with a body of your own (`--file PATH`, `-` for stdin, `--body`):
 * posted to a recording HTTP API, the body received is the file's exact bytes, signed so that the
 * provider's own `verify` accepts it, with the id and type its `extract` reads; a body the receiver
 * would refuse is refused before anything is posted.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { requireProvider } from '../../lambdas/providers/index.js';
import {
  type ParsedSendArgs,
  parseSendArgs,
  readOwnBody,
  type SendArgs,
  SendUsageError,
  sendSample,
} from '../../local/send.js';
import { type RecordingApi, startRecordingApi } from '../helpers/recording-api.js';

const dir = mkdtempSync(join(tmpdir(), 'send-own-body-'));
const file = (name: string, content: string | Buffer): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

/** Pretty-printed with CRLF line ends, odd spacing, non-ASCII text: bytes a re-serialisation would change. */
const STRIPE_INVOICE = Buffer.from(
  '{\r\n  "id" : "evt_own_1",\r\n  "object": "event",\r\n  "type": "invoice.paid",\r\n  "created": 1767225600,\r\n' +
    '  "data": { "object": { "id": "in_own_1", "object": "invoice", "customer": "cus_1",\r\n' +
    '    "description": "Abonnement Pro — café ☕", "amount_paid": 2000.0 } }\r\n}\r\n',
  'utf8',
);

let api: RecordingApi;
beforeAll(async () => {
  api = await startRecordingApi();
});
afterAll(() => api?.stop());
beforeEach(() => {
  api.invoked.length = 0;
});

const args = (argv: string[]): SendArgs => {
  const parsed: ParsedSendArgs = parseSendArgs(argv);
  if (parsed.help) throw new Error('help');
  return parsed.args;
};
const urlOf = (provider: string) => `${api.url}/webhooks/${provider}`;
const send = (argv: string[], stdin?: () => Promise<Buffer>) => {
  const [provider = ''] = argv;
  return sendSample(args([...argv, '--url', urlOf(provider)]), stdin ? { stdin } : {});
};
const received = (event: APIGatewayProxyEventV2 | undefined): Buffer => {
  if (!event) throw new Error('nothing was posted');
  return Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');
};
/** The provider's own verify and extract, on what the API received. */
function read(provider: string, event: APIGatewayProxyEventV2 | undefined, secret: string) {
  const request = {
    headers: event?.headers ?? {},
    rawBody: received(event),
    url: urlOf(provider),
  };
  const module = requireProvider(provider);
  return {
    verified: module.verify(request, { secrets: [secret], nowSeconds: Math.floor(Date.now() / 1000) }),
    extracted: module.extract(request),
  };
}

describe('parseSendArgs: --file and --body', () => {
  it('reads --file PATH, --file - and --body', () => {
    expect(args(['stripe', '--file', 'evt.json', '--dup', '2'])).toMatchObject({
      provider: 'stripe',
      file: 'evt.json',
      dup: 2,
    });
    expect(args(['stripe', 'invoice.paid', '--file', '-'])).toMatchObject({
      type: 'invoice.paid',
      file: '-',
    });
    expect(args(['stripe', '--body', '{"id":"evt_1"}'])).toMatchObject({ body: '{"id":"evt_1"}' });
    expect(args(['stripe'])).not.toHaveProperty('file');
  });

  it.each([
    [['stripe', '--file', 'a.json', '--body', '{}'], /--file and --body both give the body/],
    [
      ['github', 'push', '--file', 'a.json', '--bytes', '1mb'],
      /--bytes sizes a sample: --file sends your body/,
    ],
    [['stripe', '--body', '{}', '--object', 'pi_1'], /--object sets a sample's object: --body/],
    [['stripe', '--file', ' '], /--file needs a path/],
    [['stripe', '--body', ''], /--body needs a body/],
    [['stripe', '--file'], /--file needs a value/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseSendArgs(argv)).toThrow(SendUsageError);
    expect(() => parseSendArgs(argv)).toThrow(message);
  });
});

describe('readOwnBody', () => {
  it("keeps a file's exact bytes, and reads - from stdin", async () => {
    const bytes = Buffer.from([0x7b, 0x7d, 0x0d, 0x0a, 0xc3, 0xa9]);
    expect(await readOwnBody({ file: file('bytes.json', bytes) })).toEqual({
      body: bytes,
      source: join(dir, 'bytes.json'),
    });
    expect(await readOwnBody({ file: '-' }, async () => Buffer.from('{"a":1}'))).toEqual({
      body: Buffer.from('{"a":1}'),
      source: 'stdin',
    });
    expect(await readOwnBody({ body: '{"é":1}' })).toEqual({
      body: Buffer.from('{"é":1}'),
      source: '--body',
    });
    expect(await readOwnBody({})).toBeUndefined();
  });

  it('refuses a missing file, a directory and an empty body with a usage error', async () => {
    mkdirSync(join(dir, 'folder'), { recursive: true });
    await expect(readOwnBody({ file: join(dir, 'absent.json') })).rejects.toThrow(
      new SendUsageError(`--file ${join(dir, 'absent.json')}: no such file`),
    );
    await expect(readOwnBody({ file: join(dir, 'folder') })).rejects.toThrow(/is a directory/);
    await expect(readOwnBody({ file: file('empty.json', '') })).rejects.toThrow(/empty\.json is empty/);
    await expect(readOwnBody({ file: '-' }, async () => Buffer.alloc(0))).rejects.toThrow('stdin is empty');
  });
});

describe('sendSample with a body of your own', () => {
  it('posts the file byte for byte, signed as Stripe signs, with the id and type Stripe reads from it', async () => {
    const secret = 'whsec_own_body_test';
    const report = await send([
      'stripe',
      '--file',
      file('invoice.json', STRIPE_INVOICE),
      '--secret',
      secret,
      '--dup',
      '2',
      '--concurrent',
      '2',
    ]);
    expect(report).toMatchObject({
      ok: true,
      summary: `invoice.paid evt_own_1 about in_own_1 (${join(dir, 'invoice.json')}, ${STRIPE_INVOICE.length} bytes)`,
      body: { source: join(dir, 'invoice.json'), bytes: STRIPE_INVOICE.length },
      event: { eventId: 'evt_own_1', eventType: 'invoice.paid', account: 'platform', objectId: 'in_own_1' },
    });
    expect(report.deliveries).toHaveLength(4);
    // One delivery, sent four times: the same bytes and the same signature each time.
    expect(api.invoked).toHaveLength(4);
    for (const event of api.invoked) {
      expect(received(event).equals(STRIPE_INVOICE)).toBe(true);
      expect(event.headers['stripe-signature']).toBe(api.invoked[0]?.headers['stripe-signature']);
      expect(event.headers['content-type']).toMatch(/^application\/json/);
    }
    const { verified, extracted } = read('stripe', api.invoked[0], secret);
    expect(verified).toEqual({ ok: true });
    expect(extracted).toMatchObject({ ok: true, event: { eventId: 'evt_own_1', eventType: 'invoice.paid' } });
    // Another secret does not verify it: the signature is over these bytes with this secret.
    expect(read('stripe', api.invoked[0], 'whsec_other').verified).toMatchObject({ ok: false });
  });

  it('reads the body from stdin with --file -', async () => {
    const body = '{"id":"evt_stdin","type":"customer.created","data":{"object":{"id":"cus_9"}}}';
    const report = await send(['stripe', '--file', '-'], async () => Buffer.from(body));
    expect(report.event).toMatchObject({ eventId: 'evt_stdin', eventType: 'customer.created' });
    expect(received(api.invoked[0]).toString()).toBe(body);
    expect(read('stripe', api.invoked[0], requireProvider('stripe').secret.devSecret).verified).toEqual({
      ok: true,
    });
  });

  it.each([
    [
      'no event id',
      '{"type":"invoice.paid","data":{"object":{"id":"in_1"}}}',
      /^--body has no event id: Stripe reads it from payload `id`: the receiver would refuse it; nothing was sent$/,
    ],
    ['no event type', '{"id":"evt_1","data":{}}', /has no event type: Stripe reads it from payload `type`/],
    ['not JSON', '{"id":"evt_1",', /^--body is not JSON: /],
    ['a JSON array', '[1,2]', /^--body is not a payload Stripe can read \(body is not a JSON object\)/],
    [
      'a payment intent event without its intent',
      '{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{}}}',
      /--body names no object: Stripe keys payment_intent\.succeeded events by their object \(the composite rule\)/,
    ],
  ])('refuses a body with %s before posting anything', async (_what, body, message) => {
    const error = await send(['stripe', '--body', body]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SendUsageError);
    expect((error as Error).message).toMatch(message);
    expect(api.invoked).toHaveLength(0);
  });

  it('refuses --id when the provider reads the id from the body', async () => {
    await expect(
      send(['stripe', '--body', '{"id":"evt_1","type":"invoice.paid"}', '--id', 'evt_2']),
    ).rejects.toThrow('--id evt_2: Stripe reads the event id evt_1 from payload `id`; change it in the body');
    expect(api.invoked).toHaveLength(0);
  });

  it("sends GitHub's id and type headers (--id, the type argument) and matches the hook headers to the body", async () => {
    const secret = 'gh-own-secret';
    // A push from another repository than the sample's, as GitHub sends it (pretty, trailing newline).
    const body = `${JSON.stringify({ ref: 'refs/heads/main', repository: { id: 987654, full_name: 'acme/app' } }, null, 2)}\n`;
    const sent = await send([
      'github',
      'push',
      '--file',
      file('push.json', body),
      '--id',
      'delivery-1',
      '--secret',
      secret,
    ]);
    expect(sent.event).toEqual({
      eventId: 'delivery-1',
      eventType: 'push',
      account: '987654',
      objectId: '987654',
    });
    const [event] = api.invoked;
    expect(received(event).toString()).toBe(body);
    expect(event?.headers).toMatchObject({
      'x-github-event': 'push',
      'x-github-delivery': 'delivery-1',
      'x-github-hook-installation-target-id': '987654',
      'x-github-hook-installation-target-type': 'repository',
    });
    const { verified, extracted } = read('github', event, secret);
    expect(verified).toEqual({ ok: true });
    expect(extracted).toMatchObject({ ok: true, event: { eventId: 'delivery-1', eventType: 'push' } });
  });

  it('signs a Standard Webhooks body over its webhook-id (--id) and reads the type from the body', async () => {
    const secret = requireProvider('standard').secret.devSecret;
    const body = '{"type":"invoice.paid","timestamp":"2026-12-01T00:00:00Z","data":{"id":"inv_1"}}';
    const warnings: string[] = [];
    const report = await sendSample(
      args(['standard', 'invoice.created', '--body', body, '--id', 'msg_own', '--url', urlOf('standard')]),
      { warn: (line) => warnings.push(line) },
    );
    expect(report.event).toMatchObject({ eventId: 'msg_own', eventType: 'invoice.paid' });
    expect(api.invoked[0]?.headers['webhook-id']).toBe('msg_own');
    expect(read('standard', api.invoked[0], secret).verified).toEqual({ ok: true });
    // The type argument does not change a body's own type: said, not hidden.
    expect(warnings).toEqual([
      "note: the body's event type is invoice.paid (as standard reads it), not invoice.created",
    ]);
  });

  it('sends a handshake body as the handshake the provider answers, with no event to read', async () => {
    const body = '{"token":"t","challenge":"own-challenge","type":"url_verification"}';
    const report = await send(['slack', '--body', body]);
    expect(report.summary).toBe(`url_verification handshake (--body, ${body.length} bytes)`);
    expect(report).not.toHaveProperty('event');
    expect(received(api.invoked[0]).toString()).toBe(body);
    expect(read('slack', api.invoked[0], requireProvider('slack').secret.devSecret).verified).toEqual({
      ok: true,
    });
  });

  it('signs a Twilio form body with the URL it is posted to', async () => {
    const secret = requireProvider('twilio').secret.devSecret;
    const body = 'MessageSid=SM0001&MessageStatus=delivered&AccountSid=AC1&To=%2B15558675310';
    const report = await send(['twilio', '--file', file('twilio.form', body)]);
    expect(report.event).toMatchObject({ eventId: 'SM0001:delivered', eventType: 'message.delivered' });
    expect(received(api.invoked[0]).toString()).toBe(body);
    expect(read('twilio', api.invoked[0], secret).verified).toEqual({ ok: true });
  });
});
