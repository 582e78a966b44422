import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  claimLookupPlan,
  defaultAccount,
  findClaimsByEvent,
  keyRuleNote,
  parseWrittenRow,
} from '../../cli/claims.js';
import type { StackContext } from '../../cli/stack.js';
import { hmacProvider } from '../../lambdas/providers/hmac.js';

type Item = Record<string, unknown> & { pk: string };

/** A stack whose DynamoDB answers from `items`, `pageSize` items per Scan page, recording each request. */
function fakeStack(items: readonly Item[], pageSize = 2) {
  const requests: Array<{ kind: 'get' | 'scan'; input: Record<string, unknown> }> = [];
  const send = async (command: unknown) => {
    if (command instanceof GetCommand) {
      requests.push({ kind: 'get', input: command.input as Record<string, unknown> });
      return { Item: items.find((item) => item.pk === command.input.Key?.pk) };
    }
    if (command instanceof ScanCommand) {
      const input = command.input;
      requests.push({ kind: 'scan', input: input as Record<string, unknown> });
      const start = Number((input.ExclusiveStartKey as { at?: number } | undefined)?.at ?? 0);
      const page = items.slice(start, start + pageSize);
      const values = input.ExpressionAttributeValues ?? {};
      return {
        Items: page.filter(
          (item) => item.provider === values[':provider'] && item.eventId === values[':eventId'],
        ),
        ScannedCount: page.length,
        ...(start + pageSize < items.length ? { LastEvaluatedKey: { at: start + pageSize } } : {}),
      };
    }
    throw new Error('unexpected command');
  };
  const stack = {
    name: 'Test',
    local: true,
    label: 'the test stack',
    outputs: { ClaimsTableName: 'claims' },
    doc: { send },
    output: (name: string) => ({ ClaimsTableName: 'claims' })[name] ?? '',
  } as unknown as StackContext;
  return { stack, requests };
}

const claim = (pk: string, eventId: string, provider = 'stripe'): Item => ({
  pk,
  provider,
  eventId,
  firstSeenAt: '2026-12-02T10:00:00.000Z',
});

describe('claimLookupPlan', () => {
  it('tries the event-id rule key with the provider default account', () => {
    expect(defaultAccount('stripe')).toBe('platform');
    expect(defaultAccount('github')).toBe('default');
    expect(claimLookupPlan('stripe', 'evt_1').key).toBe('stripe:platform:evt_1');
    expect(claimLookupPlan('asaas', 'evt_1').key).toBe('asaas:default:evt_1');
  });

  it('uses --account when given and percent-encodes every part as the receiver does', () => {
    expect(claimLookupPlan('stripe', 'evt_1', 'acct_9').key).toBe('stripe:acct_9:evt_1');
    expect(claimLookupPlan('asaas', 'evt_abc&368604920').key).toBe('asaas:default:evt_abc%26368604920');
  });

  it('scans on the provider and the raw event id', () => {
    expect(claimLookupPlan('asaas', 'evt_abc&1').scan).toEqual({ provider: 'asaas', eventId: 'evt_abc&1' });
  });
});

describe('findClaimsByEvent', () => {
  it('answers from one GetItem when the event-id key exists, without scanning', async () => {
    const { stack, requests } = fakeStack([claim('stripe:platform:evt_1', 'evt_1')]);
    const lookup = await findClaimsByEvent(stack, 'stripe', 'evt_1');
    expect(lookup).toMatchObject({ method: 'get', key: 'stripe:platform:evt_1' });
    expect(lookup.claims.map((c) => c.pk)).toEqual(['stripe:platform:evt_1']);
    expect(requests.map((r) => r.kind)).toEqual(['get']);
    expect(requests[0]?.input).toMatchObject({ ConsistentRead: true });
  });

  it('falls back to a paginated Scan filtered on provider and event id, and says why', async () => {
    const items = [
      claim('stripe:platform:pi_1:payment_intent.created', 'evt_other'),
      claim('github:default:d1', 'evt_2', 'github'),
      claim('stripe:platform:pi_1:payment_intent.succeeded', 'evt_2'),
      claim('stripe:platform:x', 'evt_3'),
      claim('stripe:acct_1:pi_1:payment_intent.succeeded', 'evt_2'),
    ];
    const { stack, requests } = fakeStack(items, 2);
    const lookup = await findClaimsByEvent(stack, 'stripe', 'evt_2');
    expect(requests.map((r) => r.kind)).toEqual(['get', 'scan', 'scan', 'scan']);
    expect(requests[1]?.input).toMatchObject({
      FilterExpression: '#provider = :provider AND #eventId = :eventId',
      ExpressionAttributeValues: { ':provider': 'stripe', ':eventId': 'evt_2' },
    });
    expect(lookup.method).toBe('scan');
    expect(lookup.scannedCount).toBe(5);
    expect(lookup.pages).toBe(3);
    expect(lookup.reason).toContain('no claim at stripe:platform:evt_2');
    expect(lookup.reason).toContain('payment_intent.* events by the composite rule');
    // Several keys for one event id: each is shown.
    expect(lookup.claims.map((c) => c.pk).sort()).toEqual([
      'stripe:acct_1:pi_1:payment_intent.succeeded',
      'stripe:platform:pi_1:payment_intent.succeeded',
    ]);
  });

  it('returns no claims when the scan finds none', async () => {
    const { stack } = fakeStack([claim('stripe:platform:x', 'evt_3')]);
    expect((await findClaimsByEvent(stack, 'stripe', 'evt_missing')).claims).toEqual([]);
  });
});

describe('keyRuleNote', () => {
  it('names the provider rules that do not key by event id', () => {
    expect(keyRuleNote('stripe')).toMatch(/payment_intent\.\* events by the composite rule/);
    expect(keyRuleNote('github')).toMatch(/--account/);
  });

  it("names a configured provider's default rule when it is not the event-id rule", () => {
    const onfido = hmacProvider(
      JSON.parse(readFileSync(join(import.meta.dirname, '../../examples/providers/onfido.json'), 'utf8')),
    );
    expect(keyRuleNote(onfido)).toBe(
      'onfido keys its events by the composite rule (<provider>:<account>:<object id>:<event type>), ' +
        'or the account differs (--account)',
    );
  });
});

describe('parseWrittenRow', () => {
  it('splits at the first colon only', () => {
    expect(parseWrittenRow('payments:stripe:platform:pi_1')).toEqual({
      table: 'payments',
      pk: 'stripe:platform:pi_1',
    });
    expect(parseWrittenRow('resources:github:1:ref:2:refs/heads/main')).toEqual({
      table: 'resources',
      pk: 'github:1:ref:2:refs/heads/main',
    });
  });

  it('refuses what cannot name a business table (its output would be read as one)', () => {
    expect(parseWrittenRow('claims:x')).toBeUndefined();
    expect(parseWrittenRow('Payments:x')).toBeUndefined();
    expect(parseWrittenRow('payments')).toBeUndefined();
    // Any valid name parses; the stack's outputs then say whether it has such a table.
    expect(parseWrittenRow('order-lines:x')).toEqual({ table: 'order-lines', pk: 'x' });
  });
});
