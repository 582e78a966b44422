/**
 * `webhooks compliance list` and `webhooks compliance export`: the exports Shopify's
 * `customers/data_request` produced (lambdas/processor/compliance.ts), for an operator to send to
 * the merchant. Read from the archive bucket's `compliance/` prefix; nothing is changed.
 */
import { exportPrefix } from '../../lambdas/processor/compliance.js';
import { COMPLIANCE_PREFIX } from '../../lambdas/shared/archive-layout.js';
import { S3ComplianceStore } from '../../lambdas/store/compliance-store.js';
import { expectPositionals, GLOBAL_OPTIONS_HELP, parseCommandArgs } from '../args.js';
import { type Command, output } from '../command.js';
import { CliError, UsageError } from '../errors.js';
import { plural } from '../format.js';
import { aws, openStack } from '../stack.js';
import { formatTable } from '../table.js';

const LIST = 'compliance list';
const EXPORT = 'compliance export';

const LIST_HELP = `usage: webhooks compliance list [SHOP]

Lists the data-request exports written for Shopify's customers/data_request, newest request first:
shop, customer, request id and object key. SHOP (example.myshopify.com) lists one shop's only.
Exports expire after complianceExportRetention (30 days by default); a customers/redact or
shop/redact for that customer or shop deletes them at once.

options
${GLOBAL_OPTIONS_HELP}`;

const EXPORT_HELP = `usage: webhooks compliance export SHOP REQUEST_ID

Prints the export of one customers/data_request (its data_request.id, as the audit line
"compliance request applied" logs it): the archived webhook payloads about that customer, to send
to the merchant. Redirect it to a file: webhooks compliance export example.myshopify.com 9999 > export.json

options
${GLOBAL_OPTIONS_HELP}`;

export interface ExportEntry {
  readonly shop: string;
  readonly customerId: string;
  readonly dataRequestId: string;
  readonly key: string;
}

/** `compliance/shopify/<shop>/customer-<id>/data-request-<id>.json`, or undefined for any other key. */
export function exportEntryOf(key: string): ExportEntry | undefined {
  const match = new RegExp(
    `^${COMPLIANCE_PREFIX}/shopify/([^/]+)/customer-([^/]+)/data-request-([^/]+)\\.json$`,
  ).exec(key);
  if (!match?.[1] || !match[2] || !match[3]) return undefined;
  return {
    shop: decodeURIComponent(match[1]),
    customerId: decodeURIComponent(match[2]),
    dataRequestId: decodeURIComponent(match[3]),
    key,
  };
}

async function listExports(store: S3ComplianceStore, shop: string | undefined): Promise<ExportEntry[]> {
  const entries: ExportEntry[] = [];
  const prefix = shop === undefined ? `${COMPLIANCE_PREFIX}/shopify/` : exportPrefix(shop.toLowerCase());
  for await (const key of store.list(prefix)) {
    const entry = exportEntryOf(key);
    if (entry) entries.push(entry);
  }
  return entries.sort((a, b) => b.dataRequestId.localeCompare(a.dataRequestId, undefined, { numeric: true }));
}

export const complianceListCommand: Command = {
  name: LIST,
  synopsis: {
    usage: 'webhooks compliance list [SHOP]',
    summary: "list the exports of Shopify's customers/data_request requests",
  },
  help: LIST_HELP,
  async run(argv, io) {
    const args = parseCommandArgs(argv, {}, LIST);
    if (args.help) {
      io.print(LIST_HELP);
      return 0;
    }
    expectPositionals(args, 1, LIST);
    const stack = await openStack({ stack: args.stack, env: io.env });
    try {
      const bucket = stack.output('ArchiveBucketName');
      const store = new S3ComplianceStore(stack.s3, bucket);
      const entries = await aws(stack, `ListObjectsV2 on ${bucket}`, () =>
        listExports(store, args.positionals[0]),
      );
      output(io, args.json, { stack: stack.name, exports: entries }, () =>
        entries.length === 0
          ? 'No data-request export.'
          : `${plural(entries.length, 'export')}:\n\n${formatTable(
              [
                { header: 'shop', value: (e: ExportEntry) => e.shop },
                { header: 'customer', value: (e) => e.customerId },
                { header: 'request', value: (e) => e.dataRequestId },
                { header: 'key', value: (e) => e.key },
              ],
              entries,
            )}\n\nwebhooks compliance export SHOP REQUEST_ID prints one.`,
      );
      return 0;
    } finally {
      stack.destroy();
    }
  },
};

export const complianceExportCommand: Command = {
  name: EXPORT,
  synopsis: {
    usage: 'webhooks compliance export SHOP REQUEST_ID',
    summary: 'print one customers/data_request export, to send to the merchant',
  },
  help: EXPORT_HELP,
  async run(argv, io) {
    const args = parseCommandArgs(argv, {}, EXPORT);
    if (args.help) {
      io.print(EXPORT_HELP);
      return 0;
    }
    expectPositionals(args, 2, EXPORT);
    const [shop, requestId] = args.positionals;
    if (!shop || !requestId) throw new UsageError('needs SHOP and REQUEST_ID', EXPORT);
    const stack = await openStack({ stack: args.stack, env: io.env });
    try {
      const bucket = stack.output('ArchiveBucketName');
      const store = new S3ComplianceStore(stack.s3, bucket);
      const entry = (await aws(stack, `ListObjectsV2 on ${bucket}`, () => listExports(store, shop))).find(
        (e) => e.dataRequestId === requestId,
      );
      const object = entry && (await aws(stack, `GetObject on ${bucket}`, () => store.read(entry.key)));
      if (!entry || !object) {
        throw new CliError(
          `no export of data request ${requestId} for ${shop.toLowerCase()} (expired, redacted since, or not processed yet: webhooks compliance list)`,
        );
      }
      // The export is JSON already: printed as stored, whether or not --json was given.
      io.print(object.text.trimEnd());
      return 0;
    } finally {
      stack.destroy();
    }
  },
};
