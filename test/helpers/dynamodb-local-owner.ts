/**
 * A process that starts DynamoDB Local, prints its endpoint and waits: the emulator tests kill it
 * with SIGKILL to show that Java does not outlive the process that started it.
 */
import { startDynamoDbLocal } from '../../local/emulators.js';

const dynamo = await startDynamoDbLocal();
console.log(JSON.stringify({ endpoint: dynamo.endpoint }));
setInterval(() => undefined, 60_000);
