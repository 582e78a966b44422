/**
 * The example's processor entry: the framework's processor with the example's appliers. The stack
 * passes this module as `processorEntry`; your own app does the same with its own module.
 */
import { createProcessor } from '../../lambdas/processor/sdk/index.js';
import { EXAMPLE_APPLIERS } from './appliers/index.js';

export const handler = createProcessor({ appliers: EXAMPLE_APPLIERS });
