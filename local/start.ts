/**
 * `npm start`: `webhooks local` (./runner.ts) on this repository's example app (bin/app.ts through
 * cdk.json): synthesizes it, then runs the synthesized stack on this machine (see ./stack.ts) until
 * Ctrl-C or SIGTERM. Its messages start with `npm start:`, and name PORT for another port.
 *
 *   npm start                 in memory, port 3000 (PORT to change; the variables: ./settings.ts)
 *   npm start -- --persist    keep DynamoDB data in .local-data/ between runs
 */
import { resolve } from 'node:path';
import { LocalRunError, runLocal } from './runner.js';

const root = resolve(import.meta.dirname, '..');
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

runLocal({
  appDirectory: root,
  cwd: process.cwd(),
  env: process.env,
  persist: process.argv.slice(2).includes('--persist'),
  portSetting: 'PORT',
  onPort: (port) => `PORT=${port} npm start`,
  log: (line) => console.log(line),
}).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof LocalRunError) console.error(`npm start: ${error.message}`);
    else console.error(`npm start failed: ${(error as Error)?.stack ?? String(error)}`);
    process.exit(1);
  },
);
