#!/usr/bin/env node
// `webhooks` from the repository's sources (`node cli/webhooks.mjs ...`): registers tsx's ESM loader
// through its Node API (`tsx/esm/api`, module.register underneath), so Node can load the TypeScript
// CLI, then runs it. The package's bin is the compiled CLI instead (dist/cli/main.js, no tsx).
import { register } from 'tsx/esm/api';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register();
await import('./main.ts');
