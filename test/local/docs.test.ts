/** The per-provider tables in README.md and docs/ are written from the registry (`npm run docs`). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withProviders } from '../../lambdas/providers/index.js';
import { DocsMarkerError, formatDuration, renderProviderTables, updateDocs } from '../../local/docs.js';
import { acmeProvider } from '../fixtures/providers/acme.js';

const doc = (name: string, indent = '') =>
  [
    `intro`,
    `${indent}<!-- providers:${name} -->`,
    `${indent}| stale |`,
    `${indent}<!-- /providers:${name} -->`,
    'outro',
  ].join('\n');

describe('provider tables', () => {
  it('are up to date in README.md and docs/rules.md (run npm run docs when this fails)', () => {
    expect(updateDocs({ write: false })).toEqual([]);
  });

  it('rewrite only what is between the markers, keeping their indentation', () => {
    const rendered = renderProviderTables(doc('dev-secrets', '  '));
    expect(rendered.split('\n')).toEqual([
      'intro',
      '  <!-- providers:dev-secrets -->',
      '  | provider | default |',
      '  | --- | --- |',
      '  | stripe | `whsec_local_development_secret` |',
      '  | github | `local-github-secret` |',
      '  | shopify | `local-shopify-secret` |',
      '  | asaas | `local-asaas-token` |',
      '  | standard | `whsec_bG9jYWwtc3RhbmRhcmQtd2ViaG9va3Mtc2VjcmV0ISE=` |',
      '  | paddle | `pdl_ntfset_local_development_secret` |',
      '  | slack | `local-slack-signing-secret` |',
      '  | square | `local-square-signature-key` |',
      '  | twilio | `local-twilio-auth-token` |',
      '  | discord | `1c9cb0941c40ba02a4aaa02889f462a4f7abd6e7bb4dd77d07fa48f59e53fcd1` |',
      '  <!-- /providers:dev-secrets -->',
      'outro',
    ]);
    expect(renderProviderTables(rendered)).toBe(rendered);
  });

  it("gain a row for a provider added to the registry, from its module's docs", () => {
    const providers = Object.values(withProviders([acmeProvider]).PROVIDERS);
    const rendered = renderProviderTables(doc('retry-windows'), providers);
    expect(rendered).toContain('| `acme` | 1 day | 2 days |');
    expect(renderProviderTables(doc('signatures'), providers)).toContain(
      '| `acme` | `Acme-Signature: t=…,v1=…` | `<t>.<raw body>` | HMAC-SHA256 hex; the secret string | 300 s either way |',
    );
  });

  it('refuse an unknown table or a missing end marker', () => {
    expect(() => renderProviderTables('<!-- providers:nope -->\n<!-- /providers:nope -->')).toThrow(
      DocsMarkerError,
    );
    expect(() => renderProviderTables('<!-- providers:identity -->\n| x |')).toThrow(/no end marker/);
  });

  it('write TTLs in days, else hours', () => {
    expect([formatDuration(7 * 86_400), formatDuration(86_400), formatDuration(4 * 3_600)]).toEqual([
      '7 days',
      '1 day',
      '4 hours',
    ]);
  });
});

describe('docs/configured-providers.md', () => {
  const root = join(import.meta.dirname, '../..');
  const text = readFileSync(join(root, 'docs/configured-providers.md'), 'utf8');

  it.each(['onfido', 'partner'])('shows examples/providers/%s.json as it is', (name) => {
    // The JSON block after the link to the file is the file, so the worked example cannot drift.
    const link = text.indexOf(`(../examples/providers/${name}.json)`);
    expect(link).toBeGreaterThan(0);
    const block = /```json\n([\s\S]*?)\n```/.exec(text.slice(link))?.[1] ?? '';
    const file = readFileSync(join(root, 'examples/providers', `${name}.json`), 'utf8');
    expect(JSON.parse(block)).toEqual(JSON.parse(file));
  });
});
