import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A user's app, built from the packed tarball by test/package/pack.test.ts, with its own tests.
    exclude: ['**/node_modules/**', 'test/package/own-app/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // The SDK's notice that future versions need Node 22: harmless where a test runs something on the
    // machine's Node 20 (the CommonJS app in pack.test.ts, the local-function driver); only noise.
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      // EMF metrics are silenced in tests; the tests that check them turn them back on.
      POWERTOOLS_METRICS_DISABLED: 'true',
    },
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // Two cores: keep the pool small so the emulators keep a core.
    maxWorkers: 2,
  },
});
