// src/processor.ts: the processor Lambda's module (the construct's processorEntry)
import { createProcessor } from 'idempotent-webhook-receiver/processor';
import type { App } from './app-types';
import { appliers } from './appliers';

export const handler = createProcessor<App>({ appliers });
