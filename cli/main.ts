#!/usr/bin/env node
/**
 * `webhooks`: the operator CLI. The bin is cli/webhooks.mjs: in the repository it runs this module
 * from the sources (`npm run webhooks --` too), in the package this module compiled
 * (dist/cli/main.js). Expected failures are one line on stderr and a non-zero exit; see
 * cli/errors.ts.
 */

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CommandIO } from './command.js';
import { COMMANDS, overview, resolveCommand } from './commands/index.js';
import { CliError, UsageError } from './errors.js';

// The SDK's notice that its 2027 releases need Node 22: noise in an operator's terminal.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const io: CommandIO = {
  print: (text) => {
    process.stdout.write(`${text}\n`);
  },
  stderr: process.stderr,
  env: process.env,
  now: Date.now,
};

function complain(message: string): void {
  process.stderr.write(`webhooks: ${message}\n`);
}

/**
 * The installed package's version, from the nearest package.json above this module: cli/ in the
 * repository, dist/cli/ in the package.
 */
function version(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    name?: string;
    version?: string;
  };
  return `webhooks ${manifest.version ?? 'unknown'} (${manifest.name ?? 'idempotent-webhook-receiver'})`;
}

async function run(argv: readonly string[]): Promise<number> {
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    io.print(version());
    return 0;
  }
  const resolved = resolveCommand(argv);
  if (resolved.kind === 'help') {
    io.print(overview());
    return argv.length === 0 ? 2 : 0;
  }
  if (resolved.kind === 'unknown') {
    const names = COMMANDS.filter((c) => !resolved.group || c.name.startsWith(`${resolved.group} `)).map(
      (c) => c.name,
    );
    complain(
      resolved.group
        ? `${resolved.name ? `unknown command ${resolved.group} ${resolved.name}` : `${resolved.group} needs a command`}: ${names.join(', ')}`
        : `unknown command ${JSON.stringify(resolved.name)}: ${names.join(', ')} (webhooks --help)`,
    );
    return 2;
  }
  try {
    return await resolved.command.run(resolved.rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      complain(`${error.message} (webhooks ${error.command ?? resolved.command.name} --help)`);
      return error.exitCode;
    }
    if (error instanceof CliError) {
      complain(error.message);
      return error.exitCode;
    }
    // Not an expected failure: a bug. The stack is what a bug report needs.
    complain(`unexpected error: ${(error as Error)?.stack ?? String(error)}`);
    return 1;
  }
}

process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  // `webhooks dlq list | head`: the reader went away.
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const code = await run(process.argv.slice(2));
// Flush, then exit: an SDK socket kept alive must not keep the CLI waiting.
process.stdout.write('', () => process.exit(code));
