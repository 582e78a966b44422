import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createVitest } from 'vitest/node';
import { UNLOADED_TEST_NAME, UnloadedFilesAsFailures } from './unloaded-files-reporter.js';

const fixtures = fileURLToPath(new URL('../fixtures/unloadable/', import.meta.url));

/**
 * Stryker's own reading of a vitest run, what it counts a mutant's result from (not exported by
 * the package: read from its file, so a Stryker upgrade that moves it fails here, to be rechecked).
 */
const { collectTestsFromSuite, convertTestToTestResult } = await import(
  new URL('../../node_modules/@stryker-mutator/vitest-runner/dist/src/vitest-helpers.js', import.meta.url)
    .href
);

/** Runs the fixture files in a vitest of their own and reads the result as Stryker does. */
async function strykerReading(reporters: object[]) {
  const vitest = await createVitest(
    'test',
    { config: false, root: fixtures, include: ['*.fixture.ts'], watch: false, reporters },
    // Vitest keeps its results cache under the root's node_modules otherwise.
    { cacheDir: join(tmpdir(), 'unloaded-files-reporter-test') },
  );
  try {
    await vitest.start();
    return vitest.state
      .getFiles()
      .flatMap((file) => collectTestsFromSuite(file))
      .map((test) => convertTestToTestResult(test))
      .map(({ fileName, name, status, failureMessage }) => ({
        test: `${basename(fileName)} ${name}`,
        status,
        failureMessage,
      }))
      .sort((a, b) => a.test.localeCompare(b.test));
  } finally {
    await vitest.close();
  }
}

// Stryker's TestStatus: 0 passed, 1 failed.
describe('a test file that fails to load, in a mutation run', () => {
  it('is one failed test carrying the load error; a file that loaded is as it was', async () => {
    expect(await strykerReading([new UnloadedFilesAsFailures()])).toEqual([
      {
        test: 'loads.fixture.ts fails',
        status: 1,
        failureMessage: expect.stringContaining('expected 1 to be 2'),
      },
      { test: 'loads.fixture.ts passes', status: 0, failureMessage: undefined },
      {
        test: `unloadable.fixture.ts ${UNLOADED_TEST_NAME}`,
        status: 1,
        failureMessage: 'refused to load',
      },
    ]);
  }, 60_000);

  // `{}`: a reporter that prints nothing (with none, vitest prints the run as its default does).
  it('is no test at all without the reporter, which Stryker reads as a survived mutant', async () => {
    expect((await strykerReading([{}])).map(({ test }) => test)).toEqual([
      'loads.fixture.ts fails',
      'loads.fixture.ts passes',
    ]);
  }, 60_000);
});
