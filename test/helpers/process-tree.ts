/** The processes a process started, directly or not, from `ps` (Linux and macOS). */
import { execFileSync } from 'node:child_process';

export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const line of execFileSync('ps', ['-A', '-o', 'pid=,ppid='], { encoding: 'utf8' }).split('\n')) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    if (!pid || ppid === undefined) continue;
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const found: number[] = [];
  const pending = [root];
  while (pending.length > 0) {
    for (const child of children.get(pending.pop() ?? -1) ?? []) {
      found.push(child);
      pending.push(child);
    }
  }
  return found;
}

/** The command line of each process, for messages. */
export function commandLines(pids: readonly number[]): string[] {
  if (pids.length === 0) return [];
  try {
    return execFileSync('ps', ['-o', 'pid=,args=', '-p', pids.join(',')], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => line.trim());
  } catch {
    return []; // none of them is alive any more
  }
}
