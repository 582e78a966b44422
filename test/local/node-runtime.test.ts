/** Which Node binary a local function runs on (local/node-runtime.ts). */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NodeRuntimeError, nodeBinaryFor, nodeMajorOf } from '../../local/node-runtime.js';

const NODE_20 = { path: '/usr/local/bin/node', version: 'v20.20.2' };
const NODE_24 = { path: '/opt/node24/bin/node', version: 'v24.1.0' };

/** A `node` package as its preinstall leaves it: package.json and the linked binary. */
function nodePackage(version: string, withBinary = true): string {
  const dir = mkdtempSync(join(tmpdir(), 'node-package-'));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'node', version, bin: { node: 'bin/node' } }),
  );
  if (withBinary) {
    mkdirSync(join(dir, 'bin'));
    writeFileSync(join(dir, 'bin', 'node'), '');
  }
  return join(dir, 'package.json');
}

describe('nodeBinaryFor', () => {
  it('takes the installed node package when it is on the runtime major', () => {
    const packageJson = nodePackage('24.21.0');
    expect(nodeBinaryFor('nodejs24.x', { current: NODE_20, packageJson })).toEqual({
      path: join(packageJson, '..', 'bin', 'node'),
      version: 'v24.21.0',
    });
  });

  it('takes this process when the package is missing and this Node is on the runtime major', () => {
    expect(nodeBinaryFor('nodejs24.x', { current: NODE_24, packageJson: undefined })).toEqual(NODE_24);
  });

  it('takes this process when the package is another major', () => {
    expect(nodeBinaryFor('nodejs24.x', { current: NODE_24, packageJson: nodePackage('22.1.0') })).toEqual(
      NODE_24,
    );
  });

  it('refuses, saying to run npm ci, when neither the package nor this process is on the runtime major', () => {
    const lookup = { current: NODE_20, packageJson: undefined };
    expect(() => nodeBinaryFor('nodejs24.x', lookup)).toThrow(NodeRuntimeError);
    expect(() => nodeBinaryFor('nodejs24.x', lookup)).toThrow(
      'functions run on nodejs24.x on Lambda, so locally on Node 24: this is Node v20.20.2 and the devDependency `node` is not installed (or its install script did not run). Run `npm ci`',
    );
  });

  it('refuses a package whose install script did not link the binary', () => {
    const packageJson = nodePackage('24.21.0', false);
    expect(() => nodeBinaryFor('nodejs24.x', { current: NODE_20, packageJson })).toThrow(
      /install script did not run/,
    );
  });

  it('names the installed package version when it is the wrong major', () => {
    const packageJson = nodePackage('22.1.0');
    expect(() => nodeBinaryFor('nodejs24.x', { current: NODE_20, packageJson })).toThrow(
      'the installed `node` package is v22.1.0',
    );
  });

  it('refuses a runtime that is not Node.js', () => {
    expect(() => nodeMajorOf('python3.12')).toThrow('runtime python3.12 is not a Node.js runtime');
    expect(() => nodeMajorOf('')).toThrow('runtime (none) is not a Node.js runtime');
  });
});
