#!/usr/bin/env node
// The `webhooks` bin (package.json "bin"): registers tsx's ESM loader through its Node API
// (`tsx/esm/api`, module.register underneath), so Node can load the TypeScript CLI, then runs it.
import { register } from 'tsx/esm/api';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register();
await import('./main.ts');
