/**
 * Stands in for Lambda's SQS event source mapping: receives a batch, invokes the processor with a
 * real `SQSEvent`, deletes the records it did not report in `batchItemFailures` (ReportBatchItemFailures
 * semantics) and leaves the failed ones to reappear after the visibility timeout. A thrown handler
 * fails the whole batch, as on Lambda.
 *
 * Several batches are in flight at once, as on Lambda, so the races between processor invocations
 * (two copies of one event in two batches) happen locally too: the mapping's
 * `ScalingConfig.MaximumConcurrency` when the template sets it, else five. "When messages are
 * available, Lambda starts processing five batches at a time with five concurrent invocations of
 * your function" (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html); it scales
 * up from there under load, which a local stack does not need.
 */
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type {
  Context,
  SQSBatchResponse,
  SQSEvent,
  SQSMessageAttributeDataType,
  SQSMessageAttributes,
  SQSRecord,
} from 'aws-lambda';

export type SqsBatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;

export interface SqsPollerOptions {
  readonly client: SQSClient;
  readonly queueUrl: string;
  readonly handler: SqsBatchHandler;
  readonly batchSize?: number;
  /** Long-poll wait per receive, seconds (0 for tests that drain deterministically). */
  readonly waitTimeSeconds?: number;
  readonly region?: string;
  readonly functionName?: string;
  /** Batches in flight at once (independent receive loops). @default DEFAULT_CONCURRENT_BATCHES */
  readonly concurrency?: number;
  readonly onError?: (error: unknown) => void;
}

/** Lambda's starting number of concurrent batches for a standard queue. */
export const DEFAULT_CONCURRENT_BATCHES = 5;

/** How many batches an `AWS::Lambda::EventSourceMapping` (its template properties) runs at once. */
export function concurrentBatches(properties: Readonly<Record<string, unknown>>): number {
  const scaling = properties.ScalingConfig as { MaximumConcurrency?: unknown } | undefined;
  const maximum = Number(scaling?.MaximumConcurrency);
  // CloudFormation allows 2 to 1,000 (AWS::Lambda::EventSourceMapping ScalingConfig).
  return Number.isInteger(maximum) && maximum >= 1 ? maximum : DEFAULT_CONCURRENT_BATCHES;
}

export interface PollResult {
  readonly received: number;
  readonly failed: number;
}

let invocation = 0;

function lambdaContext(functionName: string): Context {
  invocation += 1;
  const deadline = Date.now() + 30_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: `local-${process.pid}-${invocation}`,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Message attributes as Lambda passes them: camel-cased, binary as base64, list values always there. */
function lambdaMessageAttributes(message: Message): SQSMessageAttributes {
  const result: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    result[name] = {
      ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
      ...(value.BinaryValue !== undefined
        ? { binaryValue: Buffer.from(value.BinaryValue).toString('base64') }
        : {}),
      stringListValues: value.StringListValues ?? [],
      binaryListValues: (value.BinaryListValues ?? []).map((b) => Buffer.from(b).toString('base64')),
      dataType: (value.DataType ?? 'String') as SQSMessageAttributeDataType,
    };
  }
  return result;
}

export function toSqsRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: lambdaMessageAttributes(message),
    md5OfBody: message.MD5OfBody ?? '',
    ...(message.MD5OfMessageAttributes ? { md5OfMessageAttributes: message.MD5OfMessageAttributes } : {}),
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}

export class SqsPoller {
  private running = false;
  private loops: Array<Promise<void>> = [];
  private queueArn: string | undefined;

  constructor(private readonly options: SqsPollerOptions) {}

  /** One receive + invoke + delete round. */
  async pollOnce(): Promise<PollResult> {
    const { client, queueUrl } = this.options;
    this.queueArn ??= await this.resolveArn();
    const received = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: this.options.batchSize ?? 10,
        WaitTimeSeconds: this.options.waitTimeSeconds ?? 0,
        // The emulator reads the older AttributeNames; SQS itself the newer name. Send both.
        AttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    const messages = received.Messages ?? [];
    if (messages.length === 0) return { received: 0, failed: 0 };
    const region = this.options.region ?? 'us-east-1';
    const event: SQSEvent = { Records: messages.map((m) => toSqsRecord(m, this.queueArn ?? '', region)) };
    let failedIds: Set<string>;
    try {
      const response = await this.options.handler(
        event,
        lambdaContext(this.options.functionName ?? 'processor'),
      );
      failedIds = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (error) {
      this.options.onError?.(error);
      failedIds = new Set(messages.map((m) => m.MessageId ?? ''));
    }
    const done = messages.filter((m) => !failedIds.has(m.MessageId ?? ''));
    if (done.length > 0) {
      await client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: done.map((m, index) => ({ Id: String(index), ReceiptHandle: m.ReceiptHandle ?? '' })),
        }),
      );
    }
    return { received: messages.length, failed: messages.length - done.length };
  }

  /** Polls continuously until stop(), with `concurrency` batches in flight at most. */
  start(): void {
    if (this.running) return;
    this.running = true;
    const loops = this.options.concurrency ?? DEFAULT_CONCURRENT_BATCHES;
    this.loops = Array.from({ length: loops }, () => this.pollUntilStopped());
  }

  private async pollUntilStopped(): Promise<void> {
    while (this.running) {
      try {
        const result = await this.pollOnce();
        if (result.received === 0 && (this.options.waitTimeSeconds ?? 0) === 0) await sleep(100);
      } catch (error) {
        this.options.onError?.(error);
        await sleep(500);
      }
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async resolveArn(): Promise<string> {
    const result = await this.options.client.send(
      new GetQueueAttributesCommand({ QueueUrl: this.options.queueUrl, AttributeNames: ['QueueArn'] }),
    );
    return result.Attributes?.QueueArn ?? '';
  }
}

/** Messages on a queue, visible and in flight (SQS's approximate counts; exact on the emulator). */
export async function queueDepth(client: SQSClient, queueUrl: string): Promise<number> {
  const result = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(result.Attributes?.ApproximateNumberOfMessages ?? 0) +
    Number(result.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
