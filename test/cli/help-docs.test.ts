/**
 * What the CLI's help texts point a user at exists for someone who installed the package: every docs
 * path they name is `node_modules/idempotent-webhook-receiver/docs/<file>` (the package ships docs/)
 * and that file is in the repository's docs/; the local stack is started as a user of the package
 * starts it.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docsPath } from '../../cli/args.js';
import { COMMANDS, overview } from '../../cli/commands/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
const PACKAGED = 'node_modules/idempotent-webhook-receiver/';

/** Every text the CLI prints as help: the overview and each command's --help. */
const HELP_TEXTS: ReadonlyArray<readonly [string, string]> = [
  ['webhooks --help', overview()],
  ...COMMANDS.map((command) => [`webhooks ${command.name} --help`, command.help] as const),
];

/** Each mention of a docs/ path, with what precedes it on its word. */
const docsMentions = (text: string): string[] =>
  [...text.matchAll(/[\w@./-]*\bdocs\/[\w/-]*(?:\.\w+)?/g)].map((m) => m[0]);

describe('docs paths in the help texts', () => {
  it('are named as installed, under node_modules/idempotent-webhook-receiver/docs/', () => {
    expect(docsPath('operations.md')).toBe(`${PACKAGED}docs/operations.md`);
    const all = HELP_TEXTS.flatMap(([, text]) => docsMentions(text));
    // The overview names the runbooks at least.
    expect(all).toContain(`${PACKAGED}docs/operations.md`);
    for (const [where, text] of HELP_TEXTS) {
      for (const mention of docsMentions(text))
        expect(mention, where).toMatch(/^node_modules\/idempotent-webhook-receiver\/docs\/[\w-]+\.md$/);
    }
  });

  it("exist in the repository's docs/ (so in the package, which ships docs/)", () => {
    for (const [where, text] of HELP_TEXTS) {
      for (const mention of docsMentions(text)) {
        const file = join(ROOT, mention.slice(PACKAGED.length));
        expect(existsSync(file), `${where} names ${mention}: no ${file}`).toBe(true);
      }
    }
  });
});

describe('the local stack in the help texts', () => {
  it('is started with npx webhooks local (npm start only in this repository), and no npm script is named', () => {
    for (const [where, text] of HELP_TEXTS) {
      expect(text, where).not.toMatch(/npm run /);
      // `npm start` only as what `webhooks local` is in this repository (a user of the package has none).
      for (const m of text.matchAll(/npm start/g)) {
        const around = text.slice(Math.max(0, (m.index ?? 0) - 90), (m.index ?? 0) + 90);
        expect(around, where).toMatch(/webhooks local|repository|does here/);
      }
    }
    expect(overview()).toContain('the local stack of webhooks local (npm start in the repository)');
  });
});
