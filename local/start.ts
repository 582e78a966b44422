/**
 * `npm start`: synthesizes the CDK app, then runs the synthesized stack on this machine (see
 * ./stack.ts) until Ctrl-C or SIGTERM.
 *
 *   npm start                 in memory, port 3000 (PORT to change; the variables: ./settings.ts)
 *   npm start -- --persist    keep DynamoDB data in .local-data/ between runs
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { HMAC_PROVIDERS_ENV, readHmacProviderConfigs } from '../lambdas/providers/configured.js';
import { ConfigError } from '../lambdas/shared/settings.js';
import { isPortFree } from './emulators.js';
import { NodeRuntimeError } from './node-runtime.js';
import { loadLocalStartSettings } from './settings.js';
import { handleShutdown } from './shutdown.js';
import { localTimings, timingKnobs } from './timings.js';

const root = resolve(import.meta.dirname, '..');
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

function synthesize(outdir: string): void {
  console.log('synthesizing the CDK app (npx cdk synth)...');
  const cdk = join(root, 'node_modules', '.bin', 'cdk');
  const result = spawnSync(cdk, ['synth', '--quiet', '--output', outdir], {
    cwd: root,
    stdio: 'inherit',
    // Synthesis needs no AWS account; keep any real credentials out of it.
    env: { ...process.env, CDK_DISABLE_VERSION_CHECK: 'true' },
  });
  if (result.status !== 0) {
    console.error('cdk synth failed: see the messages above.');
    process.exit(result.status ?? 1);
  }
}

/** PORT, once read: a listen error on it is answered in one line. */
let requestedPort: number | undefined;

async function main(): Promise<void> {
  // Checked before anything loads the provider registry (./stack.ts does), so a bad config is one
  // line naming the variable and the field, not a stack trace.
  try {
    readHmacProviderConfigs(process.env[HMAC_PROVIDERS_ENV]);
  } catch (error) {
    console.error(`npm start: ${(error as Error).message}`);
    process.exit(1);
  }
  const { startLocalStack } = await import('./stack.js');
  const args = process.argv.slice(2);
  const persist = args.includes('--persist');
  const { port, cdkOut: outdir, outputsFile, skipSynth } = loadLocalStartSettings();
  requestedPort = port;
  // The timing knobs' rules that need no template (a lease longer than the visibility timeout, say),
  // before the synth; the rest are checked against the template when the stack starts.
  localTimings({}, timingKnobs(process.env));
  // The outputs file is not touched here: on a taken port, or stopped during start-up, this
  // process leaves alone the one a running stack wrote. The stack writes its own once it is up,
  // and removes it when it stops (./outputs-file.ts).
  // Before the synth, so a taken port is a one-line answer in a second, not after 15 s of bundling.
  if (port !== 0 && !(await isPortFree(port))) failPortInUse(port);
  if (!skipSynth) synthesize(outdir);

  let dataDirectory: string | undefined;
  if (persist) {
    dataDirectory = join(root, '.local-data');
    mkdirSync(dataDirectory, { recursive: true });
  }
  // Signals during start-up too: stop what was started, never leave Java or function hosts behind.
  // Before start-up finished, exiting runs the emulators' exit hooks (DynamoDB Local's process
  // group is killed) and the function hosts exit when their IPC channel closes.
  let stack: Awaited<ReturnType<typeof startLocalStack>> | undefined;
  let stopping = false;
  handleShutdown({
    stop: async () => {
      stopping = true;
      if (stack) await stack.stop();
    },
  });

  stack = await startLocalStack({
    outdir,
    port,
    outputsFile,
    ...(dataDirectory ? { dataDirectory } : {}),
  });
  if (stopping) return;

  console.log('');
  for (const [name, value] of Object.entries(stack.outputs)) {
    if (name.endsWith('WebhookUrl')) console.log(`  ${name.padEnd(20)} ${value}`);
  }
  console.log(`  ${'LocalEffectsUrl'.padEnd(20)} ${stack.outputs.LocalEffectsUrl}`);
  console.log(`  outputs: ${outputsFile}${persist ? `, data kept in ${dataDirectory}` : ''}`);
  console.log(`ready: ${stack.stackName} is running locally on ${stack.baseUrl} (Ctrl-C to stop)`);
}

function failPortInUse(port: number): never {
  console.error(
    `npm start: port ${port} on 127.0.0.1 is in use (PORT). Stop what holds it, or pick another: ` +
      `PORT=${port === 65_535 ? port - 1 : port + 1} npm start`,
  );
  process.exit(1);
}

main().catch((error) => {
  const { code, port } = error as { code?: string; port?: number };
  // Taken between the check before the synth and the listen.
  if (code === 'EADDRINUSE' && port !== undefined && port === requestedPort) failPortInUse(port);
  // A bad variable (a knob breaking a timing rule, say) or no Node of the functions' runtime (the
  // message says how to get one) is one line, not a stack trace.
  if (error instanceof ConfigError || error instanceof NodeRuntimeError) {
    console.error(`npm start: ${error.message}`);
    process.exit(1);
  }
  console.error(`npm start failed: ${(error as Error)?.stack ?? String(error)}`);
  process.exit(1);
});
