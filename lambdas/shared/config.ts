/**
 * The parse helpers of the settings modules before lambdas/shared/settings.ts, kept for the
 * processor's settings until it moves to `defineSettings`: the same rules and messages, from there.
 */
export { ConfigError, type Env, positiveInteger, required } from './settings.js';
