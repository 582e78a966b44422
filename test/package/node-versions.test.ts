/**
 * One Node major for the functions on Lambda, the local stack and the tests: the functions' runtime
 * (nodejs24.x) is the major of the devDependency `node`, whose binary `npm test` and `npm start` run
 * on (npm puts node_modules/.bin first on its scripts' PATH).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUNTIME_NODE_PACKAGE } from '../../local/node-runtime.js';
import { synthesize } from '../infra/support.js';

const ROOT = join(import.meta.dirname, '../..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};
const pinned = manifest.devDependencies[RUNTIME_NODE_PACKAGE] ?? '(none)';
const pinnedMajor = pinned.split('.')[0];

describe('the Node versions', () => {
  it("pins the devDependency node to an exact version of the functions' runtime major", () => {
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    const resources = synthesize({ bare: true }).template.findResources('AWS::Lambda::Function');
    const runtimes = new Set(Object.values(resources).map((fn) => fn.Properties.Runtime as string));
    expect([...runtimes]).toEqual([`nodejs${pinnedMajor}.x`]);
  });

  it('runs the tests on that major', () => {
    // The major, not the exact version: a machine without the package's binary (macOS) runs its own Node 24.
    expect(`${process.version} (${process.execPath})`).toMatch(new RegExp(`^v${pinnedMajor}\\.`));
  });
});
