/**
 * The soak's workload and fault schedule: the same seed plans the same run, every kind of send and
 * every provider the issue names is in it, each delivery it builds passes its provider's own
 * `verify` and `extract`, and each fault rule names a point the stack knows and matches one event.
 */
import { describe, expect, it } from 'vitest';
import { requireProvider } from '../../lambdas/providers/index.js';
import { FAULT_POINT_NAMES, parseFaultPoints } from '../../lambdas/shared/faults.js';
import { signedDelivery } from '../../soak/deliveries.js';
import { planFaults, pointsFor } from '../../soak/faults.js';
import { seededRandom } from '../../soak/random.js';
import { planWorkload, type SoakEvent } from '../../soak/workload.js';

const NOW = 1_767_225_600;
const URL = 'https://hooks.example.com/webhooks/square';
const KNOWN = new Set<string>([...FAULT_POINT_NAMES, 'processor.before<Effect>']);

const plan = (seed: string, events = 600) =>
  planWorkload(seed, seededRandom(seed).fork('workload'), { events });

describe('the soak workload', () => {
  it('is the same for the same seed, and another for another seed', () => {
    expect(plan('s1')).toEqual(plan('s1'));
    expect(plan('s2').events.map((e) => e.eventId)).not.toEqual(plan('s1').events.map((e) => e.eventId));
  });

  it('has every provider, kind of send, a claim-checked push, a redaction and out-of-order histories', () => {
    const workload = plan('mix', 1500);
    expect(new Set(workload.events.map((e) => e.provider))).toEqual(
      new Set(['stripe', 'shopify', 'github', 'square', 'discord']),
    );
    expect(new Set(workload.sends.map((s) => s.kind))).toEqual(
      new Set(['first', 'duplicate', 'concurrent', 'late', 'recreated']),
    );
    expect(workload.events.some((e) => e.bytes !== undefined)).toBe(true);
    expect(workload.events.some((e) => e.type === 'customers/redact')).toBe(true);
    const firsts = workload.sends.filter((s) => s.kind === 'first');
    const outOfOrder = workload.objects.some((object) => {
      const versions = firsts
        .map((s) => workload.events[s.event] as SoakEvent)
        .filter((e) => e.object === object.id)
        .map((e) => e.version);
      return versions.some((v, i) => i > 0 && v < (versions[i - 1] ?? 0));
    });
    expect(outOfOrder).toBe(true);
    // Event ids and fault tokens are unique: a FAULT_POINTS rule matches one event.
    const tokens = workload.events.flatMap((e) => (e.token ? [e.token] : []));
    expect(new Set(tokens).size).toBe(tokens.length);
    for (const token of tokens) {
      expect(workload.events.filter((e) => e.eventId.includes(token))).toHaveLength(1);
    }
  });

  it('builds deliveries each provider verifies and reads back as planned', () => {
    const workload = plan('verify', 400);
    const seen = new Set<string>();
    for (const event of workload.events) {
      const key = `${event.provider} ${event.type.split('.')[0]} ${event.bytes ?? ''}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const provider = requireProvider(event.provider);
      const secret = provider.secret.devSecret;
      const delivery = signedDelivery(event, { secret, url: URL, nowSeconds: NOW });
      const request = { headers: delivery.headers, rawBody: Buffer.from(delivery.body), url: URL };
      expect(provider.verify(request, { secrets: [secret], nowSeconds: NOW }), key).toEqual({ ok: true });
      expect(provider.extract(request), key).toMatchObject({
        ok: true,
        event: { eventId: event.eventId, eventType: event.type },
      });
    }
    expect(seen.size).toBeGreaterThanOrEqual(6);
  });

  it('re-creates a Stripe event under another id with the same body otherwise', () => {
    const event = plan('recreate').events.find((e) => e.provider === 'stripe') as SoakEvent;
    const secret = requireProvider('stripe').secret.devSecret;
    const first = JSON.parse(signedDelivery(event, { secret, url: URL, nowSeconds: NOW }).body);
    const again = JSON.parse(
      signedDelivery(event, { secret, url: URL, nowSeconds: NOW + 5, eventId: `${event.eventId}r` }).body,
    );
    expect(again.id).toBe(`${event.eventId}r`);
    expect({ ...again, id: first.id }).toEqual(first);
  });
});

describe('the soak fault schedule', () => {
  it('names only points the stack knows, parses as FAULT_POINTS, and fits each event', () => {
    const workload = plan('faults', 1000);
    const faults = planFaults(seededRandom('faults'), workload, {
      knownPoints: KNOWN,
      maxReceiveCount: 3,
      adapters: ['ledger', 'mailer'],
    });
    expect(faults.processFaults.length).toBeGreaterThan(100);
    expect(parseFaultPoints(faults.faultPoints)).toHaveLength(faults.processFaults.length);
    const redacted = new Set(
      workload.events.filter((e) => e.type === 'customers/redact').map((e) => e.customer as number),
    );
    for (const fault of faults.processFaults) {
      const event = workload.events[fault.event] as SoakEvent;
      expect(pointsFor(event, redacted)).toContain(fault.point);
      expect(event.eventId).toContain(fault.token);
    }
    const points = new Set(faults.processFaults.map((f) => f.point));
    expect(points).toContain('processor.beforeReceiptMarker');
    expect(points).toContain('processor.crashAfterClaim');
    expect(new Set(faults.actions.map((a) => a.action.kind))).toEqual(
      new Set(['outage', 'redrive', 'replay']),
    );
  });

  it('leaves out the points an older stack does not know', () => {
    const workload = plan('older', 1000);
    const older = new Set(['receiver.afterClaim', 'processor.afterState']);
    const faults = planFaults(seededRandom('older'), workload, {
      knownPoints: older,
      maxReceiveCount: 3,
      adapters: [],
    });
    expect(new Set(faults.processFaults.map((f) => f.point))).toEqual(older);
  });
});
