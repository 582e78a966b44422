/**
 * The default processor Lambda (the construct's processor when you give it no `processorEntry`): no
 * appliers, so every event is acknowledged and its claim completed as `unhandled`. To apply events,
 * write your own entry with `createProcessor({ appliers })` from ./sdk (docs/processor.md).
 */
import { createProcessor } from './sdk/index.js';

export const handler = createProcessor();
