/**
 * The in-memory DynamoDB (lambdas/testing/memory-dynamodb.ts) answers as DynamoDB Local does: each
 * case runs the same requests against both and compares what comes back (the returned item, or the
 * error's name, the item it carries and a transaction's cancellation reasons).
 */
import { randomBytes } from 'node:crypto';
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { memoryDynamoDbClient } from '../../lambdas/testing/memory-dynamodb.js';

type Doc = DynamoDBDocumentClient;

const local = new DynamoDBClient({
  endpoint: inject('dynamoDbEndpoint'),
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
const memory = memoryDynamoDbClient();
const clients = { local, memory };
const tables: string[] = [];

beforeAll(async () => {
  for (const client of Object.values(clients)) {
    for (const name of ['a', 'b']) {
      await client.send(
        new CreateTableCommand({
          TableName: `parity-${name}`.concat(client === local ? `-${suffix}` : ''),
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        }),
      );
    }
  }
  tables.push('a', 'b');
});
afterAll(async () => {
  for (const name of tables)
    await local.send(new DeleteTableCommand({ TableName: `parity-${name}-${suffix}` })).catch(() => {});
  local.destroy();
  memory.destroy();
});
const suffix = randomBytes(4).toString('hex');
const tableName = (client: DynamoDBClient, name: 'a' | 'b') =>
  client === local ? `parity-${name}-${suffix}` : `parity-${name}`;

/** What a request came to, comparable across the two. */
async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  try {
    const result = (await run()) as { Attributes?: unknown; Item?: unknown };
    return { ok: true, attributes: result?.Attributes, item: result?.Item };
  } catch (error) {
    const e = error as {
      name: string;
      Item?: Record<string, never>;
      CancellationReasons?: { Code?: string; Item?: Record<string, never> }[];
    };
    return {
      error: e.name,
      item: e.Item === undefined ? undefined : unmarshall(e.Item),
      reasons: e.CancellationReasons?.map((reason) => ({
        code: reason.Code,
        item: reason.Item === undefined ? undefined : unmarshall(reason.Item),
      })),
    };
  }
}

/** Runs `steps` (each keyed by a fresh pk) against both, and expects the same outcomes. */
async function same(
  steps: readonly ((doc: Doc, table: string, other: string, pk: string) => Promise<unknown>)[],
) {
  const results: Record<string, unknown[]> = {};
  for (const [label, client] of Object.entries(clients)) {
    const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    const pk = `item-${randomBytes(4).toString('hex')}`;
    results[label] = [];
    for (const step of steps)
      results[label].push(await outcome(() => step(doc, tableName(client, 'a'), tableName(client, 'b'), pk)));
    results[label].push(
      await outcome(() => doc.send(new GetCommand({ TableName: tableName(client, 'a'), Key: { pk } }))),
    );
  }
  const normalise = (value: unknown) =>
    JSON.parse(JSON.stringify(value).replaceAll(/item-[0-9a-f]{8}/g, 'PK'));
  expect(normalise(results.memory)).toEqual(normalise(results.local));
  return results.local ?? [];
}

const put =
  (item: Record<string, unknown>): Parameters<typeof same>[0][number] =>
  (doc, table, _other, pk) =>
    doc.send(new PutCommand({ TableName: table, Item: { pk, ...item } }));

describe('the in-memory DynamoDB answers as DynamoDB Local', () => {
  it('updates: SET, if_not_exists, list_append, ADD, REMOVE, ALL_NEW', async () => {
    await same([
      put({ n1: 1, list1: ['a'], gone1: 'x', tags1: new Set(['t1']) }),
      (doc, table, _o, pk) =>
        doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { pk },
            UpdateExpression:
              'SET #n = #n + :one, list1 = list_append(list1, :more), kept1 = if_not_exists(kept1, :k), fresh1 = if_not_exists(fresh1, :k) REMOVE gone1 ADD counter1 :one, tags1 :tags',
            ExpressionAttributeNames: { '#n': 'n1' },
            ExpressionAttributeValues: { ':one': 1, ':more': ['b'], ':k': 'first', ':tags': new Set(['t2']) },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      (doc, table, _o, pk) =>
        doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { pk },
            UpdateExpression: 'SET kept1 = if_not_exists(kept1, :k)',
            ExpressionAttributeValues: { ':k': 'second' },
            ReturnValues: 'ALL_OLD',
          }),
        ),
    ]);
  });

  it('conditions: comparisons, IN, BETWEEN, NOT, functions, types that do not compare', async () => {
    const conditions = [
      ['attribute_exists(pk) AND n > :low', { ':low': 1 }],
      ['n < :text', { ':text': 'zzz' }],
      ['n <> :text', { ':text': 'zzz' }],
      ['#s IN (:a, :b)', { ':a': 'DONE', ':b': 'FAILED' }],
      ['#s IN (:a, :b)', { ':a': 'ENQUEUED', ':b': 'FAILED' }],
      ['n BETWEEN :low AND :high', { ':low': 1, ':high': 5 }],
      ['NOT attribute_exists(missing1) AND begins_with(#s, :p)', { ':p': 'DO' }],
      ['contains(list1, :a) OR size(list1) > :low', { ':a': 'zz', ':low': 5 }],
      ['(attribute_not_exists(#s) OR #s = :a) AND n >= :low', { ':a': 'DONE', ':low': 2 }],
      ['s2 > s1', undefined],
    ] as const;
    for (const [condition, values] of conditions) {
      await same([
        put({ n: 2, status: 'DONE', list1: ['a', 'b'], s1: 'abc', s2: 'abd' }),
        (doc, table, _o, pk) =>
          doc.send(
            new UpdateCommand({
              TableName: table,
              Key: { pk },
              UpdateExpression: 'SET touched = :yes',
              ConditionExpression: condition,
              ...(condition.includes('#s') ? { ExpressionAttributeNames: { '#s': 'status' } } : {}),
              ExpressionAttributeValues: { ':yes': true, ...values },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
      ]);
    }
  });

  it('a failed condition: ConditionalCheckFailedException, with the item when asked for it', async () => {
    const results = await same([
      put({ n: 2 }),
      (doc, table, _o, pk) =>
        doc.send(
          new PutCommand({
            TableName: table,
            Item: { pk, n: 3 },
            ConditionExpression: 'attribute_not_exists(pk)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      (doc, table, _o, pk) =>
        doc.send(
          new PutCommand({
            TableName: table,
            Item: { pk, n: 4 },
            ConditionExpression: 'n = :n',
            ExpressionAttributeValues: { ':n': 3 },
          }),
        ),
    ]);
    expect(results[1]).toMatchObject({ error: 'ConditionalCheckFailedException', item: { n: 2 } });
  });

  it('transactions: all or nothing, with the reasons, and one item only once', async () => {
    const write =
      (condition: string, value: number): Parameters<typeof same>[0][number] =>
      (doc, table, other, pk) =>
        doc.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: other,
                  Key: { pk },
                  UpdateExpression: 'SET v = :v',
                  ExpressionAttributeValues: { ':v': value },
                },
              },
              {
                Update: {
                  TableName: table,
                  Key: { pk },
                  UpdateExpression: 'SET v = :v',
                  ConditionExpression: condition,
                  ExpressionAttributeValues: { ':v': value },
                  ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
                },
              },
            ],
          }),
        );
    const results = await same([
      write('attribute_not_exists(pk)', 1),
      write('attribute_not_exists(pk)', 2),
      (doc, table, _other, pk) => doc.send(new GetCommand({ TableName: table, Key: { pk } })),
      (doc, table, _other, pk) =>
        doc.send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName: table, Item: { pk, v: 3 } } },
              {
                Update: {
                  TableName: table,
                  Key: { pk },
                  UpdateExpression: 'SET w = :w',
                  ExpressionAttributeValues: { ':w': 1 },
                },
              },
            ],
          }),
        ),
    ]);
    expect(results[1]).toMatchObject({
      error: 'TransactionCanceledException',
      reasons: [{ code: 'None' }, { code: 'ConditionalCheckFailed', item: { v: 1 } }],
    });
  });

  it('refuses what DynamoDB refuses: unused or undefined names and values, a key attribute updated', async () => {
    const update =
      (input: Partial<ConstructorParameters<typeof UpdateCommand>[0]>): Parameters<typeof same>[0][number] =>
      (doc, table, _o, pk) =>
        doc.send(
          new UpdateCommand({ TableName: table, Key: { pk }, UpdateExpression: 'SET a = :a', ...input }),
        );
    await same([
      update({ ExpressionAttributeValues: { ':a': 1, ':unused': 2 } }),
      update({ ExpressionAttributeValues: { ':a': 1 }, ExpressionAttributeNames: { '#unused': 'x' } }),
      update({ ExpressionAttributeValues: { ':b': 1 } }),
      update({ UpdateExpression: 'SET pk = :a', ExpressionAttributeValues: { ':a': 'other' } }),
      update({ UpdateExpression: 'SET a = :a, a = :a', ExpressionAttributeValues: { ':a': 1 } }),
      (doc, table) => doc.send(new GetCommand({ TableName: table, Key: { pk: '' } })),
      (doc) => doc.send(new GetCommand({ TableName: 'no-such-table', Key: { pk: 'x' } })),
    ]);
  });
});
