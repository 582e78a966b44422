// @ts-check
/**
 * Mutation testing, outside `npm test`: `npm run mutation` (docs/mutation.md says how long it
 * takes, the score, and what each surviving mutant means). It mutates the runtime code that holds
 * the guarantees and runs, for each mutant, only the tests that cover it.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  packageManager: 'npm',
  testRunner: 'vitest',
  // related: the dry run starts from the test files that import the mutated files.
  vitest: { configFile: 'vitest.mutation.config.ts', related: true },
  // Each mutant runs only the tests that executed its code in the dry run.
  coverageAnalysis: 'perTest',
  mutate: ['lambdas/store/**/*.ts', 'lambdas/processor/**/*.ts', 'lambdas/receiver/**/*.ts'],
  // Two cores, and every test runner starts its own DynamoDB Local, SQS emulator and s3rver.
  concurrency: 2,
  // Tests wait on real servers: allow for a loaded machine before calling a mutant a timeout.
  timeoutMS: 15_000,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { logTests: false, allowEmojis: false },
  ignorePatterns: ['cdk.out', 'cdk.out.*', 'dist', 'assets', 'reports', '.local-data', 'coverage'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
