/**
 * Captures what Powertools prints, for tests of a handler's logs and EMF metrics: metrics are turned
 * on (the suite turns them off), and stdout and stderr (JSON logs, EMF, warnings) are recorded
 * instead of written. Call from `beforeEach`; `afterEach` must `vi.restoreAllMocks()` and
 * `vi.unstubAllEnvs()`.
 */
import { vi } from 'vitest';

export function capturePowertoolsOutput(): string[] {
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
  const output: string[] = [];
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      output.push(chunk.toString());
      return true;
    });
  }
  return output;
}
