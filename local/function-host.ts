/**
 * Child process that plays the Lambda runtime for one function: it imports the function's bundle
 * (as `cdk synth` built it) with the function's environment, and runs invocations sent by the
 * parent over IPC, one at a time per process, like a Lambda execution environment.
 */
import { pathToFileURL } from 'node:url';

interface InitMessage {
  readonly type: 'init';
  readonly entry: string;
  readonly handler: string;
  readonly functionName: string;
  readonly timeoutMs: number;
  readonly memoryMb: number;
}

interface InvokeMessage {
  readonly type: 'invoke';
  readonly id: number;
  readonly event: unknown;
  readonly requestId: string;
}

type Handler = (event: unknown, context: unknown) => Promise<unknown>;

let handler: Handler | undefined;
let init: InitMessage | undefined;

function send(message: unknown): void {
  process.send?.(message);
}

// The parent (the local stack) is gone: so is this execution environment.
process.on('disconnect', () => process.exit(0));

process.on('message', (message: InitMessage | InvokeMessage) => {
  void (async () => {
    if (message.type === 'init') {
      init = message;
      try {
        const module = (await import(pathToFileURL(message.entry).href)) as Record<string, unknown>;
        const exported = module[message.handler];
        if (typeof exported !== 'function')
          throw new Error(`${message.entry} exports no function ${message.handler}`);
        handler = exported as Handler;
        send({ type: 'ready', node: process.version });
      } catch (error) {
        send({ type: 'init-error', error: String((error as Error)?.stack ?? error) });
      }
      return;
    }
    if (!handler || !init) {
      send({ type: 'result', id: message.id, error: 'function not initialised' });
      return;
    }
    const deadline = Date.now() + init.timeoutMs;
    const context = {
      callbackWaitsForEmptyEventLoop: false,
      functionName: init.functionName,
      functionVersion: '$LATEST',
      invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${init.functionName}`,
      memoryLimitInMB: String(init.memoryMb),
      awsRequestId: message.requestId,
      logGroupName: `/aws/lambda/${init.functionName}`,
      logStreamName: 'local',
      getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
      done: () => undefined,
      fail: () => undefined,
      succeed: () => undefined,
    };
    try {
      const result = await handler(message.event, context);
      send({ type: 'result', id: message.id, result });
    } catch (error) {
      const e = error as Error;
      send({
        type: 'result',
        id: message.id,
        error: `${e?.name ?? 'Error'}: ${e?.message ?? String(error)}`,
      });
    }
  })();
});
