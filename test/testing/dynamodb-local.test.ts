/** `startDynamoDbLocal`, as an app's globalSetup calls it: a server that answers, then stops. */
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { expect, it } from 'vitest';
import { startDynamoDbLocal } from '../../lambdas/testing/index.js';

it('starts DynamoDB Local on a loopback port and stops it', async () => {
  const dynamodb = await startDynamoDbLocal();
  const client = new DynamoDBClient({
    endpoint: dynamodb.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    expect(dynamodb.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await client.send(new ListTablesCommand({}))).toMatchObject({ TableNames: [] });
  } finally {
    client.destroy();
    await dynamodb.stop();
  }
  await expect(
    new DynamoDBClient({
      endpoint: dynamodb.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    }).send(new ListTablesCommand({})),
  ).rejects.toThrow();
}, 60_000);
