/** The command registry and the top-level help. */
import { docsPath, GLOBAL_OPTIONS_HELP } from '../args.js';
import type { Command } from '../command.js';
import { complianceExportCommand, complianceListCommand } from './compliance.js';
import { dlqListCommand, dlqRedriveCommand } from './dlq.js';
import { inspectCommand } from './inspect.js';
import { localCommand } from './local.js';
import { replayCommand } from './replay.js';
import { sendCommand } from './send.js';
import { stuckCommand } from './stuck.js';

export const COMMANDS: readonly Command[] = [
  inspectCommand,
  dlqListCommand,
  dlqRedriveCommand,
  replayCommand,
  stuckCommand,
  sendCommand,
  complianceListCommand,
  complianceExportCommand,
  localCommand,
];

export function overview(): string {
  const commands = COMMANDS.map((c) => `  ${c.synopsis.usage}\n      ${c.synopsis.summary}`).join('\n');
  return `usage: webhooks <command> [options]

Operate the idempotent webhook receiver: answer "was it claimed once or twice?", list and redrive
the dead-letter queue, replay archived events, list stuck claims, send signed samples or your own
payloads, fetch Shopify data-request exports.

commands
${commands}

options (every command)
${GLOBAL_OPTIONS_HELP}

  --version      the package version (webhooks --version)

Without --stack: the local stack of webhooks local (npm start in the repository), from its outputs
file ($LOCAL_OUTPUTS_FILE, else cdk-outputs.local.json). webhooks <command> --help for each
command; runbooks: ${docsPath('operations.md')}.`;
}

export type Resolved =
  | { readonly kind: 'command'; readonly command: Command; readonly rest: readonly string[] }
  | { readonly kind: 'help' }
  | { readonly kind: 'unknown'; readonly name: string; readonly group?: string };

/** Finds the command an argument list names: one word, or two for `dlq list` / `dlq redrive`. */
export function resolveCommand(argv: readonly string[]): Resolved {
  const [first, second] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help')
    return { kind: 'help' };
  for (const command of COMMANDS) {
    const words = command.name.split(' ');
    if (words.every((word, i) => argv[i] === word))
      return { kind: 'command', command, rest: argv.slice(words.length) };
  }
  const group = COMMANDS.filter((c) => c.name.startsWith(`${first} `));
  if (group.length > 0) return { kind: 'unknown', name: second ?? '', group: first };
  return { kind: 'unknown', name: first };
}
