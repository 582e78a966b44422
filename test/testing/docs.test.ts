/**
 * docs/processor.md, "Testing your appliers": its example test is the one this suite runs
 * (./docs-example.test.ts), imports aside (the package's entry points there, the sources here).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const IMPORT = /^import[\s\S]*?;\n/gm;
const SPECIFIERS: Readonly<Record<string, string>> = {
  'idempotent-webhook-receiver/processor': '../../lambdas/processor/sdk/index.js',
  'idempotent-webhook-receiver/testing': '../../lambdas/testing/index.js',
};

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');

/** The section's ```ts block that follows its mention of the example file. */
function exampleBlock(markdown: string): string {
  const section = markdown.slice(markdown.indexOf('## Testing your appliers'));
  const start = section.indexOf('```ts\n', section.indexOf('test/testing/docs-example.test.ts'));
  const end = section.indexOf('```\n', start + 6);
  return section.slice(start + 6, end);
}

const importsOf = (source: string): string[] =>
  (source.match(IMPORT) ?? [])
    .map((statement) => statement.replace(/\s+/g, ' ').replace(/,\s*}/, ' }'))
    .sort();
const bodyOf = (source: string): string => source.replace(IMPORT, '').trim();

describe('docs/processor.md, "Testing your appliers"', () => {
  it('shows the example test this suite runs', () => {
    const documented = exampleBlock(read('../../docs/processor.md'));
    const tested = read('./docs-example.test.ts');
    expect(bodyOf(documented)).toBe(bodyOf(tested));
    const mapped = documented.replace(
      /'(idempotent-webhook-receiver\/[a-z]+)'/g,
      (whole, specifier: string) => `'${SPECIFIERS[specifier] ?? whole}'`,
    );
    expect(importsOf(mapped)).toEqual(importsOf(tested));
  });
});
