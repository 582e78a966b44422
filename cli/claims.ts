/**
 * Finding claims for an operator, and the one write the CLI makes to a claim (a forced replay).
 *
 * From provider + event id the key is not always known: it depends on the event type's key rule
 * (Stripe `payment_intent.*` is `stripe:<account>:<pi>:<type>`), and the type is what we do not
 * know yet. So: GetItem on the event-id rule's key first (one read), then a Scan filtered on
 * provider and event id. The table has no index on eventId on purpose: a GSI would double the cost
 * of every claim write on the hot path to speed up a rare operator lookup (docs/operations.md).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { tableNameProblem, tableOutputName } from '../lambdas/processor/extension-names.js';
import { PROVIDER_LIST, requireProvider } from '../lambdas/providers/index.js';
import type { Provider, ProviderId } from '../lambdas/providers/types.js';
import { joinKey } from '../lambdas/shared/keys.js';
import { type ClaimRecord, ClaimStatus } from '../lambdas/store/claim.js';
import { pendingShard } from '../lambdas/store/unfinished-index.js';
import { describeAwsError } from './errors.js';
import { aws, type StackContext } from './stack.js';

/** A business table, by the name the construct's `tables` prop gives it (its output is `<Name>TableName`). */
export type BusinessTable = string;

/** The account scope an event has when its payload names none (docs/rules.md, section 2). */
export function defaultAccount(provider: ProviderId): string {
  return requireProvider(provider).defaultAccount;
}

/** `platform for stripe, else default`: the providers' default accounts, for help texts. */
export function defaultAccountHelp(): string {
  const byAccount = new Map<string, string[]>();
  for (const provider of PROVIDER_LIST) {
    byAccount.set(provider.defaultAccount, [...(byAccount.get(provider.defaultAccount) ?? []), provider.id]);
  }
  // The account most providers share is the "else"; the others are named with their providers.
  const [common, ...others] = [...byAccount].sort((a, b) => b[1].length - a[1].length);
  if (common === undefined) return 'none';
  return [
    ...others.map(([account, ids]) => `${account} for ${ids.join(', ')}`),
    `${others.length ? 'else ' : ''}${common[0]}`,
  ].join(', ');
}

export interface ClaimLookupPlan {
  /** Tried first, with GetItem: the key the event-id rule gives. */
  readonly key: string;
  /** Then, if absent: a Scan with this filter. */
  readonly scan: { readonly provider: ProviderId; readonly eventId: string };
}

export function claimLookupPlan(provider: ProviderId, eventId: string, account?: string): ClaimLookupPlan {
  return {
    key: joinKey([provider, account ?? defaultAccount(provider), eventId]),
    scan: { provider, eventId },
  };
}

const RULE_SHAPES = {
  composite: '<provider>:<account>:<object id>:<event type>',
  'business-object': '<provider>:<account>:<object kind>:<object id>',
} as const;

/** Why the event-id key may miss, for the output: the provider's other key rules. */
export function keyRuleNote(provider: ProviderId | Provider<string>): string {
  const module = typeof provider === 'string' ? requireProvider(provider) : provider;
  const { keyRules } = module.defaults;
  const others = [
    // A provider keyed by another rule by default (a configured KYC vendor: composite).
    ...(keyRules.default.kind === 'event-id'
      ? []
      : [`its events by the ${keyRules.default.kind} rule (${RULE_SHAPES[keyRules.default.kind]})`]),
    ...Object.entries(keyRules.byEventType ?? {}).flatMap(([pattern, rule]) =>
      rule.kind === 'event-id'
        ? []
        : [`${pattern} events by the ${rule.kind} rule (${RULE_SHAPES[rule.kind]})`],
    ),
  ];
  return others.length > 0
    ? `${module.id} keys ${others.join(' and ')}, or the account differs (--account)`
    : 'the account differs (--account), or PROVIDER_SETTINGS gives this event type another key rule';
}

/** `payments:stripe:platform:pi_1` -> `{ table: 'payments', pk: 'stripe:platform:pi_1' }`. */
export function parseWrittenRow(ref: string): { table: BusinessTable; pk: string } | undefined {
  const colon = ref.indexOf(':');
  if (colon <= 0) return undefined;
  const table = ref.slice(0, colon);
  return tableNameProblem(table) === undefined ? { table, pk: ref.slice(colon + 1) } : undefined;
}

export interface ClaimLookup {
  readonly method: 'get' | 'scan';
  /** The key read with GetItem. */
  readonly key: string;
  /** Why a Scan was used. */
  readonly reason?: string;
  /** Items the Scan read (what it costs: every item is read, matching or not). */
  readonly scannedCount?: number;
  readonly pages?: number;
  readonly claims: readonly ClaimRecord[];
}

export async function getClaim(stack: StackContext, key: string): Promise<ClaimRecord | undefined> {
  const table = stack.output('ClaimsTableName');
  const result = await aws(stack, `GetItem on ${table}`, () =>
    stack.doc.send(new GetCommand({ TableName: table, Key: { pk: key }, ConsistentRead: true })),
  );
  return result.Item as ClaimRecord | undefined;
}

export async function findClaimByKey(stack: StackContext, key: string): Promise<ClaimLookup> {
  const claim = await getClaim(stack, key);
  return { method: 'get', key, claims: claim ? [claim] : [] };
}

export async function findClaimsByEvent(
  stack: StackContext,
  provider: ProviderId,
  eventId: string,
  account?: string,
): Promise<ClaimLookup> {
  const plan = claimLookupPlan(provider, eventId, account);
  const direct = await getClaim(stack, plan.key);
  if (direct) return { method: 'get', key: plan.key, claims: [direct] };

  const table = stack.output('ClaimsTableName');
  const claims: ClaimRecord[] = [];
  let scannedCount = 0;
  let pages = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await aws(stack, `Scan on ${table}`, () =>
      stack.doc.send(
        new ScanCommand({
          TableName: table,
          FilterExpression: '#provider = :provider AND #eventId = :eventId',
          ExpressionAttributeNames: { '#provider': 'provider', '#eventId': 'eventId' },
          ExpressionAttributeValues: { ':provider': plan.scan.provider, ':eventId': plan.scan.eventId },
          ConsistentRead: true,
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      ),
    );
    pages += 1;
    scannedCount += page.ScannedCount ?? 0;
    claims.push(...((page.Items ?? []) as ClaimRecord[]));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  claims.sort((a, b) => a.firstSeenAt.localeCompare(b.firstSeenAt) || a.pk.localeCompare(b.pk));
  return {
    method: 'scan',
    key: plan.key,
    reason: `no claim at ${plan.key} (the event-id rule's key); ${keyRuleNote(provider)}`,
    scannedCount,
    pages,
    claims,
  };
}

export async function getBusinessRow(
  stack: StackContext,
  table: BusinessTable,
  pk: string,
): Promise<Record<string, unknown> | undefined> {
  // The stack outputs each business table's name as `<Name>TableName` (lib/webhook-stack.ts).
  const name = stack.output(tableOutputName(table));
  const result = await aws(stack, `GetItem on ${name}`, () =>
    stack.doc.send(new GetCommand({ TableName: name, Key: { pk }, ConsistentRead: true })),
  );
  return result.Item;
}

/**
 * For a forced replay: DONE -> ENQUEUED with `replan` set, so the processor takes the claim again and
 * plans the event again instead of only marking it DONE. The step markers stay: effects they mark
 * done are never run again, whatever the new plan says; the rows, re-written only where this event
 * is newer than what they hold, are where the replay's work is. Nothing else is touched. False when
 * the claim was no longer DONE.
 */
export async function reopenDoneClaim(stack: StackContext, key: string): Promise<boolean> {
  const table = stack.output('ClaimsTableName');
  try {
    await stack.doc.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: key },
        // Unfinished again: back in the sweeper's index, due when a lost replay would be stale.
        UpdateExpression:
          'SET #status = :enqueued, replan = :true, enqueuedAt = :now, sweepShard = :shard, sweepAt = :nowMs',
        ConditionExpression: '#status = :done AND expiresAt > :nowS',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':enqueued': ClaimStatus.Enqueued,
          ':done': ClaimStatus.Done,
          ':true': true,
          ':now': new Date().toISOString(),
          ':shard': pendingShard(key),
          ':nowMs': Date.now(),
          ':nowS': Math.floor(Date.now() / 1000),
        },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw describeAwsError(error, `${stack.label}: UpdateItem on ${table}`) ?? error;
  }
}
