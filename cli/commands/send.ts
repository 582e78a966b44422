/**
 * `webhooks send`: `npm run send` inside the CLI (local/send.ts does the work), plus `--stack NAME`
 * for a deployed stack's URL and `--json`. Its own options keep send's parser, so both accept the
 * same command lines: a sample, or a body of your own (`--file PATH`, `-` for stdin, `--body JSON`).
 */
import {
  type ParsedSendArgs,
  parseSendArgs,
  SendUsageError,
  sendSample,
  sendUsage,
} from '../../local/send.js';
import type { Command } from '../command.js';
import { UsageError } from '../errors.js';
import { describeStackOutputs, localOutputsFile, readOutputsFile } from '../stack.js';

const NAME = 'send';
const HELP = `${sendUsage(
  'webhooks send',
  `
  --stack NAME    post to a deployed stack's URL (from its CloudFormation outputs)
  --json          print the answers (and, locally, the effects seen) as JSON
  -h, --help      this help`,
)}

Signs with the provider's variable (WEBHOOK_SECRET_STRIPE, ...) or the local development
default; against a deployed stack pass --secret (or set the variable) with its real secret.

examples
  webhooks send stripe invoice.paid --dup 2          a sample, then the same delivery again
  webhooks send stripe --file evt.json               your own event, byte for byte
  webhooks send github push --file push.json --id push-1
                                                     GitHub reads its id and type from headers
  cat evt.json | webhooks send stripe --file -       the body from stdin
  webhooks send stripe --body '{"id":"evt_1","type":"invoice.paid","data":{"object":{"id":"in_1"}}}'`;

/** Takes `--json` and `--stack NAME` out of send's own arguments. */
export function splitGlobalOptions(argv: readonly string[]): {
  rest: string[];
  json: boolean;
  stack: string | undefined;
} {
  const rest: string[] = [];
  let json = false;
  let stack: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--json') json = true;
    else if (arg === '--stack' || arg.startsWith('--stack=')) {
      const value = arg === '--stack' ? argv[++i] : arg.slice('--stack='.length);
      if (!value) throw new UsageError('--stack needs a stack name', NAME);
      stack = value;
    } else rest.push(arg);
  }
  return { rest, json, stack };
}

export const sendCommand: Command = {
  name: NAME,
  synopsis: {
    usage: 'send <provider> [type] [--file PATH | --body JSON] [--dup N] [--concurrent N] ...',
    summary: 'sign a sample event, or a body of your own, and post it',
  },
  help: HELP,
  async run(argv, io) {
    const { rest, json, stack } = splitGlobalOptions(argv);
    let parsed: ParsedSendArgs;
    try {
      parsed = parseSendArgs(rest);
    } catch (error) {
      if (error instanceof SendUsageError) throw new UsageError(error.message, NAME);
      throw error;
    }
    if (parsed.help) {
      io.print(HELP);
      return 0;
    }
    const outputs =
      parsed.args.url !== undefined && stack === undefined
        ? undefined
        : stack !== undefined
          ? await describeStackOutputs(stack)
          : readOutputsFile(localOutputsFile(io.env)).outputs;
    const log = json ? undefined : (line: string) => io.print(line);
    try {
      const report = await sendSample(parsed.args, {
        outputs,
        env: io.env,
        ...(log ? { log } : {}),
        warn: (line) => io.stderr.write(`${line}\n`),
      });
      if (json) io.print(JSON.stringify(report, null, 2));
      return report.ok ? 0 : 1;
    } catch (error) {
      if (error instanceof SendUsageError) throw new UsageError(error.message, NAME);
      throw error;
    }
  },
};
