/**
 * What every claims-table client shares: the document client (undefined attributes dropped), the
 * table name, the time formats the items use, and conditional writes that report a failed
 * condition as a result instead of an exception. The receiver's store, the processor's claims and
 * the sweeper's store extend it; the item layout is in ./claim.ts.
 */
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ClaimRecord } from './claim.js';

/** ISO-8601, for the attributes people read (`firstSeenAt`, `enqueuedAt`, ...). */
export const isoTime = (ms: number): string => new Date(ms).toISOString();
/** Epoch seconds, the unit of the TTL attribute `expiresAt`. */
export const epochSeconds = (ms: number): number => Math.floor(ms / 1000);

export type ClaimUpdate = Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName'>;

export abstract class ClaimsTable {
  protected readonly doc: DynamoDBDocumentClient;

  /** A document client is used as given (the CLI's); a plain client is wrapped. */
  constructor(
    client: DynamoDBClient | DynamoDBDocumentClient,
    readonly tableName: string,
  ) {
    this.doc =
      client instanceof DynamoDBDocumentClient
        ? client
        : DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  }

  /** The item as stored, strongly consistent, expired or not; undefined when absent. */
  protected async readItem(pk: string): Promise<ClaimRecord | undefined> {
    const result = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { pk }, ConsistentRead: true }),
    );
    return result.Item as ClaimRecord | undefined;
  }

  /** An update returning the new item; undefined when its condition failed. */
  protected async updateReturning(
    input: Omit<ClaimUpdate, 'ReturnValues'>,
  ): Promise<ClaimRecord | undefined> {
    try {
      const result = await this.doc.send(
        new UpdateCommand({ ...input, TableName: this.tableName, ReturnValues: 'ALL_NEW' }),
      );
      return result.Attributes as ClaimRecord | undefined;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  /** An update; false when its condition failed. */
  protected async updateIf(input: ClaimUpdate): Promise<boolean> {
    try {
      await this.doc.send(new UpdateCommand({ ...input, TableName: this.tableName }));
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}
