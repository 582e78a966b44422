/**
 * The test run Stryker uses for each mutant (stryker.config.mjs, docs/mutation.md): the vitest
 * config, global setup (DynamoDB Local, the SQS emulator, s3rver) included, without the tests
 * that cannot see a mutant and only cost time. Stryker switches mutants inside the test process,
 * so a test whose code runs in another process (`npm start`, the CLI as a child process, a CDK
 * bundle) runs the unmutated code whatever the mutant.
 */
import { relative } from 'node:path';
import { configDefaults, defineConfig, mergeConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { UnloadedFilesAsFailures } from './test/helpers/unloaded-files-reporter.js';
import base from './vitest.config.js';

/**
 * Runs a mutant's test files quickest first (a file that failed on the last mutant before all).
 * Vitest's own order runs the longest first, which suits parallel workers, but Stryker runs one
 * file at a time and stops at the first failure: the pure unit tests ran after a hundred
 * integration tests, about a minute per mutant they alone kill.
 */
class QuickestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const { cache, config } = this.ctx;
    const results = (spec: TestSpecification) =>
      cache.getFileTestResults(`${spec.project.name}:${relative(config.root, spec.moduleId)}`);
    return [...files].sort((a, b) => {
      const [ra, rb] = [results(a), results(b)];
      const failedFirst = Number(rb?.failed ?? false) - Number(ra?.failed ?? false);
      return failedFirst !== 0 ? failedFirst : (ra?.duration ?? 0) - (rb?.duration ?? 0);
    });
  }
}

/**
 * `MUTATION_TESTS` (comma-separated globs) narrows the run to some test files, e.g. the receiver's
 * own tests for `lambdas/receiver/core.ts` (the processor's tests pass every event through the
 * receiver, and cost a minute per surviving mutant). A mutant only those other tests would kill is
 * then reported as a survivor: the narrowing can only add survivors, never hide one.
 */
const only = process.env.MUTATION_TESTS?.split(',')
  .map((glob) => glob.trim())
  .filter((glob) => glob !== '');

const mutationConfig = mergeConfig(
  base,
  defineConfig({
    test: {
      sequence: { sequencer: QuickestFirst },
      // A test file that fails to load counts as a failed test (Stryker would call its mutant survived).
      reporters: ['default', new UnloadedFilesAsFailures()],
      exclude: [
        ...configDefaults.exclude,
        // `npm start`, `npm pack`, the bench and the CLI binary: other processes.
        'test/e2e/**',
        '**/*.e2e.test.ts',
        'test/package/**',
        'test/bench/**',
        'test/cli/cli.test.ts',
        'test/local/port-in-use.test.ts',
        'test/local/shutdown.test.ts',
        'test/providers/configured.test.ts',
        // The emulators' own lifecycle, and CDK synthesis (the stack reads lambdas/ for settings
        // only; what it deploys is checked against the templates, not the runtime code).
        'test/helpers/emulators.test.ts',
        'test/infra/**',
      ],
    },
  }),
);

export default only === undefined || only.length === 0
  ? mutationConfig
  : { ...mutationConfig, test: { ...mutationConfig.test, include: only } };
