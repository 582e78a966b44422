/**
 * What the stack holds, read over the wire from its local DynamoDB and SQS (the stack's outputs name
 * them): the claims, the business rows, the DLQ's keys, and whether anything is still in flight.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { LOCAL_CREDENTIALS as CREDENTIALS, LOCAL_REGION as REGION } from '../local/emulators.js';
import type { Item } from './checker.js';

export interface StackReader {
  scan(tableName: string): Promise<Item[]>;
  claims(): Promise<Item[]>;
  rows(): Promise<Record<string, Item[]>>;
  /** Messages in the event queue, visible or in flight. */
  queueDepth(): Promise<number>;
  /** The keys of the DLQ's messages (read and left: they show again after 30 s). */
  dlqKeys(): Promise<string[]>;
  close(): void;
}

const TABLE_OUTPUTS: Readonly<Record<string, string>> = {
  payments: 'PaymentsTableName',
  orders: 'OrdersTableName',
  resources: 'ResourcesTableName',
};

export function stackReader(outputs: Readonly<Record<string, string>>): StackReader {
  const need = (name: string): string => {
    const value = outputs[name];
    if (!value) throw new Error(`the stack's outputs have no ${name}`);
    return value;
  };
  const dynamo = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: need('LocalDynamoDbEndpoint'), region: REGION, credentials: CREDENTIALS }),
  );
  const sqs = new SQSClient({ endpoint: need('LocalSqsEndpoint'), region: REGION, credentials: CREDENTIALS });
  const scan = async (tableName: string): Promise<Item[]> => {
    const items: Item[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await dynamo.send(
        new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: start }),
      );
      items.push(...((page.Items ?? []) as Item[]));
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    return items;
  };
  return {
    scan,
    claims: () => scan(need('ClaimsTableName')),
    rows: async () =>
      Object.fromEntries(
        await Promise.all(
          Object.entries(TABLE_OUTPUTS).map(
            async ([table, output]) => [table, await scan(need(output))] as const,
          ),
        ),
      ),
    queueDepth: async () => {
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: need('EventQueueUrl'),
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      return (
        Number(Attributes?.ApproximateNumberOfMessages ?? 0) +
        Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
      );
    },
    dlqKeys: async () => {
      const keys: string[] = [];
      for (let empty = 0; empty < 2; ) {
        const { Messages } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: need('DeadLetterQueueUrl'),
            MaxNumberOfMessages: 10,
            VisibilityTimeout: 30,
            WaitTimeSeconds: 0,
          }),
        );
        if (!Messages || Messages.length === 0) {
          empty++;
          continue;
        }
        for (const message of Messages) {
          try {
            const key = (JSON.parse(message.Body ?? '{}') as { key?: unknown }).key;
            if (typeof key === 'string') keys.push(key);
          } catch {
            // not an event message
          }
        }
      }
      return keys;
    },
    close: () => {
      dynamo.destroy();
      sqs.destroy();
    },
  };
}
