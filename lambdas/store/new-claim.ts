/**
 * Writing a claim where no live one exists: the receiver's first delivery (RECEIVED) and the
 * processor's re-creation of a claim that expired under its message (PROCESSING) share this.
 *
 * Two rules that a plain conditional PutItem broke:
 * - An expired claim of the same event keeps its progress. DynamoDB deletes expired items lazily,
 *   so an item past its TTL may still say how far processing got; overwriting it would make the
 *   next attempt start from nothing and find its own business write "stale". The write is an
 *   UpdateItem that sets the new window's attributes, removes the old window's, and leaves the
 *   progress attributes ({@link PROGRESS_ATTRIBUTES}) as they were. Another event's expired claim
 *   (a composite key re-used after its TTL) is replaced whole.
 * - A write whose response was lost is ours. When the SDK retries a request that had committed,
 *   the retry fails its condition against our own item: the lease token tells, and the caller
 *   proceeds as the holder instead of waiting on itself.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { CLAIM_ABSENT_OR_EXPIRED, type ClaimRecord, isExpired } from './claim.js';
import { epochSeconds } from './claims-table.js';

/** How far processing got: kept when a claim of the same event is created again over its expired item. */
export const PROGRESS_ATTRIBUTES = [
  'lastCompletedStep',
  'plannedEffects',
  'writtenRows',
  'archiveKey',
  'unresumedEffects',
  'unresumedReason',
  'recoveredFrom',
  // An effect call whose outcome is unknown stays unknown: a re-created claim must not call it again.
  'effectAttempt',
  'effectAttemptAt',
] as const;

/** Attributes of one claim window (its lease, its enqueue, how its last attempt ended): never carried over. */
const WINDOW_ATTRIBUTES = [
  'leaseToken',
  'leaseExpiresAt',
  'leaseOwner',
  'enqueuedAt',
  'messageId',
  'lastError',
  'lastErrorAt',
  'outcome',
  'completedAt',
  'failedAt',
  'processingStartedAt',
  'processingAttempts',
  'lastStepAt',
  'replan',
  'objectId',
  'stuckAt',
  'stuckReason',
  'sweeps',
  'lastSweptAt',
  'sweepResend',
] as const;

export type NewClaimResult =
  | { readonly created: true; readonly claim: ClaimRecord }
  | { readonly created: false; readonly existing: ClaimRecord | undefined };

function oldItem(error: ConditionalCheckFailedException): ClaimRecord | undefined {
  // lib-dynamodb does not unmarshall the item carried by the error.
  return error.Item ? (unmarshall(error.Item) as ClaimRecord) : undefined;
}

/**
 * Creates `record` unless a live claim holds the key (then `existing` is that claim, read from the
 * failed condition at no extra cost). One request in the common case; two when another event's
 * expired claim must be replaced.
 */
export async function writeNewClaim(
  doc: DynamoDBDocumentClient,
  tableName: string,
  record: ClaimRecord,
  nowMs: number,
): Promise<NewClaimResult> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':nowS': epochSeconds(nowMs), ':eventId': record.eventId };
  const sets: string[] = [];
  for (const [index, [name, value]] of Object.entries(record).entries()) {
    if (name === 'pk' || value === undefined) continue;
    names[`#s${index}`] = name;
    values[`:s${index}`] = value;
    sets.push(`#s${index} = :s${index}`);
  }
  const fields: Readonly<Record<string, unknown>> = { ...record };
  const removes = WINDOW_ATTRIBUTES.filter((name) => fields[name] === undefined);
  removes.forEach((name, index) => {
    names[`#r${index}`] = name;
  });
  try {
    const result = await doc.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: record.pk },
        UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.map((_, i) => `#r${i}`).join(', ')}` : ''}`,
        ConditionExpression: 'attribute_not_exists(pk) OR (expiresAt <= :nowS AND eventId = :eventId)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
        // The existing item comes back on the error, so a duplicate costs no extra read.
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { created: true, claim: (result.Attributes as ClaimRecord | undefined) ?? record };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const existing = oldItem(error);
    if (existing !== undefined && existing.leaseToken === record.leaseToken)
      return { created: true, claim: existing };
    if (existing === undefined || !isExpired(existing, nowMs)) return { created: false, existing };
    return replaceExpired(doc, tableName, record, nowMs);
  }
}

/** Another event's expired claim: nothing of it applies to this event, so the new claim replaces it. */
async function replaceExpired(
  doc: DynamoDBDocumentClient,
  tableName: string,
  record: ClaimRecord,
  nowMs: number,
): Promise<NewClaimResult> {
  try {
    await doc.send(
      new PutCommand({
        TableName: tableName,
        Item: record,
        ConditionExpression: CLAIM_ABSENT_OR_EXPIRED,
        ExpressionAttributeValues: { ':nowS': epochSeconds(nowMs) },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { created: true, claim: record };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const existing = oldItem(error);
    if (existing !== undefined && existing.leaseToken === record.leaseToken)
      return { created: true, claim: existing };
    return { created: false, existing };
  }
}
