/**
 * A process that installs `npm start`'s shutdown handling with a stop that takes STOP_MS (forever
 * when "never"), and reports on stdout: the tests kill its parent or signal it and read the lines.
 */
import { handleShutdown } from '../../local/shutdown.js';

const stopMs = process.env.STOP_MS ?? '0';
handleShutdown({
  log: (line) => console.log(line.trim()),
  deadlineMs: Number(process.env.DEADLINE_MS ?? 8_000),
  parentCheckMs: 100,
  watchParent: true,
  stop: () =>
    new Promise<void>((resolve) => {
      if (stopMs !== 'never') setTimeout(resolve, Number(stopMs));
    }),
  exit: (code) => {
    console.log(`exit ${code}`);
    process.exit(code);
  },
});
console.log(`ready ${process.pid}`);
setInterval(() => undefined, 60_000);
