import type { SQSClient } from '@aws-sdk/client-sqs';
import { SendMessageCommand } from '@aws-sdk/client-sqs';

/** The receiver's view of the event queue. */
export interface EventQueue {
  /** Resolves once SQS has durably stored the message. */
  send(body: string): Promise<{ readonly messageId: string | undefined }>;
}

export interface SqsEventQueueOptions {
  readonly client: SQSClient;
  readonly queueUrl: string;
}

export class SqsEventQueue implements EventQueue {
  constructor(private readonly options: SqsEventQueueOptions) {}

  async send(body: string): Promise<{ readonly messageId: string | undefined }> {
    const result = await this.options.client.send(
      new SendMessageCommand({ QueueUrl: this.options.queueUrl, MessageBody: body }),
    );
    return { messageId: result.MessageId };
  }
}
