/**
 * Shopify compliance requests against the archive: what matches a customer, what a redact leaves
 * (and keeps, for events whose claim is not DONE), the export a data_request writes, the audit line,
 * and a rewrite that races another writer. The S3 store and the claims run against s3rver and
 * DynamoDB Local (test/processor/compliance.integration.test.ts,
 * test/store/redaction-claims.integration.test.ts), the whole flow over HTTP against `npm start`
 * (test/e2e/shopify-compliance.e2e.test.ts, test/e2e/shopify-deferred-redaction.e2e.test.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  applyCompliance,
  type ComplianceClaims,
  ComplianceDeadlineError,
  type ComplianceRequest,
  type ComplianceStore,
  complianceRequestOf,
  isAbout,
} from '../../lambdas/processor/compliance.js';
import type { EventMessage } from '../../lambdas/queue/event-message.js';

const SHOP = 'example-shop.myshopify.com';
const event = (id: string, topic: string, payload: Record<string, unknown>, shop = SHOP): EventMessage => ({
  v: 1,
  key: `shopify:${shop}:${id}`,
  provider: 'shopify',
  eventId: id,
  eventType: topic,
  account: shop,
  receivedAt: '2026-12-02T10:00:00.000Z',
  claimExpiresAt: 1_800_000_000,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(payload),
  bodyEncoding: 'utf8',
});

const alice = { id: 111, email: 'Alice@Example.com', phone: '+15550001111' };
const bob = { id: 222, email: 'bob@example.com', phone: '+15550002222' };
const aliceOrder = event('w1', 'orders/create', { id: 9001, email: 'alice@example.com', customer: alice });
const bobOrder = event('w2', 'orders/create', { id: 9002, email: bob.email, customer: bob });
const aliceProfile = event('w3', 'customers/update', { id: 111, email: 'alice@example.com' });
const guestOrderListed = event('w4', 'orders/paid', { id: 9003, email: 'guest@example.com' });
const otherShopAlice = event('w5', 'orders/create', { id: 9004, customer: alice }, 'other.myshopify.com');

const redactAlice = {
  provider: 'shopify',
  eventType: 'customers/redact',
  payload: {
    shop_id: 1,
    shop_domain: 'Example-Shop.myshopify.com',
    customer: alice,
    orders_to_redact: [9003],
  },
} as const;

class MemoryStore implements ComplianceStore {
  readonly objects = new Map<string, { text: string; etag: number }>();
  private version = 0;
  /** Runs once before the next conditional change, as another writer would. */
  interfere?: () => void;
  put(key: string, text: string): void {
    this.objects.set(key, { text, etag: ++this.version });
  }
  async *list(prefix: string, startAfter = '') {
    for (const key of [...this.objects.keys()].sort())
      if (key.startsWith(prefix) && key > startAfter) yield key;
  }
  async read(key: string) {
    const object = this.objects.get(key);
    return object && { text: object.text, etag: String(object.etag) };
  }
  private changedSince(key: string, etag: string): boolean {
    const hook = this.interfere;
    this.interfere = undefined;
    hook?.();
    return String(this.objects.get(key)?.etag) !== etag;
  }
  async replaceIfUnchanged(key: string, body: string, etag: string) {
    if (this.changedSince(key, etag)) return false;
    this.put(key, body);
    return true;
  }
  async deleteIfUnchanged(key: string, etag: string) {
    if (this.changedSince(key, etag)) return false;
    this.objects.delete(key);
    return true;
  }
  async delete(key: string) {
    this.objects.delete(key);
  }
  async write(key: string, body: string) {
    this.put(key, body);
  }
  events(key: string): string[] {
    const parsed = JSON.parse(this.objects.get(key)?.text ?? 'null');
    return (parsed.events ?? [parsed]).map((e: EventMessage) => e.key);
  }
}

/**
 * The claims as a redaction asks them, by status (DONE when not listed, `absent` for no claim), as
 * lambdas/store/redaction-claims.ts answers (that store's conditions: its own integration test).
 */
function claimsSaying(statuses: Record<string, string> = {}) {
  const asked: { key: string; by: string; objectKey: string }[] = [];
  const claims: ComplianceClaims = {
    settle: async (key, request, objectKey) => {
      asked.push({ key, by: request.by, objectKey });
      const status = statuses[key] ?? 'DONE';
      return status === 'absent' ? 'gone' : status === 'DONE' ? 'redacted' : 'deferred';
    },
  };
  return { asked, claims };
}

const batch = (events: EventMessage[]) =>
  JSON.stringify({ v: 2, archivedAt: '2026-12-02T10:00:05.000Z', events });
const logs = () => {
  const lines: { message: string; details: Record<string, unknown> }[] = [];
  return {
    lines,
    info: (message: string, details: Record<string, unknown>) => lines.push({ message, details }),
  };
};

describe('complianceRequestOf', () => {
  it('reads the signed shop, customer and orders of the three topics, and nothing else', () => {
    expect(complianceRequestOf(redactAlice)).toEqual({
      topic: 'customers/redact',
      shop: SHOP,
      customerId: '111',
      email: 'alice@example.com',
      phone: '+15550001111',
      orderIds: ['9003'],
    });
    expect(
      complianceRequestOf({
        provider: 'shopify',
        eventType: 'customers/data_request',
        payload: { shop_domain: SHOP, customer: alice, orders_requested: [9001], data_request: { id: 9999 } },
      }),
    ).toMatchObject({ orderIds: ['9001'], requestId: '9999' });
    expect(
      complianceRequestOf({ provider: 'shopify', eventType: 'shop/redact', payload: { shop_domain: SHOP } }),
    ).toEqual({ topic: 'shop/redact', shop: SHOP, orderIds: [] });
    expect(
      complianceRequestOf({
        provider: 'shopify',
        eventType: 'orders/create',
        payload: { shop_domain: SHOP },
      }),
    ).toBeUndefined();
    expect(
      complianceRequestOf({
        provider: 'stripe',
        eventType: 'customers/redact',
        payload: { shop_domain: SHOP },
      }),
    ).toBeUndefined();
    // No signed shop: nothing to scope the request to.
    expect(
      complianceRequestOf({ provider: 'shopify', eventType: 'shop/redact', payload: {} }),
    ).toBeUndefined();
  });
});

describe('complianceRequestOf reads ids and contacts only as Shopify sends them', () => {
  const read = (customer: unknown, extra: Record<string, unknown> = {}) =>
    complianceRequestOf({
      provider: 'shopify',
      eventType: 'customers/redact',
      payload: { shop_domain: SHOP, customer, ...extra },
    });

  it.each([
    ['a number id', { id: 111 }, { customerId: '111' }],
    ['a string id', { id: '111' }, { customerId: '111' }],
    ['an empty string id', { id: '' }, {}],
    ['a number that is not finite', { id: Number.NaN }, {}],
    ['an id that is neither', { id: true }, {}],
    ['an object id', { id: { value: 1 } }, {}],
    [
      'an email and phone, trimmed and lower-cased',
      { email: ' Alice@Example.COM ', phone: ' +1555 ' },
      { email: 'alice@example.com', phone: '+1555' },
    ],
    ['blank email and phone', { email: '   ', phone: '' }, {}],
    ['an email and phone that are not text', { email: 5, phone: ['+1555'] }, {}],
    ['no customer object', null, {}],
  ])('%s', (_name, customer, expected) => {
    // Exactly these fields: an absent one is not there at all.
    expect(read(customer)).toStrictEqual({
      topic: 'customers/redact',
      shop: SHOP,
      ...expected,
      orderIds: [],
    });
  });

  it("reads a data request's id as text, and none when it has none", () => {
    const dataRequest = (data_request: unknown) =>
      complianceRequestOf({
        provider: 'shopify',
        eventType: 'customers/data_request',
        payload: { shop_domain: SHOP, data_request },
      });
    expect(dataRequest({ id: 9999 })).toStrictEqual({
      topic: 'customers/data_request',
      shop: SHOP,
      orderIds: [],
      requestId: '9999',
    });
    expect(dataRequest({})).toStrictEqual({ topic: 'customers/data_request', shop: SHOP, orderIds: [] });
    expect(dataRequest([{ id: 1 }])).toStrictEqual({
      topic: 'customers/data_request',
      shop: SHOP,
      orderIds: [],
    });
  });

  it('reads the signed shop domain trimmed and lower-cased, and order ids as text, dropping what is neither', () => {
    expect(
      read(undefined, {
        shop_domain: '  Example-Shop.MyShopify.com ',
        orders_to_redact: [1, '2', '', null, 3.5],
      }),
    ).toStrictEqual({
      topic: 'customers/redact',
      shop: SHOP,
      orderIds: ['1', '2', '3.5'],
    });
    expect(read(undefined, { shop_domain: '   ' })).toBeUndefined();
    expect(read(undefined, { shop_domain: 42 })).toBeUndefined();
  });
});

describe('isAbout', () => {
  const request = complianceRequestOf(redactAlice) as ComplianceRequest;
  it("matches the customer's events of that shop by id, listed order, email or phone", () => {
    expect(isAbout(request, aliceOrder)).toBe(true);
    expect(isAbout(request, aliceProfile)).toBe(true);
    expect(isAbout(request, guestOrderListed)).toBe(true);
    expect(isAbout(request, event('w6', 'checkouts/create', { phone: '+15550001111' }))).toBe(true);
    expect(isAbout(request, bobOrder)).toBe(false);
    expect(isAbout(request, otherShopAlice)).toBe(false);
    expect(isAbout(request, { ...aliceOrder, body: 'not json' })).toBe(false);
  });
  it('matches every event of the shop for shop/redact', () => {
    const shop: ComplianceRequest = { topic: 'shop/redact', shop: SHOP, orderIds: [] };
    expect([aliceOrder, bobOrder, otherShopAlice].map((e) => isAbout(shop, e))).toEqual([true, true, false]);
  });
});

describe('isAbout, one criterion at a time', () => {
  const everything: ComplianceRequest = {
    topic: 'customers/redact',
    shop: SHOP,
    customerId: '111',
    email: 'alice@example.com',
    phone: '+15550001111',
    orderIds: ['9003', '9004'],
  };
  /** A request naming nothing but the shop (a customer Shopify knows no details of). */
  const nothing: ComplianceRequest = { topic: 'customers/redact', shop: SHOP, orderIds: [] };
  it.each([
    ['the customer id of an order', everything, 'orders/create', { id: 1, customer: { id: 111 } }, true],
    ['the id of a customer topic', everything, 'customers/update', { id: 111 }, true],
    ['an order whose own id is the customer id', everything, 'orders/create', { id: 111 }, false],
    ['a listed order (the second)', everything, 'orders/paid', { id: 9004 }, true],
    ['a customer topic whose id is a listed order', everything, 'customers/update', { id: 9003 }, false],
    ['the email, any case', everything, 'checkouts/create', { email: 'ALICE@example.com' }, true],
    ['the contact email', everything, 'checkouts/create', { contact_email: 'alice@example.com' }, true],
    [
      "the customer's email",
      everything,
      'checkouts/create',
      { customer: { email: 'alice@example.com' } },
      true,
    ],
    ["the customer's phone", everything, 'checkouts/create', { customer: { phone: '+15550001111' } }, true],
    [
      'none of them',
      everything,
      'orders/create',
      { id: 5, email: 'bob@example.com', customer: { id: 222 } },
      false,
    ],
    ['an event naming no one, for a request naming no one', nothing, 'orders/create', { id: 5 }, false],
    ['a body that is JSON null', everything, 'orders/create', null, false],
  ] as const)('%s: %s', (_name, request, topic, payload, expected) => {
    const message = { ...event('w-one', topic, {}), body: JSON.stringify(payload) };
    expect(isAbout(request, message)).toBe(expected);
  });

  it("never matches another provider's event, even on the shop's account", () => {
    expect(isAbout(everything, { ...aliceOrder, provider: 'stripe' })).toBe(false);
    expect(isAbout({ ...everything, topic: 'shop/redact' }, { ...aliceOrder, provider: 'stripe' })).toBe(
      false,
    );
  });
});

describe('applyCompliance', () => {
  const request = complianceRequestOf(redactAlice) as ComplianceRequest;
  const self = { key: `shopify:${SHOP}:redact-1`, eventId: 'redact-1' };
  const own = event('redact-1', 'customers/redact', redactAlice.payload);

  function archive() {
    const store = new MemoryStore();
    store.put('events/shopify/2026-12-02/batch-1.json', batch([aliceOrder, bobOrder, own]));
    store.put('events/shopify/2026-12-02/batch-2.json', batch([aliceProfile, guestOrderListed]));
    store.put(
      `events/shopify/2026-12-02/${encodeURIComponent(aliceOrder.key)}-big.json`,
      JSON.stringify({ ...aliceOrder, archivedAt: 'A' }),
    );
    store.put('events/shopify/2026-12-02/batch-3.json', batch([otherShopAlice]));
    store.put('events/stripe/2026-12-02/batch-9.json', batch([{ ...aliceOrder, provider: 'stripe' }]));
    store.put(`compliance/shopify/${SHOP}/customer-111/data-request-1.json`, '{}');
    store.put(`compliance/shopify/${SHOP}/customer-222/data-request-2.json`, '{}');
    return store;
  }

  it("redacts the customer: rewrites batches without them, deletes what is left empty and one-event objects, and the customer's exports", async () => {
    const store = archive();
    const log = logs();
    const { asked, claims } = claimsSaying();
    const result = await applyCompliance(request, self, { store, log, claims });
    // Every removed event's claim is asked, and so marked (a copy in two objects: once per object).
    expect([...new Set(asked.map((a) => a.key))].sort()).toEqual(
      [aliceOrder.key, aliceProfile.key, guestOrderListed.key].sort(),
    );
    expect(store.events('events/shopify/2026-12-02/batch-1.json')).toEqual([bobOrder.key, self.key]);
    expect(store.objects.has('events/shopify/2026-12-02/batch-2.json')).toBe(false);
    expect([...store.objects.keys()].some((k) => k.endsWith('-big.json'))).toBe(false);
    expect(store.events('events/shopify/2026-12-02/batch-3.json')).toEqual([otherShopAlice.key]);
    expect(store.objects.has('events/stripe/2026-12-02/batch-9.json')).toBe(true);
    expect(store.objects.has(`compliance/shopify/${SHOP}/customer-111/data-request-1.json`)).toBe(false);
    expect(store.objects.has(`compliance/shopify/${SHOP}/customer-222/data-request-2.json`)).toBe(true);
    // Exactly these: a redaction writes no export.
    expect(result).toStrictEqual({
      scannedObjects: 4,
      matchedEvents: 4,
      deferredEvents: 0,
      rewrittenObjects: 1,
      deletedObjects: 2,
      deletedExports: 1,
    });
    // The rewritten batch keeps its shape.
    expect(JSON.parse(store.objects.get('events/shopify/2026-12-02/batch-1.json')?.text ?? '')).toMatchObject(
      {
        v: 2,
        archivedAt: '2026-12-02T10:00:05.000Z',
      },
    );
    // One audit line, counts and keys only: no email or phone anywhere in it.
    expect(log.lines).toStrictEqual([
      {
        message: 'compliance request applied',
        details: {
          provider: 'shopify',
          topic: 'customers/redact',
          shop: SHOP,
          key: self.key,
          customerId: '111',
          ...result,
          removedEventKeys: [aliceOrder.key, aliceProfile.key, guestOrderListed.key, aliceOrder.key],
          deferredEventKeys: [],
        },
      },
    ]);
    expect(JSON.stringify(log.lines)).not.toMatch(/alice@|example\.com"|\+1555/i);

    // Repeat-safe: a retried request finds nothing more to remove.
    const again = await applyCompliance(request, self, { store, log: logs(), claims });
    expect(again).toMatchObject({ matchedEvents: 0, rewrittenObjects: 0, deletedObjects: 0 });
  });

  it('re-reads and retries a batch that another writer changed between the read and the rewrite', async () => {
    const store = new MemoryStore();
    const key = 'events/shopify/2026-12-02/batch-1.json';
    store.put(key, batch([aliceOrder, bobOrder, aliceProfile]));
    // Another redaction (of Bob) lands first: a blind write would bring Bob's event back.
    store.interfere = () => store.put(key, batch([aliceOrder, aliceProfile]));
    await applyCompliance(request, self, { store, log: logs(), claims: claimsSaying().claims });
    expect(store.objects.has(key)).toBe(false);
  });

  it('gives up after 5 attempts with an error naming the object (the request is retried) when it keeps changing', async () => {
    const store = new MemoryStore();
    const key = 'events/shopify/2026-12-02/batch-1.json';
    store.put(key, batch([aliceOrder, bobOrder]));
    let changes = 0;
    const keepChanging = () => {
      changes++;
      store.put(key, batch([aliceOrder, bobOrder]));
      store.interfere = keepChanging;
    };
    store.interfere = keepChanging;
    await expect(
      applyCompliance(request, self, { store, log: logs(), claims: claimsSaying().claims }),
    ).rejects.toThrow(
      `archive object ${key} kept changing during a compliance redaction; the request is retried`,
    );
    expect(changes).toBe(5);
  });

  it('skips an object removed after it was listed (another redaction deleted it), for a redaction and an export', async () => {
    for (const topic of ['customers/redact', 'customers/data_request'] as const) {
      const store = archive();
      // After the first object, the next one goes.
      let first = true;
      const afterObject = () => {
        if (first) store.objects.delete('events/shopify/2026-12-02/batch-2.json');
        first = false;
      };
      const result = await applyCompliance({ ...request, topic }, self, {
        store,
        log: logs(),
        claims: claimsSaying().claims,
        afterObject,
      });
      // batch-1 and the claim-checked object still hold Alice's order; batch-2 was gone when read.
      expect(result).toMatchObject({ scannedObjects: 4, matchedEvents: 2, deferredEvents: 0 });
    }
  });

  it('stops before the next object when less than a second of the invocation is left, saying how far it got', async () => {
    // Found by the soak (docs/soak.md): a scan longer than the processor's timeout was cut off with
    // nothing said, its claim left PROCESSING, on every retry.
    for (const topic of ['customers/redact', 'customers/data_request'] as const) {
      const store = archive();
      const left = [5_000, 3_000, 999];
      const result = applyCompliance({ ...request, topic }, self, {
        store,
        log: logs(),
        claims: claimsSaying().claims,
        timeLeftMs: () => left.shift() ?? 0,
      });
      await expect(result).rejects.toThrow(ComplianceDeadlineError);
      await expect(result).rejects.toThrow(
        "the compliance scan ran out of time after 2 archive objects: raise the processor's timeout",
      );
    }
    // A second exactly is enough for one more object.
    const store = archive();
    const result = await applyCompliance(request, self, {
      store,
      log: logs(),
      claims: claimsSaying().claims,
      timeLeftMs: () => 1_000,
    });
    expect(result.scannedObjects).toBe(4);
  });

  it("a request that names no customer id keeps to the shop's customer-unknown exports", async () => {
    const store = archive();
    store.put(`compliance/shopify/${SHOP}/customer-unknown/data-request-3.json`, '{}');
    const { customerId: _id, ...byEmail } = request;
    const log = logs();
    const redacted = await applyCompliance(byEmail, self, { store, log, claims: claimsSaying().claims });
    expect(redacted.deletedExports).toBe(1);
    expect(log.lines[0]?.details).not.toHaveProperty('customerId');
    expect([...store.objects.keys()].filter((k) => k.startsWith('compliance/')).sort()).toEqual([
      `compliance/shopify/${SHOP}/customer-111/data-request-1.json`,
      `compliance/shopify/${SHOP}/customer-222/data-request-2.json`,
    ]);
    const exported = await applyCompliance({ ...byEmail, topic: 'customers/data_request' }, self, {
      store,
      log: logs(),
      claims: claimsSaying().claims,
    });
    expect(exported.exportKey).toBe(`compliance/shopify/${SHOP}/customer-unknown/data-request-redact-1.json`);
  });

  it('logs the first 50 removed and the first 50 kept event keys, and counts them all', async () => {
    const store = new MemoryStore();
    const many = (prefix: string) =>
      Array.from({ length: 60 }, (_, i) =>
        event(`${prefix}-${String(i).padStart(2, '0')}`, 'orders/create', { id: 1, customer: alice }),
      );
    const [removed, kept] = [many('r'), many('k')];
    store.put('events/shopify/2026-12-02/batch-1.json', batch([...removed, ...kept]));
    const log = logs();
    const { claims } = claimsSaying(Object.fromEntries(kept.map((e) => [e.key, 'FAILED'])));
    const result = await applyCompliance(request, self, { store, log, claims });
    expect(result).toMatchObject({ matchedEvents: 60, deferredEvents: 60 });
    expect(log.lines[0]?.details).toMatchObject({
      removedEventKeys: removed.slice(0, 50).map((e) => e.key),
      deferredEventKeys: kept.slice(0, 50).map((e) => e.key),
    });
  });

  it('shop/redact removes every event and export of the shop, and only that shop', async () => {
    const store = archive();
    const result = await applyCompliance({ topic: 'shop/redact', shop: SHOP, orderIds: [] }, self, {
      store,
      log: logs(),
      claims: claimsSaying().claims,
    });
    expect(store.events('events/shopify/2026-12-02/batch-1.json')).toEqual([self.key]);
    expect(store.events('events/shopify/2026-12-02/batch-3.json')).toEqual([otherShopAlice.key]);
    expect([...store.objects.keys()].filter((k) => k.startsWith('compliance/'))).toEqual([]);
    expect(result).toMatchObject({ matchedEvents: 5, deletedExports: 2 });
  });

  it('data_request writes an export of the customer events and removes nothing; the fault point runs per object', async () => {
    const store = archive();
    const before = [...store.objects.keys()];
    const seen: string[] = [];
    const dataRequest: ComplianceRequest = { ...request, topic: 'customers/data_request', requestId: '9999' };
    const { asked, claims } = claimsSaying();
    const result = await applyCompliance(dataRequest, self, {
      store,
      log: logs(),
      claims,
      clock: () => Date.parse('2026-12-03T00:00:00Z'),
      afterObject: (id) => seen.push(id),
    });
    const key = `compliance/shopify/${SHOP}/customer-111/data-request-9999.json`;
    expect(result.exportKey).toBe(key);
    expect([...store.objects.keys()].filter((k) => !before.includes(k))).toEqual([key]);
    const exported = JSON.parse(store.objects.get(key)?.text ?? '');
    expect(exported).toMatchObject({
      shop: SHOP,
      customerId: '111',
      dataRequestId: '9999',
      generatedAt: '2026-12-03T00:00:00.000Z',
    });
    expect(exported.events.map((e: { key: string }) => e.key).sort()).toEqual(
      [aliceOrder.key, aliceProfile.key, guestOrderListed.key].sort(),
    );
    expect(exported.events[0].payload).toMatchObject({ customer: { id: 111 } });
    expect(result).toStrictEqual({
      scannedObjects: 4,
      matchedEvents: 4,
      deferredEvents: 0,
      rewrittenObjects: 0,
      deletedObjects: 0,
      deletedExports: 0,
      exportKey: key,
    });
    expect(seen).toEqual(['redact-1', 'redact-1', 'redact-1', 'redact-1']);
    // An export removes nothing, so it asks no claim.
    expect(asked).toEqual([]);
  });

  it('writes the export whole: the request, then one entry per event, oldest first (ties by key)', async () => {
    const store = new MemoryStore();
    const at = (e: EventMessage, receivedAt: string) => ({ ...e, receivedAt });
    const later = at(aliceOrder, '2026-12-02T11:00:00.000Z');
    const early = at(aliceProfile, '2026-12-01T09:00:00.000Z');
    const tieB = at(event('w-b', 'orders/paid', { id: 9003 }), '2026-12-01T10:00:00.000Z');
    const tieA = at(event('w-a', 'orders/paid', { id: 9003 }), '2026-12-01T10:00:00.000Z');
    store.put('events/shopify/2026-12-02/batch-1.json', batch([later, tieB, early, tieA]));
    const log = logs();
    const dataRequest: ComplianceRequest = { ...request, topic: 'customers/data_request', requestId: '77' };
    const result = await applyCompliance(dataRequest, self, {
      store,
      log,
      claims: claimsSaying().claims,
      clock: () => Date.parse('2026-12-03T00:00:00Z'),
    });
    const key = `compliance/shopify/${SHOP}/customer-111/data-request-77.json`;
    const entry = (e: EventMessage) => ({
      key: e.key,
      eventType: e.eventType,
      eventId: e.eventId,
      receivedAt: e.receivedAt,
      payload: JSON.parse(e.body),
    });
    expect(JSON.parse(store.objects.get(key)?.text ?? '')).toStrictEqual({
      v: 1,
      provider: 'shopify',
      shop: SHOP,
      customerId: '111',
      dataRequestId: '77',
      ordersRequested: ['9003'],
      generatedAt: '2026-12-03T00:00:00.000Z',
      note: 'The archived webhook payloads about this customer; business tables are the application’s to add.',
      events: [early, tieA, tieB, later].map(entry),
    });
    expect(log.lines).toStrictEqual([
      {
        message: 'compliance request applied',
        details: {
          provider: 'shopify',
          topic: 'customers/data_request',
          shop: SHOP,
          key: self.key,
          customerId: '111',
          dataRequestId: '77',
          ...result,
          removedEventKeys: [],
          deferredEventKeys: [],
        },
      },
    ]);
  });

  it('keeps every event whose claim is not DONE where it is, removes the rest, and counts them deferred', async () => {
    const store = archive();
    const log = logs();
    const bigKey = `events/shopify/2026-12-02/${encodeURIComponent(aliceOrder.key)}-big.json`;
    // Alice's order is still failing (its claim-checked body is its only copy); the guest order sits
    // in the DLQ; her profile update is applied; an event whose claim is gone is removed.
    const { asked, claims } = claimsSaying({
      [aliceOrder.key]: 'PROCESSING',
      [guestOrderListed.key]: 'FAILED',
      [aliceProfile.key]: 'DONE',
      'shopify:x:old': 'absent',
    });
    store.put('events/shopify/2026-12-01/batch-0.json', batch([{ ...aliceOrder, key: 'shopify:x:old' }]));
    const result = await applyCompliance(request, self, { store, log, claims });
    expect(store.events('events/shopify/2026-12-02/batch-1.json')).toEqual([
      aliceOrder.key,
      bobOrder.key,
      self.key,
    ]);
    expect(store.events('events/shopify/2026-12-02/batch-2.json')).toEqual([guestOrderListed.key]);
    expect(store.events(bigKey)).toEqual([aliceOrder.key]);
    expect(store.objects.has('events/shopify/2026-12-01/batch-0.json')).toBe(false);
    // Each kept event's claim was asked for each object it is in, by this request.
    expect(
      asked
        .filter((a) => a.key === aliceOrder.key)
        .map((a) => a.objectKey)
        .sort(),
    ).toEqual(['events/shopify/2026-12-02/batch-1.json', bigKey].sort());
    expect(new Set(asked.map((a) => a.by))).toEqual(new Set([self.key]));
    expect(result).toMatchObject({
      matchedEvents: 2,
      deferredEvents: 2,
      rewrittenObjects: 1,
      deletedObjects: 1,
    });
    expect(log.lines[0]?.details).toMatchObject({
      deferredEvents: 2,
      deferredEventKeys: expect.arrayContaining([aliceOrder.key, guestOrderListed.key]),
      removedEventKeys: expect.arrayContaining([aliceProfile.key]),
    });
  });

  it('removes nothing from an object whose event claims cannot be read: the request fails and is retried', async () => {
    const store = archive();
    const before = new Map([...store.objects].map(([k, v]) => [k, v.text]));
    const failing: ComplianceClaims = {
      settle: async () => {
        throw new Error('ProvisionedThroughputExceededException');
      },
    };
    await expect(applyCompliance(request, self, { store, log: logs(), claims: failing })).rejects.toThrow(
      'ProvisionedThroughputExceededException',
    );
    expect(new Map([...store.objects].map(([k, v]) => [k, v.text]))).toEqual(before);
  });
});
