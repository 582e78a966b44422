#!/usr/bin/env node
// The `webhooks` bin (package.json "bin"), the same file in the repository and in the package.
// - In the repository (cli/main.ts beside this file): runs the TypeScript sources through tsx's ESM
//   loader API (`tsx/esm/api`, module.register underneath). So `npx webhooks` works in a clean
//   clone after `npm ci` (npm links no bin of the root package: npx links the repository into its
//   cache and runs this file, which must exist without a build), and never runs a stale dist/.
// - Installed from npm (no sources shipped, no tsx): runs the compiled CLI, dist/cli/main.js.
import { existsSync } from 'node:fs';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const sources = new URL('./main.ts', import.meta.url);
if (existsSync(sources)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(sources.href);
} else {
  await import(new URL('../dist/cli/main.js', import.meta.url).href);
}
