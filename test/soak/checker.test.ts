/**
 * The soak's checker finds each kind of violation it promises, from observations built by hand: a
 * sound run has none, and each broken guarantee (a doubled receipt, a lost event, a stale row, ...)
 * is reported once, naming the event.
 */
import { describe, expect, it } from 'vitest';
import { check, type Item, type Observation } from '../../soak/checker.js';
import type { EffectCall } from '../../soak/effects-server.js';
import type { SoakEvent, Workload } from '../../soak/workload.js';

const stripeEvent = (index: number, type: string, version: number, status: string): SoakEvent => ({
  index,
  provider: 'stripe',
  type,
  eventId: `evt_${index}`,
  token: `t${index}z`,
  object: 'stripe:pi_1',
  version,
  at: version,
  expect: { status },
  effects: type === 'payment_intent.succeeded' ? ['ledger', 'receipt'] : [],
  fields: { intent: 'pi_1', status },
});

const WORKLOAD: Workload = {
  seed: 'hand',
  objects: [
    { id: 'stripe:pi_1', provider: 'stripe', table: 'payments', objectId: 'pi_1' },
    { id: 'square:SQ1', provider: 'square', table: 'resources', objectId: 'SQ1' },
  ],
  events: [
    stripeEvent(0, 'payment_intent.processing', 100, 'processing'),
    stripeEvent(1, 'payment_intent.succeeded', 101, 'succeeded'),
    {
      index: 2,
      provider: 'square',
      type: 'payment.updated',
      eventId: 'sq_2',
      token: 't2z',
      object: 'square:SQ1',
      version: 50,
      at: 50,
      expect: { status: 'COMPLETED' },
      effects: [],
      fields: {},
    },
  ],
  sends: [],
  durationMs: 0,
};

const claim = (overrides: Record<string, unknown>): Item => ({ status: 'DONE', ...overrides });
const call = (adapter: string, overrides: Partial<EffectCall> = {}): EffectCall => ({
  adapter,
  idempotencyKey: 'k1',
  subject: 'stripe:platform:pi_1',
  acted: true,
  replay: false,
  fault: 'none',
  at: 0,
  ...overrides,
});

function sound(): Observation {
  return {
    responses: [
      { event: 0, status: 200, outcome: 'accepted' },
      { event: 1, status: 200, outcome: 'accepted' },
      { event: 1, status: 200, outcome: 'duplicate' },
      { event: 2, status: 200, outcome: 'accepted' },
    ],
    claims: [
      claim({ pk: 'c0', provider: 'stripe', objectId: 'pi_1', eventType: 'payment_intent.processing' }),
      claim({ pk: 'c1', provider: 'stripe', objectId: 'pi_1', eventType: 'payment_intent.succeeded' }),
      claim({ pk: 'c2', provider: 'square', eventId: 'sq_2' }),
    ],
    rows: {
      payments: [{ provider: 'stripe', objectId: 'pi_1', status: 'succeeded', lastEventId: 'evt_1' }],
      resources: [{ provider: 'square', objectId: 'SQ1', status: 'COMPLETED', lastEventId: 'sq_2' }],
    },
    dlqKeys: [],
    effects: [call('ledger'), call('ledger', { replay: true, acted: false }), call('mailer')],
  };
}

const kinds = (observation: Observation) => check(WORKLOAD, observation).violations.map((v) => v.kind);

const withClaim = (observation: Observation, pk: string, changes: Record<string, unknown>): Observation => ({
  ...observation,
  claims: observation.claims.map((c) => (c.pk === pk ? { ...c, ...changes } : c)),
});

describe('the soak checker', () => {
  it('finds nothing wrong in a sound run, and counts it', () => {
    const result = check(WORKLOAD, sound());
    expect(result.violations).toEqual([]);
    expect(result.summary).toMatchObject({ accepted: 3, done: 3, failedInDlq: 0 });
    expect(result.summary.effects).toEqual({
      ledger: { events: 1, acted: 1, replays: 1, inDoubt: 0 },
      receipt: { events: 1, acted: 1, replays: 0, inDoubt: 0 },
    });
  });

  it('reports a receipt sent twice for one event, with the calls', () => {
    const observation = { ...sound(), effects: [...sound().effects, call('mailer')] };
    const [violation] = check(WORKLOAD, observation).violations;
    expect(violation).toMatchObject({ kind: 'effect-repeated', event: 1 });
    expect(violation?.calls).toHaveLength(2);
    expect(violation?.message).toBe('receipt acted 2 times for one event');
  });

  it('reports a ledger posting made twice under different keys', () => {
    const observation = {
      ...sound(),
      effects: [...sound().effects, call('ledger', { idempotencyKey: 'k2' })],
    };
    expect(kinds(observation)).toEqual(['effect-repeated']);
  });

  it('accepts a receipt that never acted when the claim reports it in doubt, and not otherwise', () => {
    const noReceipt = { ...sound(), effects: sound().effects.filter((c) => c.adapter !== 'mailer') };
    expect(kinds(noReceipt)).toEqual(['effect-dropped']);
    const reported = withClaim(noReceipt, 'c1', { unresumedEffects: ['receipt'] });
    expect(kinds(reported)).toEqual([]);
    expect(check(WORKLOAD, reported).summary.effects.receipt?.inDoubt).toBe(1);
  });

  it('reports a DONE event whose ledger never acted', () => {
    const noLedger = { ...sound(), effects: sound().effects.filter((c) => c.adapter !== 'ledger') };
    expect(kinds(noLedger)).toEqual(['effect-missing']);
  });

  it('reports an effect for an object whose events run none', () => {
    const stray = call('mailer', { subject: 'square:platform:SQ1' });
    expect(kinds({ ...sound(), effects: [...sound().effects, stray] })).toEqual(['effect-unexpected']);
  });

  it('reports an accepted event without a claim, or FAILED with no DLQ message or no reason', () => {
    const observation = sound();
    expect(kinds({ ...observation, claims: observation.claims.filter((c) => c.pk !== 'c2') })).toEqual([
      'lost',
    ]);
    const failed = withClaim(observation, 'c2', { status: 'FAILED', lastError: 'boom' });
    expect(kinds(failed)).toEqual(['lost']);
    expect(kinds({ ...failed, dlqKeys: ['c2'] })).toEqual([]);
    expect(check(WORKLOAD, { ...failed, dlqKeys: ['c2'] }).summary.failedInDlq).toBe(1);
    expect(kinds({ ...withClaim(observation, 'c2', { status: 'FAILED' }), dlqKeys: ['c2'] })).toEqual([
      'lost',
    ]);
  });

  it('reports a claim left unfinished, unless the sweeper reported it stuck', () => {
    const unfinished = withClaim(sound(), 'c2', { status: 'ENQUEUED' });
    expect(kinds(unfinished)).toEqual(['unfinished']);
    expect(kinds(withClaim(unfinished, 'c2', { stuckAt: '2026-12-07T00:00:00Z' }))).toEqual([]);
  });

  it('reports a row that an older event wrote last, or that says something else', () => {
    const observation = sound();
    const stale = {
      ...observation,
      rows: {
        ...observation.rows,
        payments: [{ provider: 'stripe', objectId: 'pi_1', status: 'processing', lastEventId: 'evt_0' }],
      },
    };
    expect(kinds(stale)).toEqual(['state']);
    const garbled = {
      ...observation,
      rows: {
        ...observation.rows,
        resources: [{ provider: 'square', objectId: 'SQ1', status: 'X', lastEventId: 'sq_2' }],
      },
    };
    expect(check(WORKLOAD, garbled).violations[0]?.message).toContain('status is "X", expected "COMPLETED"');
    expect(kinds({ ...observation, rows: { ...observation.rows, resources: [] } })).toEqual(['state']);
  });

  it('takes a row from a later event that applied its state and then failed', () => {
    const observation = withClaim(
      {
        ...sound(),
        effects: [],
        rows: {
          ...sound().rows,
          payments: [{ provider: 'stripe', objectId: 'pi_1', status: 'succeeded', lastEventId: 'evt_1' }],
        },
        dlqKeys: ['c1'],
      },
      'c1',
      { status: 'FAILED', lastError: 'injected fault at processor.afterState' },
    );
    const result = check(WORKLOAD, observation);
    expect(result.violations).toEqual([]);
    expect(result.summary.rowsFromFailed).toBe(1);
  });

  it('reports a valid delivery refused with a 4xx', () => {
    const observation = {
      ...sound(),
      responses: [...sound().responses, { event: 2, status: 401, outcome: 'invalid_signature' }],
    };
    expect(kinds(observation)).toEqual(['refused']);
  });
});
