/**
 * The README's own-app section is test/package/own-app, the app test/package/pack.test.ts builds
 * from the packed tarball, type-checks, tests and runs locally: each of its code blocks that names a
 * file of that app on its first line must be that file, so the README shows what is tested.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const APP = join(ROOT, 'test/package/own-app');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The README's ```ts blocks whose first line is `// <path>...`, by path. */
function blocksByFile(markdown: string): Map<string, string> {
  const blocks = new Map<string, string>();
  for (const match of markdown.matchAll(/```ts\n(\/\/ ([\w./-]+\.ts)[^\n]*\n[\s\S]*?)```/g)) {
    const [, body, path] = match;
    if (body !== undefined && path !== undefined) blocks.set(path, body);
  }
  return blocks;
}

describe("the README's own app", () => {
  const blocks = blocksByFile(README.slice(README.indexOf('## Use it in your own CDK app')));
  const files = [
    'src/app-types.ts',
    'src/appliers.ts',
    'src/processor.ts',
    'lib/billing-stack.ts',
    'bin/billing.ts',
    'test/invoice-paid.test.ts',
  ];

  it.each(files)('shows %s exactly as the tested app has it', (file) => {
    expect(blocks.get(file), `README has no block starting // ${file}`).toBe(
      readFileSync(join(APP, file), 'utf8'),
    );
  });

  it('shows no app file the tested app does not have', () => {
    expect([...blocks.keys()].sort()).toEqual([...files].sort());
  });

  it("names the tested app's cdk.json and the event file it sends", () => {
    const cdk = JSON.parse(readFileSync(join(APP, 'cdk.json'), 'utf8')) as { app: string };
    expect(README).toContain(`\`cdk.json\` \`{ "app": "${cdk.app}" }\``);
    const event = JSON.parse(readFileSync(join(APP, 'events/invoice-paid.json'), 'utf8')) as { id: string };
    expect(README).toContain(`npx webhooks send stripe --file events/invoice-paid.json`);
    expect(README).toContain(`npx webhooks inspect stripe ${event.id}`);
  });
});
