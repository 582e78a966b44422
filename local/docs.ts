/**
 * `npm run docs`: writes the per-provider tables of README.md and docs/rules.md from the registry,
 * each between `<!-- providers:<table> -->` and `<!-- /providers:<table> -->`, from the provider
 * modules' `docs`, `defaults` and `secret` fields. Everything outside the markers is left as is.
 * `npm run docs -- --check` only reports the files whose tables are stale (exit status 1);
 * test/local/docs.test.ts runs the same check.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILT_IN_PROVIDERS } from '../lambdas/providers/index.js';
import type { Provider } from '../lambdas/providers/types.js';

export const DOC_FILES = ['README.md', 'docs/rules.md'] as const;
const ROOT = resolve(import.meta.dirname, '..');

const row = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
const table = (header: readonly string[], rows: readonly (readonly string[])[]): string[] => [
  row(header),
  row(header.map(() => '---')),
  ...rows.map(row),
];

/** `604800` -> `7 days`; a TTL that is no whole number of days in hours. */
export function formatDuration(seconds: number): string {
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (seconds % 86_400 === 0) return unit(seconds / 86_400, 'day');
  if (seconds % 3_600 === 0) return unit(seconds / 3_600, 'hour');
  return unit(seconds, 'second');
}

type TableRenderer = (providers: readonly Provider<string>[]) => string[];

/** The tables, by the name in their markers. */
export const PROVIDER_TABLES: Readonly<Record<string, TableRenderer>> = {
  'dev-secrets': (providers) =>
    table(
      ['provider', 'default'],
      providers.map((p) => [p.id, `\`${p.secret.devSecret}\``]),
    ),
  signatures: (providers) =>
    table(
      ['provider', 'header', 'signed content', 'digest, key', 'timestamp tolerance'],
      providers.map((p) => [
        `\`${p.id}\``,
        p.docs.signature.header,
        p.docs.signature.signedContent,
        p.docs.signature.digest,
        p.docs.signature.tolerance,
      ]),
    ),
  identity: (providers) =>
    table(
      ['provider', 'event id', 'event type', 'account scope', 'object id (kind)'],
      providers.map((p) => [
        `\`${p.id}\``,
        p.docs.identity.eventId,
        p.docs.identity.eventType,
        p.docs.identity.account,
        p.docs.identity.object,
      ]),
    ),
  reconcile: (providers) =>
    table(
      ['provider', 'what its API allows', 'list or state', 'send again or resume', 'kept', 'source'],
      providers.map((p) => {
        const r = p.reconcile;
        if (r.kind === 'none') return [`\`${p.id}\``, 'nothing', r.why, '', '', ''];
        const sources = r.source
          .split('; ')
          .map((url, index) => `[${index + 1}](${url})`)
          .join(' ');
        const kept = formatDuration(r.retentionSeconds);
        if (r.kind === 'list-and-redeliver')
          return [`\`${p.id}\``, 'list and redeliver', r.list, r.redeliver, kept, sources];
        if (r.kind === 'list-only')
          return [
            `\`${p.id}\``,
            'list only',
            `${r.list}${r.setup ? `; ${r.setup}` : ''}`,
            'no',
            kept,
            sources,
          ];
        return [`\`${p.id}\``, 'queue state only', r.state, r.resume, kept, sources];
      }),
    ),
  'retry-windows': (providers) =>
    table(
      ['provider', 'retry window', 'provider claim TTL'],
      providers.map((p) => [
        `\`${p.id}\``,
        p.docs.retryWindow.text,
        formatDuration(p.defaults.claimTtlSeconds),
      ]),
    ),
};

export class DocsMarkerError extends Error {
  override readonly name = 'DocsMarkerError';
}

const START = /^(\s*)<!-- providers:([a-z-]+) -->\s*$/;

/**
 * `text` with every marked table rewritten for `providers`; the table keeps the start marker's
 * indentation (a table inside a list item).
 */
export function renderProviderTables(
  text: string,
  // The repository's own providers: the docs never list those a shell's WEBHOOK_HMAC_PROVIDERS adds.
  providers: readonly Provider<string>[] = BUILT_IN_PROVIDERS,
): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    out.push(line);
    const start = START.exec(line);
    if (!start) continue;
    const [, indent = '', name = ''] = start;
    const render = PROVIDER_TABLES[name];
    if (!render) throw new DocsMarkerError(`unknown provider table ${JSON.stringify(name)}`);
    const end = lines.findIndex(
      (candidate, j) => j > i && candidate.trim() === `<!-- /providers:${name} -->`,
    );
    if (end < 0) throw new DocsMarkerError(`<!-- providers:${name} --> has no end marker`);
    out.push(...render(providers).map((tableLine) => `${indent}${tableLine}`), lines[end] ?? '');
    i = end;
  }
  return out.join('\n');
}

/** The files whose tables differ from the registry's; with `write`, rewrites them. */
export function updateDocs(options: { readonly write: boolean; readonly root?: string }): string[] {
  const stale: string[] = [];
  for (const file of DOC_FILES) {
    const path = join(options.root ?? ROOT, file);
    const text = readFileSync(path, 'utf8');
    const rendered = renderProviderTables(text);
    if (rendered === text) continue;
    stale.push(file);
    if (options.write) writeFileSync(path, rendered);
  }
  return stale;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const stale = updateDocs({ write: !check });
  if (check && stale.length > 0) {
    console.error(`provider tables are stale in ${stale.join(', ')}: run npm run docs`);
    process.exit(1);
  }
  console.log(
    stale.length > 0 ? `rewrote the provider tables in ${stale.join(', ')}` : 'provider tables up to date',
  );
}
