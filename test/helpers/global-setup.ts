/**
 * Starts DynamoDB Local, the SQS emulator and an S3-compatible server (s3rver) once per test run, on free loopback ports, and stops
 * them (Java process group included) when the run ends. Test files get the endpoints with
 * `inject('dynamoDbEndpoint')` / `inject('sqsEndpoint')` and create their own uniquely named
 * tables and queues (see ./aws.ts), so files can run in parallel against the same servers.
 */
import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal, startS3Server, startSqsEmulator } from '../../local/emulators.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoDbEndpoint: string;
    sqsEndpoint: string;
    s3Endpoint: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const [dynamo, sqs, s3] = await Promise.all([startDynamoDbLocal(), startSqsEmulator(), startS3Server()]);
  project.provide('dynamoDbEndpoint', dynamo.endpoint);
  project.provide('sqsEndpoint', sqs.endpoint);
  project.provide('s3Endpoint', s3.endpoint);
  return async () => {
    await Promise.all([dynamo.stop(), sqs.stop(), s3.stop()]);
  };
}
