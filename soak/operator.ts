/**
 * The simulated operator: the checkout's own `webhooks` CLI, run as a person would against the
 * running stack (its outputs file in `LOCAL_OUTPUTS_FILE`): `dlq redrive` and `replay --force` of an
 * event, without waiting for them to finish (`--wait 0`). What each run printed is kept.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';

export interface OperatorRun {
  readonly command: string;
  readonly code: number;
  /** The last line it printed (stdout, else stderr). */
  readonly said: string;
}

export function webhooksCli(dir: string, env: NodeJS.ProcessEnv) {
  const runs: OperatorRun[] = [];
  const run = (args: readonly string[]): Promise<OperatorRun> =>
    new Promise((resolve) => {
      execFile(
        join(dir, 'node_modules', '.bin', 'tsx'),
        ['cli/main.ts', ...args],
        { cwd: dir, env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
          const lines = `${stdout}`.trim().split('\n').filter(Boolean);
          const said = lines.at(-1) ?? `${stderr}`.trim().split('\n').at(-1) ?? '';
          const result = { command: `webhooks ${args.join(' ')}`, code, said };
          runs.push(result);
          resolve(result);
        },
      );
    });
  return { run, runs: () => [...runs] };
}
