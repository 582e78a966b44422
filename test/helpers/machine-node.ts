/**
 * The machine's own Node: the first `node` on PATH outside any node_modules/.bin, i.e. what a user's
 * shell runs, not the Node 24 that the devDependency `node` puts first on npm scripts' PATH.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join, sep } from 'node:path';

export function machineNode(): string {
  const dirs = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir && !dir.includes(`node_modules${sep}.bin`));
  for (const dir of dirs) {
    const candidate = join(dir, process.platform === 'win32' ? 'node.exe' : 'node');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(`no node on PATH outside node_modules/.bin (PATH=${process.env.PATH ?? ''})`);
}
