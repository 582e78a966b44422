/**
 * The test run Stryker uses for each mutant (stryker.config.mjs, docs/mutation.md): the vitest
 * config, global setup (DynamoDB Local, the SQS emulator, s3rver) included, without the tests
 * that cannot see a mutant and only cost time. Stryker switches mutants inside the test process,
 * so a test whose code runs in another process (`npm start`, the CLI as a child process, a CDK
 * bundle) runs the unmutated code whatever the mutant.
 */
import { configDefaults, defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

export default mergeConfig(
  base,
  defineConfig({
    test: {
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
