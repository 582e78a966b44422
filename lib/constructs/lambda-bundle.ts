/**
 * How the framework's Lambda code is built, in one place: `npm run build` (scripts/build.ts) writes
 * the shipped bundles with these options, a synth from the TypeScript sources builds them the same
 * way, and a user's `processorEntry` is bundled by NodejsFunction with the same settings.
 *
 * No aws-cdk-lib and no esbuild import here: the build script and the construct both read it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's name, as in package.json: how the package root is recognised. */
export const PACKAGE_NAME = 'idempotent-webhook-receiver';

/** The framework's own functions and their entry modules, by path from the package root. */
export const FRAMEWORK_FUNCTIONS = {
  receiver: 'lambdas/receiver/handler.ts',
  sweeper: 'lambdas/sweeper/handler.ts',
  /** The default processor (no appliers unless a `processorEntry` brings them). */
  processor: 'lambdas/processor/handler.ts',
} as const;

export type FrameworkFunction = keyof typeof FRAMEWORK_FUNCTIONS;

/** Where the prebuilt bundles live in the package: `assets/<function>/index.mjs` (+ `.map`). */
export const ASSETS_DIR = 'assets';

/** The bundle's file name; the handler is `index.handler`. */
export const BUNDLE_FILE = 'index.mjs';
export const BUNDLE_HANDLER = 'index.handler';

/**
 * @middy/core 6 is ESM-only, so the bundle is ESM; CommonJS dependencies bundled into it still call
 * `require`, which ESM lacks: the banner provides one.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/**
 * The runtime's Node (nodejs24.x): the same bundles run locally on Node 24 too (local/node-runtime.ts),
 * so no syntax needs lowering for an older Node.
 */
export const BUNDLE_TARGET = 'node24';

/** Prefer a dependency's ESM build. */
export const BUNDLE_MAIN_FIELDS = ['module', 'main'];

/**
 * esbuild options for one framework bundle (the same flags NodejsFunction passes to esbuild for
 * `lambdaBundlingOptions`). The AWS SDK is bundled rather than taken from the runtime: these bundles
 * also run locally, where no SDK is provided.
 */
export function frameworkBuildOptions(entry: string, outdir: string) {
  return {
    entryPoints: [entry],
    outfile: join(outdir, BUNDLE_FILE),
    bundle: true,
    platform: 'node' as const,
    format: 'esm' as const,
    target: BUNDLE_TARGET,
    mainFields: BUNDLE_MAIN_FIELDS,
    banner: { js: ESM_REQUIRE_BANNER },
    minify: true,
    // Stack traces point at the TypeScript sources (with NODE_OPTIONS=--enable-source-maps).
    sourcemap: true,
    logLevel: 'warning' as const,
  };
}

/**
 * The package root: the nearest directory above `fromUrl` whose package.json is this package's. The
 * same from lib/constructs/*.ts (the repository) and from dist/lib/constructs/*.js (installed).
 */
export function packageRoot(fromUrl: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(fromUrl));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const { name } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown };
      if (name === PACKAGE_NAME) return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json of ${PACKAGE_NAME} above ${fileURLToPath(fromUrl)}`);
    dir = parent;
  }
}

/**
 * Running from the TypeScript sources (the repository: tests, `npm start`, `cdk synth` under tsx),
 * as opposed to the compiled package. From the sources, the bundles are built at synth time so they
 * always match the sources; the compiled package uses the bundles it ships.
 */
export const RUNNING_FROM_SOURCES = import.meta.url.endsWith('.ts');
