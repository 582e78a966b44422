// Preloaded with `node --import` (NODE_OPTIONS): the process's clock runs CLOCK_AHEAD_MS ahead of
// the machine's, as an operator's laptop a little fast does beside Lambda's clock. Only Date.now
// moves: the CLI reads its time through it.
const ahead = Number(process.env.CLOCK_AHEAD_MS ?? 0);
const machineNow = Date.now;
Date.now = () => machineNow() + ahead;
