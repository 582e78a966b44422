/**
 * A one-line progress bar on stderr, so stdout stays clean for `--json`. On a terminal it redraws in
 * place; into a pipe or a file it writes only its final line (no carriage-return noise in logs).
 */

export interface ProgressStream {
  write(text: string): boolean;
  readonly isTTY?: boolean;
}

/** `[#########...............]   3/8  37%`, or `[.....] 3` while the total is unknown. */
export function renderProgress(done: number, total: number | undefined, width = 24): string {
  if (total === undefined || total <= 0) {
    const shown = total === 0 ? '0/0 100%' : String(done);
    return `[${(total === 0 ? '#' : '.').repeat(width)}] ${shown}`;
  }
  const ratio = Math.min(1, Math.max(0, done / total));
  const filled = Math.round(ratio * width);
  const count = `${String(done).padStart(String(total).length)}/${total}`;
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${count} ${String(Math.floor(ratio * 100)).padStart(3)}%`;
}

export interface ProgressBar {
  update(done: number, total?: number): void;
  /** Draws the final state and ends the line. */
  finish(): void;
}

export interface ProgressOptions {
  readonly label: string;
  readonly stream?: ProgressStream;
  /** Off: nothing is written (e.g. `--json` into a pipe). */
  readonly enabled?: boolean;
}

export function progressBar(options: ProgressOptions): ProgressBar {
  const stream = options.stream ?? process.stderr;
  const enabled = options.enabled ?? true;
  const live = enabled && stream.isTTY === true;
  let done = 0;
  let total: number | undefined;
  let lastLength = 0;
  let finished = false;
  const line = () => `${options.label} ${renderProgress(done, total)}`;
  const draw = () => {
    const text = line();
    stream.write(`\r${text.padEnd(lastLength)}`);
    lastLength = text.length;
  };
  return {
    update(value, newTotal) {
      done = value;
      if (newTotal !== undefined) total = newTotal;
      if (live && !finished) draw();
    },
    finish() {
      if (finished || !enabled) return;
      finished = true;
      if (live) {
        draw();
        stream.write('\n');
      } else stream.write(`${line()}\n`);
    },
  };
}
