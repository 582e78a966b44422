/**
 * The soak's workload, planned from a seed (pure: no I/O, no clock): business objects that move
 * through a few states each, the provider events that report each move, and when each event is sent
 * and how many times. Everything the checker later expects comes from here.
 *
 * Providers: Stripe (payment intents, composite keys, a ledger and a receipt on success), Shopify
 * (orders, and now and then a `customers/redact` racing the customer's orders), GitHub (pushes to a
 * ref, some of them large enough to be claim-checked), Square (signs the URL) and Discord (Ed25519).
 */
import type { Random } from './random.js';

export const SOAK_PROVIDERS = ['stripe', 'shopify', 'github', 'square', 'discord'] as const;
export type SoakProvider = (typeof SOAK_PROVIDERS)[number];

/** How an object's row is found: the example's tables hold `provider` and `objectId` on every row. */
export interface SoakObject {
  readonly id: string;
  readonly provider: SoakProvider;
  readonly table: 'payments' | 'orders' | 'resources';
  readonly objectId: string;
  /** Shopify: the order's customer (a redaction names it). */
  readonly customer?: number;
}

export interface SoakEvent {
  readonly index: number;
  readonly provider: SoakProvider;
  readonly type: string;
  readonly eventId: string;
  /** The object it changes; absent for a compliance request. */
  readonly object?: string;
  /** Its place in the object's history by the provider's order (higher is later). */
  readonly version: number;
  /** The business time the payload carries (epoch seconds; Discord: the snowflake's milliseconds). */
  readonly at: number;
  /** The row's attributes when this event is the latest applied one. */
  readonly expect: Readonly<Record<string, string | boolean>>;
  /** The effects this event runs when it applies (Stripe's first success: ledger, then receipt). */
  readonly effects: readonly string[];
  /** A unique substring of the event id, for fault points (absent: Discord's ids are bare numbers). */
  readonly token?: string;
  /** GitHub: the body's size, to have it claim-checked. */
  readonly bytes?: number;
  /** Shopify redaction: the customer. */
  readonly customer?: number;
  /** The payload's state fields, read by the delivery builder (./deliveries.ts). */
  readonly fields: Readonly<Record<string, string | number>>;
}

export type SendKind = 'first' | 'duplicate' | 'concurrent' | 'late' | 'recreated';

/** One send of an event: `copies` deliveries at once, `atMs` after the run starts. */
export interface PlannedSend {
  readonly event: number;
  readonly atMs: number;
  readonly copies: number;
  readonly kind: SendKind;
  /** A re-created event: the same fact under another provider event id (Stripe composite keys). */
  readonly eventId?: string;
}

export interface Workload {
  readonly seed: string;
  readonly objects: readonly SoakObject[];
  readonly events: readonly SoakEvent[];
  readonly sends: readonly PlannedSend[];
  /** When the last first send is due (the resends may come later). */
  readonly durationMs: number;
}

export interface WorkloadOptions {
  readonly events: number;
  /** First sends per second. @default 25 */
  readonly rate?: number;
}

/** One 40-bit number per run from the seed, so two runs against one stack share no id. */
const BUSINESS_EPOCH = 1_767_225_600; // 2026-01-01T00:00:00Z
const DISCORD_EPOCH_MS = 1_420_070_400_000;

const PROVIDER_WEIGHTS: ReadonlyArray<readonly [SoakProvider, number]> = [
  ['stripe', 35],
  ['shopify', 25],
  ['github', 15],
  ['square', 15],
  ['discord', 10],
];

const STRIPE_FLOWS = [
  ['payment_intent.created', 'payment_intent.processing', 'payment_intent.succeeded'],
  ['payment_intent.created', 'payment_intent.payment_failed', 'payment_intent.succeeded'],
  ['payment_intent.created', 'payment_intent.processing', 'payment_intent.payment_failed'],
  ['payment_intent.processing', 'payment_intent.succeeded'],
] as const;
const STRIPE_STATUS: Readonly<Record<string, string>> = {
  'payment_intent.created': 'requires_payment_method',
  'payment_intent.processing': 'processing',
  'payment_intent.payment_failed': 'requires_payment_method',
  'payment_intent.succeeded': 'succeeded',
};
const SHOPIFY_STATES = ['pending', 'authorized', 'paid', 'partially_refunded', 'refunded'] as const;
const SQUARE_STATES = ['APPROVED', 'COMPLETED', 'COMPLETED', 'CANCELED'] as const;
const DISCORD_CHOICES = ['approve', 'reject', 'hold'] as const;

function weighted(random: Random): SoakProvider {
  const total = PROVIDER_WEIGHTS.reduce((sum, [, w]) => sum + w, 0);
  let roll = random.next() * total;
  for (const [provider, weight] of PROVIDER_WEIGHTS) {
    roll -= weight;
    if (roll < 0) return provider;
  }
  return 'stripe';
}

/** Plans a workload of about `options.events` events (each object's whole history is kept). */
export function planWorkload(seed: string, random: Random, options: WorkloadOptions): Workload {
  const rate = options.rate ?? 25;
  const run = random.int(0, 0xffffff).toString(36);
  const objects: SoakObject[] = [];
  const events: SoakEvent[] = [];
  const histories: number[][] = [];
  const token = (index: number) => `t${run}x${String(index).padStart(6, '0')}z`;
  let baseAt = BUSINESS_EPOCH + random.int(0, 3_000_000) * 10;
  const add = (event: Omit<SoakEvent, 'index'>): number => {
    const index = events.length;
    events.push({ ...event, index });
    return index;
  };
  /** Shopify customers of this run: a few orders each, so a redaction has something to race. */
  const customers: number[] = [];

  while (events.length < options.events) {
    const provider = weighted(random);
    baseAt += 10;
    const history: number[] = [];
    const n = objects.length;
    switch (provider) {
      case 'stripe': {
        const intent = `pi_${run}${String(n).padStart(8, '0')}`;
        const object: SoakObject = { id: `stripe:${intent}`, provider, table: 'payments', objectId: intent };
        objects.push(object);
        const flow = random.pick(STRIPE_FLOWS);
        flow.forEach((type, step) => {
          const index = events.length;
          const at = baseAt + step;
          history.push(
            add({
              provider,
              type,
              eventId: `evt_${token(index)}`,
              token: token(index),
              object: object.id,
              version: at,
              at,
              expect: { status: STRIPE_STATUS[type] ?? '' },
              effects: type === 'payment_intent.succeeded' ? ['ledger', 'receipt'] : [],
              fields: { intent, status: STRIPE_STATUS[type] ?? '' },
            }),
          );
        });
        break;
      }
      case 'shopify': {
        if (customers.length === 0 || random.chance(0.3))
          customers.push(700_000_000 + random.int(0, 99_999_999));
        const customer = random.pick(customers);
        const orderId = String(6_000_000_000_000 + hashIndex(run, n));
        const object: SoakObject = {
          id: `shopify:${orderId}`,
          provider,
          table: 'orders',
          objectId: orderId,
          customer,
        };
        objects.push(object);
        const steps = random.int(2, 4);
        for (let step = 0; step < steps; step++) {
          const index = events.length;
          const at = baseAt + step;
          const financial = SHOPIFY_STATES[step] ?? 'refunded';
          const updatedAt = new Date(at * 1000).toISOString().replace('.000Z', 'Z');
          history.push(
            add({
              provider,
              type: step === 0 ? 'orders/create' : 'orders/updated',
              eventId: `soak-${token(index)}`,
              token: token(index),
              object: object.id,
              version: at,
              at,
              expect: { financialStatus: financial, orderUpdatedAt: updatedAt },
              effects: [],
              customer,
              fields: { orderId, financial, updatedAt, customer },
            }),
          );
        }
        break;
      }
      case 'github': {
        const ref = `refs/heads/soak-${run}-${n}`;
        const object: SoakObject = {
          id: `github:${ref}`,
          provider,
          table: 'resources',
          objectId: `${GITHUB_REPOSITORY_ID}:${ref}`,
        };
        objects.push(object);
        const steps = random.int(2, 4);
        let before = shaOf(run, n, -1);
        for (let step = 0; step < steps; step++) {
          const index = events.length;
          const at = baseAt + step;
          const after = shaOf(run, n, step);
          history.push(
            add({
              provider,
              type: 'push',
              eventId: `soak-${token(index)}`,
              token: token(index),
              object: object.id,
              version: at,
              at,
              expect: { headSha: after },
              effects: [],
              // Now and then a push past the claim-check threshold (448 KiB): its body goes to S3.
              ...(random.chance(0.04) ? { bytes: 500_000 } : {}),
              fields: { ref, before, after, pushedAt: at },
            }),
          );
          before = after;
        }
        break;
      }
      case 'square': {
        const paymentId = `SQ${run.toUpperCase()}${String(n).padStart(8, '0')}`;
        const object: SoakObject = {
          id: `square:${paymentId}`,
          provider,
          table: 'resources',
          objectId: paymentId,
        };
        objects.push(object);
        const steps = random.int(2, 4);
        for (let step = 0; step < steps; step++) {
          const index = events.length;
          const at = baseAt + step;
          const status = SQUARE_STATES[step] ?? 'CANCELED';
          history.push(
            add({
              provider,
              type: step === 0 ? 'payment.created' : 'payment.updated',
              eventId: `soak-${token(index)}`,
              token: token(index),
              object: object.id,
              version: at,
              at,
              expect: { status },
              effects: [],
              fields: { paymentId, status, updatedAt: new Date(at * 1000).toISOString(), version: step + 1 },
            }),
          );
        }
        break;
      }
      case 'discord': {
        const messageId = snowflake(baseAt * 1000 - 60_000, n);
        const object: SoakObject = {
          id: `discord:${messageId}`,
          provider,
          table: 'resources',
          objectId: messageId,
        };
        objects.push(object);
        const steps = random.int(2, 3);
        for (let step = 0; step < steps; step++) {
          const ms = baseAt * 1000 + step * 250;
          const choice = random.pick(DISCORD_CHOICES);
          const eventId = snowflake(ms, events.length);
          history.push(
            add({
              provider,
              type: `message_component.${choice}`,
              eventId,
              object: object.id,
              version: ms,
              at: ms,
              expect: { status: choice },
              effects: [],
              fields: { messageId, choice },
            }),
          );
        }
        break;
      }
    }
    histories.push(history);
  }

  // Redactions: now and then a customer's, sent while that customer's orders are still arriving.
  const redactions: number[] = [];
  for (const customer of customers) {
    if (!random.chance(0.25)) continue;
    const index = events.length;
    redactions.push(
      add({
        provider: 'shopify',
        type: 'customers/redact',
        eventId: `soak-${token(index)}`,
        token: token(index),
        version: 0,
        at: baseAt,
        expect: {},
        effects: [],
        customer,
        fields: { customer },
      }),
    );
  }

  const sends = planSends(random, events, histories, redactions, rate);
  const durationMs = Math.max(0, ...sends.filter((s) => s.kind === 'first').map((s) => s.atMs));
  return { seed, objects, events, sends, durationMs };
}

/**
 * When each event goes out: an object's events within a few seconds of each other, in order or
 * shuffled (out of order); then duplicates one after the other, concurrent copies, late resends
 * (likely after the event is done) and, for Stripe, re-created events under a new id.
 */
function planSends(
  random: Random,
  events: readonly SoakEvent[],
  histories: readonly (readonly number[])[],
  redactions: readonly number[],
  rate: number,
): PlannedSend[] {
  const sends: PlannedSend[] = [];
  const spacing = 1000 / rate;
  let clock = 0;
  const firstAt = new Map<number, number>();
  for (const history of histories) {
    const order = random.chance(0.4) ? random.shuffle(history) : [...history];
    const start = clock;
    for (const index of order) {
      const atMs = Math.round(start + random.next() * 1500);
      firstAt.set(index, atMs);
      sends.push({ event: index, atMs, copies: 1, kind: 'first' });
      clock += spacing;
    }
  }
  const end = clock;
  for (const index of redactions) {
    // While the customer's orders are in flight: anywhere in the run.
    const atMs = Math.round(random.next() * end);
    firstAt.set(index, atMs);
    sends.push({ event: index, atMs, copies: 1, kind: 'first' });
  }
  for (const event of events) {
    const first = firstAt.get(event.index) ?? 0;
    if (random.chance(0.2)) {
      const copies = random.int(1, 2);
      for (let c = 0; c < copies; c++) {
        sends.push({ event: event.index, atMs: first + random.int(20, 600), copies: 1, kind: 'duplicate' });
      }
    }
    if (random.chance(0.1)) {
      sends.push({
        event: event.index,
        atMs: first + random.int(0, 300),
        copies: random.int(2, 4),
        kind: 'concurrent',
      });
    }
    if (random.chance(0.12)) {
      sends.push({ event: event.index, atMs: first + random.int(4_000, 20_000), copies: 1, kind: 'late' });
    }
    if (event.provider === 'stripe' && random.chance(0.08)) {
      sends.push({
        event: event.index,
        atMs: first + random.int(100, 8_000),
        copies: 1,
        kind: 'recreated',
        eventId: `${event.eventId}r`,
      });
    }
  }
  return sends.sort((a, b) => a.atMs - b.atMs || a.event - b.event);
}

/** The repository the soak's pushes go to: the GitHub sample's (its hook-target header names it). */
export const GITHUB_REPOSITORY_ID = '17273051';

function hashIndex(run: string, n: number): number {
  return (Number.parseInt(run, 36) % 100_000) * 1_000_000 + n;
}

function shaOf(run: string, n: number, step: number): string {
  const seed = `${run}-${n}-${step}`;
  let out = '';
  let h = 0x811c9dc5;
  while (out.length < 40) {
    for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 0x01000193) >>> 0;
    h = Math.imul(h ^ out.length, 0x01000193) >>> 0;
    out += h.toString(16).padStart(8, '0');
  }
  return out.slice(0, 40);
}

/** A Discord snowflake for a millisecond: the time in the top bits, `n` in the low 22. */
export function snowflake(ms: number, n: number): string {
  return ((BigInt(ms - DISCORD_EPOCH_MS) << 22n) | BigInt(n & 0x3fffff)).toString();
}
