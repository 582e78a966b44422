/**
 * `npm run build` (also `prepack`): what the npm package ships, from the TypeScript sources.
 *   dist/    JavaScript and .d.ts of lib/ (the construct), the processor SDK and the CLI (tsc), the
 *            CLI's local runner (`webhooks local`: local/) with DynamoDB Local's loopback launcher
 *   assets/  the framework's Lambda bundles, assets/<function>/index.mjs(.map) (esbuild, with the
 *            same options a synth from the sources uses: lib/constructs/lambda-bundle.ts)
 * Both are rebuilt from scratch, so nothing stale is packed.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import {
  ASSETS_DIR,
  FRAMEWORK_FUNCTIONS,
  type FrameworkFunction,
  frameworkBuildOptions,
  packageRoot,
} from '../lib/constructs/lambda-bundle.js';

const root = packageRoot(import.meta.url);

rmSync(join(root, 'dist'), { recursive: true, force: true });
rmSync(join(root, ASSETS_DIR), { recursive: true, force: true });

const tsc = spawnSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json'], {
  cwd: root,
  stdio: 'inherit',
});
if (tsc.status !== 0) {
  console.error(`build: tsc -p tsconfig.build.json failed (${tsc.status ?? tsc.signal})`);
  process.exit(1);
}

// Run by Java's source-file mode beside the compiled local/dynamodb-local.js (which finds it by its URL).
cpSync(join(root, 'local', 'java'), join(root, 'dist', 'local', 'java'), { recursive: true });

await Promise.all(
  (Object.keys(FRAMEWORK_FUNCTIONS) as FrameworkFunction[]).map((name) =>
    build(frameworkBuildOptions(join(root, FRAMEWORK_FUNCTIONS[name]), join(root, ASSETS_DIR, name))),
  ),
);
console.log(`build: dist/ and ${ASSETS_DIR}/{${Object.keys(FRAMEWORK_FUNCTIONS).join(',')}} written`);
