/**
 * Starts one LocalFunction (the fixture that answers its own Node version) as `npm start` would, in
 * this process, whichever Node runs it; prints each log line, then one JSON line with the result.
 */
import { fileURLToPath } from 'node:url';
import { LocalFunction } from '../../local/local-function.js';

const fn = new LocalFunction({
  name: 'probe',
  entry: fileURLToPath(new URL('../fixtures/local/node-version-handler.mjs', import.meta.url)),
  handler: 'handler',
  runtime: process.env.PROBE_RUNTIME ?? 'nodejs24.x',
  environment: {},
  timeoutSeconds: 10,
  memoryMb: 128,
  concurrency: 1,
  log: (line) => console.log(line),
});
try {
  await fn.start();
  const result = await fn.invoke({});
  console.log(JSON.stringify({ parent: process.version, result }));
} finally {
  await fn.stop();
}
