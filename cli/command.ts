/** What a command is to the dispatcher, and what it may use of the process. */
import type { ProgressStream } from './progress.js';

export interface CommandIO {
  /** Writes one block to stdout (a newline is added). */
  readonly print: (text: string) => void;
  /** Where progress bars and notes go (stderr): never mixed into `--json` output. */
  readonly stderr: ProgressStream;
  readonly env: NodeJS.ProcessEnv;
  readonly now: () => number;
}

export interface Command {
  /** As typed: `inspect`, `dlq list`. */
  readonly name: string;
  /** For the overview: how it is called and what it is for. */
  readonly synopsis: { readonly usage: string; readonly summary: string };
  readonly help: string;
  /** Resolves to the exit code; throws CliError for expected failures. */
  run(argv: readonly string[], io: CommandIO): Promise<number>;
}

/** Prints JSON or text, as the command line asked. */
export function output(io: CommandIO, json: boolean, data: unknown, text: () => string): void {
  io.print(json ? JSON.stringify(data, null, 2) : text());
}
