import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeOutputsFile } from '../../local/outputs-file.js';

const scratch = () => join(mkdtempSync(join(tmpdir(), 'outputs-file-')), 'cdk-outputs.local.json');

describe('the local outputs file', () => {
  it('is written in the shape of cdk deploy --outputs-file and removed by the stack that wrote it', () => {
    const path = scratch();
    const written = writeOutputsFile(path, 'IdempotentWebhooks', { LocalEffectsUrl: 'http://127.0.0.1:1' });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({
      IdempotentWebhooks: { LocalEffectsUrl: 'http://127.0.0.1:1' },
    });
    expect(written.remove()).toBe(true);
    expect(existsSync(path)).toBe(false);
  });

  it('is left in place when another stack has written its own over it since', () => {
    const path = scratch();
    const first = writeOutputsFile(path, 'IdempotentWebhooks', { LocalEffectsUrl: 'http://127.0.0.1:1' });
    const second = writeOutputsFile(path, 'IdempotentWebhooks', { LocalEffectsUrl: 'http://127.0.0.1:2' });
    expect(first.remove()).toBe(false);
    expect(readFileSync(path, 'utf8')).toContain('127.0.0.1:2');
    expect(second.remove()).toBe(true);
  });

  it('removes nothing when the file is already gone, or holds something else', () => {
    const path = scratch();
    const written = writeOutputsFile(path, 'IdempotentWebhooks', {});
    expect(written.remove()).toBe(true);
    expect(written.remove()).toBe(false);
    writeFileSync(path, '{}\n');
    expect(written.remove()).toBe(false);
    expect(readFileSync(path, 'utf8')).toBe('{}\n');
  });
});
