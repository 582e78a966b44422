/**
 * How `npm start` ends: on SIGINT, SIGTERM or SIGHUP, and when the process that started it goes
 * away, it stops what it started, within a hard deadline.
 *
 * Why the parent watch: a supervisor (systemd, `timeout`, a CI runner) signals the process it
 * spawned, which is often `npm`, not this one. npm forwards SIGTERM to its child, but a shell or
 * the `tsx` CLI between them may die without passing it on, and nothing at all is forwarded when
 * the parent is SIGKILLed. Either way this process is re-parented, and `process.ppid` changes.
 */

export interface ShutdownOptions {
  /** Stops everything that was started (may be called before start-up has finished). */
  readonly stop: () => Promise<void>;
  readonly log?: (line: string) => void;
  /** After this, exit anyway; the exit hooks kill what is left (Java, function hosts). */
  readonly deadlineMs?: number;
  /** How often to look at the parent process id. */
  readonly parentCheckMs?: number;
  readonly exit?: (code: number) => void;
  /** @default SHUTDOWN_SIGNALS */
  readonly signals?: readonly NodeJS.Signals[];
  /**
   * Stop when the parent process goes away. Only under an npm script by default, so that running
   * local/start.ts directly under `nohup` still outlives the shell that started it.
   * @default process.env.npm_lifecycle_event !== undefined
   */
  readonly watchParent?: boolean;
}

export const SHUTDOWN_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Installs the handlers; returns the function that shuts down (for the caller's own reasons). */
export function handleShutdown(options: ShutdownOptions): (reason: string) => Promise<void> {
  const log = options.log ?? ((line: string) => console.log(line));
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let stopping: Promise<void> | undefined;

  const shutdown = (reason: string): Promise<void> => {
    stopping ??= (async () => {
      log(`\n${reason}: stopping the local stack...`);
      const deadline = setTimeout(() => {
        log(`still stopping after ${options.deadlineMs ?? 8_000} ms: exiting anyway`);
        exit(1);
      }, options.deadlineMs ?? 8_000);
      deadline.unref();
      let code = 0;
      try {
        await options.stop();
      } catch (error) {
        log(`stop failed: ${String(error)}`);
        code = 1;
      }
      clearTimeout(deadline);
      exit(code);
    })();
    return stopping;
  };

  for (const signal of options.signals ?? SHUTDOWN_SIGNALS) process.on(signal, () => void shutdown(signal));

  if (options.watchParent ?? process.env.npm_lifecycle_event !== undefined) {
    const parent = process.ppid;
    const watch = setInterval(() => {
      if (process.ppid !== parent) void shutdown(`parent process ${parent} exited`);
    }, options.parentCheckMs ?? 500);
    watch.unref();
  }

  return shutdown;
}
