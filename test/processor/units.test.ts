import { describe, expect, it } from 'vitest';
import { EXAMPLE_APPLIERS } from '../../examples/payments/appliers/index.js';
import {
  loadMessage,
  PoisonMessageError,
  parseEventMessage,
  readEvent,
  resolveApplier,
} from '../../lambdas/processor/core.js';
import { loadProcessorSettings, toEnvironment } from '../../lambdas/processor/settings.js';
import { isNewer } from '../../lambdas/processor/state-store.js';
import { shopifyResourceId } from '../../lambdas/providers/shopify.js';
import type { EventMessage, QueueMessage } from '../../lambdas/queue/event-message.js';

describe('the stale-order rule', () => {
  const row = { lastEventCreated: 100, lastEventRank: 5, lastEventId: 'evt_a' };

  it('lets any event write a row that does not exist yet', () => {
    expect(isNewer({ at: 1, rank: 0, eventId: 'e' }, undefined)).toBe(true);
  });

  it('lets a later event write and keeps an older one out', () => {
    expect(isNewer({ at: 101, rank: 0, eventId: 'e' }, row)).toBe(true);
    expect(isNewer({ at: 99, rank: 9, eventId: 'e' }, row)).toBe(false);
  });

  it('breaks a same-second tie by rank, and keeps the row when both are equal', () => {
    expect(isNewer({ at: 100, rank: 6, eventId: 'e' }, row)).toBe(true);
    expect(isNewer({ at: 100, rank: 4, eventId: 'e' }, row)).toBe(false);
    expect(isNewer({ at: 100, rank: 5, eventId: 'e' }, row)).toBe(false);
  });

  it('reads a named guard independently of the default one', () => {
    const withRefund = { ...row, refundEventCreated: 50, refundEventRank: 0 };
    expect(isNewer({ at: 60, rank: 0, eventId: 'e' }, withRefund, 'refundEvent')).toBe(true);
    expect(isNewer({ at: 60, rank: 0, eventId: 'e' }, withRefund)).toBe(false);
  });
});

describe('event messages', () => {
  const message = {
    v: 1,
    key: 'github:1:d1',
    provider: 'github',
    eventId: 'd1',
    eventType: 'push',
    account: '1',
    receivedAt: '2026-12-02T00:00:00.000Z',
    claimExpiresAt: 0,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `payload=${encodeURIComponent('{"ref":"refs/heads/main"}')}`,
    bodyEncoding: 'utf8',
  };

  it("reads GitHub's form-encoded payload field", () => {
    expect(readEvent(parseEventMessage(JSON.stringify(message)) as EventMessage).payload).toEqual({
      ref: 'refs/heads/main',
    });
  });

  it('reads a message that carries no headers by its body', () => {
    const { headers: _headers, ...bare } = { ...message, body: '{"ref":"refs/heads/dev"}' };
    expect(readEvent(parseEventMessage(JSON.stringify(bare)) as EventMessage).payload).toEqual({
      ref: 'refs/heads/dev',
    });
  });

  it('refuses a message naming a provider it does not know as poison', () => {
    expect(() => readEvent({ ...message, provider: 'nope' } as unknown as EventMessage)).toThrow(
      new PoisonMessageError('message names unknown provider "nope"'),
    );
  });

  it('cannot read a claim check without the archive bucket, and says which setting is missing', async () => {
    const { body: _body, bodyEncoding: _encoding, ...envelope } = message;
    const check = { ...envelope, payloadKey: 'github/2026/12/02/d1.json', bodyBytes: 10 };
    await expect(loadMessage(check as QueueMessage, {})).rejects.toThrow(
      'message github:1:d1 is a claim check but the processor has no archive bucket (ARCHIVE_BUCKET_NAME)',
    );
  });

  it('decodes a base64 body', () => {
    const body = Buffer.from('{"a":1}').toString('base64');
    const parsed = readEvent(
      parseEventMessage(
        JSON.stringify({ ...message, headers: {}, body, bodyEncoding: 'base64' }),
      ) as EventMessage,
    );
    expect(parsed.payload).toEqual({ a: 1 });
  });

  describe('Twilio, whose body format the headers alone do not tell', () => {
    const json = '{"AccountSid":"AC1","MessageSid":"SM1","MessageStatus":"delivered"}';
    const twilioMessage = {
      ...message,
      key: 'twilio:AC1:SM1%3Adelivered',
      provider: 'twilio',
      eventId: 'SM1:delivered',
      eventType: 'message.delivered',
      account: 'AC1',
      headers: { 'content-type': 'text/plain' },
      body: json,
    };
    const read = (fields: Record<string, unknown>) =>
      readEvent(parseEventMessage(JSON.stringify({ ...twilioMessage, ...fields })) as EventMessage);

    it('reads the body in the format the receiver recorded, whatever its content type', () => {
      expect(read({ bodyFormat: 'json' }).payload).toEqual(JSON.parse(json));
    });

    it('reads a message queued before bodyFormat existed by its headers, as before', () => {
      const form = 'AccountSid=AC1&MessageSid=SM1&MessageStatus=delivered';
      const headers = { 'content-type': 'application/x-www-form-urlencoded' };
      expect(read({ body: form, headers }).payload).toEqual({
        AccountSid: 'AC1',
        MessageSid: 'SM1',
        MessageStatus: 'delivered',
      });
      expect(read({ headers: { 'content-type': 'application/json' } }).payload).toEqual(JSON.parse(json));
    });

    it('refuses a body format it does not know as poison', () => {
      expect(() => read({ bodyFormat: 'xml' })).toThrow(/unknown body format "xml"/);
      expect(() => read({ bodyFormat: 'xml' })).toThrow(PoisonMessageError);
    });
  });

  it('refuses a message that is not a version 1 event as poison', () => {
    expect(() => parseEventMessage('nope')).toThrow(PoisonMessageError);
    expect(() => parseEventMessage('nope')).toThrow(/^message body is not JSON$/);
    expect(() => parseEventMessage(JSON.stringify({ ...message, v: 2 }))).toThrow(PoisonMessageError);
    expect(() => parseEventMessage('null')).toThrow(PoisonMessageError);
    expect(() => parseEventMessage('[1]')).toThrow(PoisonMessageError);
    expect(() => parseEventMessage('"text"')).toThrow(PoisonMessageError);
  });

  it.each([
    ['no key', { key: undefined }],
    ['a key that is not a string', { key: 1 }],
    ['no provider', { provider: undefined }],
    ['no event id', { eventId: undefined }],
    ['no event type', { eventType: undefined }],
    ['no body and no claim check', { body: undefined }],
    ['a body that is not a string', { body: { ref: 'refs/heads/main' } }],
    ['a claim check with an empty payload key', { body: undefined, payloadKey: '' }],
  ])('refuses a message with %s as poison', (_case, fields) => {
    expect(() => parseEventMessage(JSON.stringify({ ...message, ...fields }))).toThrow(
      /not a version 1 event message/,
    );
  });

  it('reads a claim check: a payload key instead of the body', () => {
    const { body: _body, bodyEncoding: _encoding, ...envelope } = message;
    const check = { ...envelope, payloadKey: 'github/2026/12/02/d1.json', bodyBytes: 10 };
    expect(parseEventMessage(JSON.stringify(check))).toEqual(check);
  });
});

describe('handler registry', () => {
  it('resolves exact types and prefix patterns per provider, and nothing for unknown ones', () => {
    expect(resolveApplier(EXAMPLE_APPLIERS, 'stripe', 'payment_intent.canceled')).toBe(
      EXAMPLE_APPLIERS.stripe?.['payment_intent.*'],
    );
    expect(resolveApplier(EXAMPLE_APPLIERS, 'asaas', 'PAYMENT_OVERDUE')).toBeDefined();
    expect(resolveApplier(EXAMPLE_APPLIERS, 'stripe', 'customer.created')).toBeUndefined();
    expect(resolveApplier(EXAMPLE_APPLIERS, 'constructor', 'push')).toBeUndefined();
  });
});

describe('processor settings', () => {
  const env = {
    CLAIMS_TABLE_NAME: 'c',
    BUSINESS_TABLES: '{"payments":"p","order-lines":"o"}',
  };

  it('applies the documented defaults and reads the business tables and effect adapters', () => {
    expect(loadProcessorSettings(env)).toMatchObject({
      leaseSeconds: 120,
      maxReceiveCount: 5,
      tableNames: { payments: 'p', 'order-lines': 'o' },
      effects: {},
    });
    expect(loadProcessorSettings({ CLAIMS_TABLE_NAME: 'c' }).tableNames).toEqual({});
    expect(
      loadProcessorSettings({
        ...env,
        EFFECTS: '{"ledger":{"url":"http://127.0.0.1:9/ledger","honoursIdempotencyKey":true},"mailer":{}}',
      }).effects,
    ).toEqual({
      ledger: {
        url: 'http://127.0.0.1:9/ledger',
        honoursIdempotencyKey: true,
        timeoutMs: 5_000,
        headers: {},
        permanentStatuses: [],
      },
      mailer: {
        url: undefined,
        honoursIdempotencyKey: false,
        timeoutMs: 5_000,
        headers: {},
        permanentStatuses: [],
      },
    });
  });

  it("reads an effect's timeoutSeconds and refuses one that is not whole seconds from 1 to 900", () => {
    const effects = (json: string) => loadProcessorSettings({ ...env, EFFECTS: json }).effects;
    expect(effects('{"crm":{"url":"https://crm.example.com/","timeoutSeconds":20}}').crm?.timeoutMs).toBe(
      20_000,
    );
    for (const bad of ['0', '1.5', '"5"', '901']) {
      expect(() => effects(`{"crm":{"url":"https://crm.example.com/","timeoutSeconds":${bad}}}`)).toThrow(
        /effect "crm": timeoutSeconds must be a whole number of seconds from 1 to 900/,
      );
    }
  });

  it('refuses an effect whose call may outlast the processing lease (it is renewed before each such call)', () => {
    const settings = (lease: string, timeout: number) =>
      loadProcessorSettings({
        ...env,
        PROCESSING_LEASE_SECONDS: lease,
        EFFECTS: `{"crm":{"url":"https://crm.example.com/","timeoutSeconds":${timeout}}}`,
      });
    expect(() => settings('6', 5)).toThrow(
      /effect "crm" may take 5000 ms, which must be shorter than PROCESSING_LEASE_SECONDS \(6 s\) by more than 1000 ms/,
    );
    expect(settings('7', 5).effects.crm?.timeoutMs).toBe(5_000);
    // An adapter without a URL is never called: its timeout does not matter.
    expect(() =>
      loadProcessorSettings({ ...env, PROCESSING_LEASE_SECONDS: '3', EFFECTS: '{"mailer":{}}' }),
    ).not.toThrow();
  });

  it('reads back what toEnvironment writes (the construct writes the tables and effects as JSON)', () => {
    const written = toEnvironment({
      claimsTableName: 'claims',
      tableNames: '{"invoices":"inv-table"}',
      effects: '{"erp":{"url":"https://erp.example.com/","honoursIdempotencyKey":true}}',
      leaseSeconds: 300,
      maxReceiveCount: 3,
      claimRetentionSeconds: 86_400,
      archiveBucket: 'archive',
    });
    expect(Object.keys(written).sort()).toEqual([
      'ARCHIVE_BUCKET_NAME',
      'BUSINESS_TABLES',
      'CLAIMS_TABLE_NAME',
      'CLAIM_RETENTION_SECONDS',
      'EFFECTS',
      'MAX_RECEIVE_COUNT',
      'PROCESSING_LEASE_SECONDS',
    ]);
    expect(loadProcessorSettings(written)).toMatchObject({
      claimsTableName: 'claims',
      tableNames: { invoices: 'inv-table' },
      effects: { erp: { url: 'https://erp.example.com/', honoursIdempotencyKey: true } },
      leaseSeconds: 300,
      maxReceiveCount: 3,
      claimRetentionSeconds: 86_400,
      archiveBucket: 'archive',
    });
  });

  it('names the variable that is missing or wrong', () => {
    expect(() => loadProcessorSettings({ ...env, MAX_RECEIVE_COUNT: '1001' })).toThrow(
      /MAX_RECEIVE_COUNT must be/,
    );
    expect(() => loadProcessorSettings({ ...env, CLAIMS_TABLE_NAME: '' })).toThrow(
      /CLAIMS_TABLE_NAME is required/,
    );
    expect(() => loadProcessorSettings({ ...env, BUSINESS_TABLES: '["p"]' })).toThrow(
      /BUSINESS_TABLES must be a JSON object/,
    );
    expect(() => loadProcessorSettings({ ...env, BUSINESS_TABLES: '{"claims":"x"}' })).toThrow(
      /BUSINESS_TABLES: business table name "claims"/,
    );
    expect(() => loadProcessorSettings({ ...env, BUSINESS_TABLES: '{"rows:x":"x"}' })).toThrow(
      /BUSINESS_TABLES: business table name "rows:x" must start/,
    );
    expect(() => loadProcessorSettings({ ...env, BUSINESS_TABLES: '{"payments":""}' })).toThrow(
      /table "payments" needs a table name/,
    );
    expect(() => loadProcessorSettings({ ...env, EFFECTS: '{"mailer":{"url":"not a url"}}' })).toThrow(
      /EFFECTS: effect "mailer": url must be a URL/,
    );
    expect(() =>
      loadProcessorSettings({ ...env, EFFECTS: '{"mailer":{"honoursIdempotencyKey":"yes"}}' }),
    ).toThrow(/honoursIdempotencyKey must be true or false/);
    expect(() => loadProcessorSettings({ ...env, EFFECTS: '{"Mailer":{}}' })).toThrow(
      /EFFECTS: effect adapter name "Mailer"/,
    );
  });
});

describe('processor settings: BUSINESS_TABLES and EFFECTS, value by value', () => {
  const load = (extra: Record<string, string>) => loadProcessorSettings({ CLAIMS_TABLE_NAME: 'c', ...extra });

  it('reads a blank variable as none, and trims table names', () => {
    expect(load({ BUSINESS_TABLES: '  ', EFFECTS: ' ' })).toMatchObject({ tableNames: {}, effects: {} });
    expect(load({ BUSINESS_TABLES: '{"payments":" p "}' }).tableNames).toEqual({ payments: 'p' });
  });

  it.each(['not json', ' [1] ', 'null', '5', '"x"'])(
    'refuses %j as no JSON object, naming the variable',
    (raw) => {
      for (const name of ['BUSINESS_TABLES', 'EFFECTS']) {
        expect(() => load({ [name]: raw })).toThrow(
          `environment variable ${name} must be a JSON object, got ${JSON.stringify(raw.trim())}`,
        );
      }
    },
  );

  it.each(['5', '"  "', 'null', '{}'])('refuses a table name of %s', (value) => {
    expect(() => load({ BUSINESS_TABLES: `{"payments":${value}}` })).toThrow(
      'environment variable BUSINESS_TABLES: table "payments" needs a table name',
    );
  });

  it.each(['null', '[]', '"https://crm.example.com/"', '5'])(
    'refuses an effect that is %s, not an object',
    (value) => {
      expect(() => load({ EFFECTS: `{"crm":${value}}` })).toThrow(
        'environment variable EFFECTS: effect "crm" must be an object ({"url": ..., "honoursIdempotencyKey": ...})',
      );
    },
  );

  it('takes timeouts of exactly 1 and 900 seconds, and an empty url as none', () => {
    const effects = load({
      PROCESSING_LEASE_SECONDS: '1000',
      EFFECTS:
        '{"a":{"url":"https://a.example/","timeoutSeconds":1},"b":{"url":"https://b.example/","timeoutSeconds":900},"c":{"url":""}}',
    }).effects;
    expect(effects.a?.timeoutMs).toBe(1_000);
    expect(effects.b?.timeoutMs).toBe(900_000);
    expect(effects.c?.url).toBeUndefined();
  });
});

describe('Shopify resource ids', () => {
  it('reads the exact id from admin_graphql_api_id when the numeric id is beyond 2^53', () => {
    const payload = JSON.parse(
      '{"id":820982911946154508,"admin_graphql_api_id":"gid://shopify/Order/820982911946154508"}',
    );
    expect(shopifyResourceId(payload)).toBe('820982911946154508');
    expect(shopifyResourceId({ id: 450789469 })).toBe('450789469');
    expect(shopifyResourceId(JSON.parse('{"id":820982911946154508}'))).toBeUndefined();
  });
});
