/**
 * For mutation runs only (vitest.mutation.config.ts): a test file that fails to load becomes one
 * failed test, so Stryker counts the mutant that broke the load as killed.
 *
 * Why: Stryker's vitest runner (9.4, and 10.0 still; stryker-js issue 6150) builds a mutant's result
 * from the tests it collected, and a test file whose imports throw collects none. A mutant that
 * stops a module from loading (a setting's constructor emptied, a name made `""` that a module-level
 * check refuses) fails every file that imports it, yet was reported as survived. With this reporter
 * each such file holds one failed test carrying the file's load error, which is what Stryker reads.
 * A file that loaded is left as it is, whatever its tests did.
 */
import type { RunnerTestCase, RunnerTestFile } from 'vitest';
import type { Reporter, Vitest } from 'vitest/node';

/** The name of the test that stands for a file that did not load. */
export const UNLOADED_TEST_NAME = 'the test file loads';

/** Adds the failed test to each file that failed with no test in it; returns the files changed. */
export function markUnloadedFiles(files: readonly RunnerTestFile[]): RunnerTestFile[] {
  const unloaded = files.filter((file) => file.result?.state === 'fail' && file.tasks.length === 0);
  for (const file of unloaded) {
    // Vitest types a test with a context only it can build; nothing reads it after the run.
    const test = {
      type: 'test',
      id: `${file.id}_unloaded`,
      name: UNLOADED_TEST_NAME,
      fullName: `${file.name} > ${UNLOADED_TEST_NAME}`,
      mode: 'run',
      file,
      meta: {},
      annotations: [],
      artifacts: [],
      timeout: 0,
      result: {
        state: 'fail',
        errors: file.result?.errors ?? [{ message: `${file.name} failed to load`, name: 'Error' }],
      },
    } as unknown as RunnerTestCase;
    file.tasks.push(test);
  }
  return unloaded;
}

export class UnloadedFilesAsFailures implements Reporter {
  #vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.#vitest = vitest;
  }

  /** Before `start()` returns, so before Stryker reads the files (the same `state` it reads). */
  onTestRunEnd(): void {
    markUnloadedFiles(this.#vitest?.state.getFiles() ?? []);
  }
}
