/**
 * The local outputs file (cdk-outputs.local.json by default) belongs to the `npm start` that wrote
 * it: `npm run send` and `webhooks` find the running stack through it. Another `npm start` (on a
 * taken port, stopped or failing during its start-up) must leave it alone, so a stack removes the
 * file only while it still holds what that stack wrote.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';

export interface WrittenOutputsFile {
  readonly path: string;
  /** Removes the file if it still holds what was written; true when it did. */
  remove(): boolean;
}

/** Writes `{ <stackName>: outputs }`, the shape of `cdk deploy --outputs-file`. */
export function writeOutputsFile(
  path: string,
  stackName: string,
  outputs: Readonly<Record<string, string>>,
): WrittenOutputsFile {
  const content = `${JSON.stringify({ [stackName]: outputs }, null, 2)}\n`;
  writeFileSync(path, content);
  return {
    path,
    remove() {
      // Another `npm start` on another PORT may have written its own outputs over ours since: that
      // file is its stack's, not ours to remove. (Read, then remove: a write landing in between is
      // a start-up racing a shutdown over one file, which this cannot settle anyway.)
      if (readOrUndefined(path) !== content) return false;
      rmSync(path, { force: true });
      return true;
    },
  };
}

function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
