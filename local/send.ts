/**
 * `npm run send -- <provider> [event-type] [--dup N] [--concurrent N] [--url URL] [--id ID] [--object ID]`
 * `npm run send -- <provider> [event-type] --file PATH | --body JSON [--dup N] [--concurrent N] ...`
 *
 * Signs a realistic sample event (or a body of your own, byte for byte: `--file`, `-` for stdin, or
 * `--body`) with the configured secret (the provider's environment variable, else the local
 * development default) and posts it to the local stack (from cdk-outputs.local.json) or to --url,
 * printing each answer, then what reached the effects sink.
 *
 * The same logic is `webhooks send` (cli/commands/send.ts): `parseSendArgs` and `sendSample` are
 * exported for it; run as a script, this file behaves as `npm run send` always has.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROVIDER_LIST, requireProvider } from '../lambdas/providers/index.js';
import { isProviderId, PROVIDER_IDS, type ProviderId } from '../lambdas/providers/types.js';
import { buildIdempotencyKey, resolveKeyRule } from '../lambdas/shared/keys.js';
import { webhookUrlOutputId } from '../lambdas/shared/naming.js';
import { localSecrets } from './dev-secrets.js';
import { type OwnDelivery, ownDelivery, SAMPLE_TYPES, sampleDelivery } from './samples.js';
import { localOutputsFile } from './settings.js';

/** `GitHub push`: the samples `--bytes` can size (each provider module's `dev.sizedTypes`). */
function sizedSamples(): string {
  return (
    PROVIDER_LIST.flatMap(({ dev, name }) => dev.sizedTypes.map((type) => `${name} ${type}`)).join(', ') ||
    'none'
  );
}

/** The usage text; `command` is how the caller invokes it (`npm run send --`, `webhooks send`). */
export function sendUsage(command = 'npm run send --', extraOptions = ''): string {
  return `usage: ${command} <provider> [event-type] [options]

  provider      ${PROVIDER_IDS.join(', ')}
  event-type    one of the samples (default: the first):
${PROVIDER_IDS.map((p) => `                  ${p.padEnd(9)} ${(SAMPLE_TYPES[p] ?? []).join(', ')}`).join('\n')}

options
  --dup N         send the same delivery N times, one after the other (default 1)
  --concurrent N  send N copies of the delivery at once (default 1)
  --url URL       post here instead of the local stack's URL for the provider
  --id ID         use this provider event id (to redeliver "the same" event; Twilio: MessageSid[:status])
  --object ID     use this business object id (payment intent, order, payment, invoice)
  --secret S      sign with this secret instead of the configured one (Discord: a 32-byte Ed25519
                  seed in hex; the configured development public key signs with its own pair)
  --bytes SIZE    ${sizedSamples()} only: a body of exactly SIZE (700kb, 3mb, 5.5mb)
  --file PATH     send this body instead of a sample, byte for byte (- reads stdin): signed as a
                  sample is, with the sample's headers for event-type (the event id and type
                  headers of GitHub, Shopify, Standard Webhooks; --id fixes such an id). The event
                  id and type printed are what the provider reads from it; a body it would refuse
                  (no event id, not JSON) is refused before anything is posted. Twilio: a form body
  --body JSON     the same, with the body given inline${extraOptions}`;
}

/** The command line is wrong; the message says how. */
export class SendUsageError extends Error {
  override readonly name = 'SendUsageError';
}

export interface SendArgs {
  readonly provider: ProviderId;
  readonly type: string | undefined;
  readonly dup: number;
  readonly concurrent: number;
  readonly url: string | undefined;
  readonly eventId: string | undefined;
  readonly objectId: string | undefined;
  readonly secret: string | undefined;
  /** A sized sample (the provider module's `dev.sizedTypes`): the body's exact size in bytes. */
  readonly bytes?: number;
  /** `--file`: send this file's bytes instead of a sample (`-`: stdin). */
  readonly file?: string;
  /** `--body`: send this text instead of a sample. */
  readonly body?: string;
}

export type ParsedSendArgs = { readonly help: true } | { readonly help: false; readonly args: SendArgs };

const SEND_OPTIONS = ['dup', 'concurrent', 'url', 'id', 'object', 'secret', 'bytes', 'file', 'body'];

/** `700000`, `700kb`, `3MB`, `5.5mb`: decimal units, as providers state their limits. */
export function parseByteSize(raw: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb)?$/i.exec(raw.trim());
  const unit = { b: 1, kb: 1_000, mb: 1_000_000 }[(m?.[2] ?? 'b').toLowerCase() as 'b' | 'kb' | 'mb'];
  const bytes = m?.[1] === undefined ? Number.NaN : Math.round(Number(m[1]) * unit);
  if (!Number.isSafeInteger(bytes) || bytes < 4_000 || bytes > 20_000_000)
    throw new SendUsageError(`--bytes must be a size from 4kb to 20mb (e.g. 700kb, 3mb), got ${raw}`);
  return bytes;
}

export function parseSendArgs(argv: readonly string[]): ParsedSendArgs {
  const positional: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--help' || arg === '-h') return { help: true };
    if (arg.startsWith('--')) {
      const value = argv[i + 1];
      if (value === undefined) throw new SendUsageError(`${arg} needs a value`);
      flags[arg.slice(2)] = value;
      i++;
    } else positional.push(arg);
  }
  const [provider, type] = positional;
  if (!provider) throw new SendUsageError('name a provider');
  if (!isProviderId(provider)) throw new SendUsageError(`unknown provider ${JSON.stringify(provider)}`);
  const count = (name: string) => {
    const raw = flags[name];
    if (raw === undefined) return 1;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > 1000)
      throw new SendUsageError(`--${name} must be a whole number from 1 to 1000`);
    return n;
  };
  for (const name of Object.keys(flags)) {
    if (!SEND_OPTIONS.includes(name)) throw new SendUsageError(`unknown option --${name}`);
  }
  const own = flags.file !== undefined ? '--file' : flags.body !== undefined ? '--body' : undefined;
  if (flags.file !== undefined && flags.body !== undefined)
    throw new SendUsageError('--file and --body both give the body: pass one');
  if (own && flags.bytes !== undefined)
    throw new SendUsageError(`--bytes sizes a sample: ${own} sends your body as it is`);
  if (own && flags.object !== undefined)
    throw new SendUsageError(`--object sets a sample's object: ${own} sends your body as it is`);
  if (flags.file !== undefined && flags.file.trim() === '') throw new SendUsageError('--file needs a path');
  if (flags.body !== undefined && flags.body.trim() === '') throw new SendUsageError('--body needs a body');
  return {
    help: false,
    args: {
      provider,
      type,
      dup: count('dup'),
      concurrent: count('concurrent'),
      url: flags.url,
      eventId: flags.id,
      objectId: flags.object,
      secret: flags.secret,
      ...(flags.bytes === undefined ? {} : { bytes: bytesFor(provider, type, flags.bytes) }),
      ...(flags.file === undefined ? {} : { file: flags.file }),
      ...(flags.body === undefined ? {} : { body: flags.body }),
    },
  };
}

function bytesFor(provider: ProviderId, type: string | undefined, raw: string): number {
  const { dev } = requireProvider(provider);
  if (!dev.sizedTypes.includes(type ?? dev.sampleTypes[0]))
    throw new SendUsageError(`--bytes sizes ${sizedSamples()} deliveries only`);
  return parseByteSize(raw);
}

/** The local stack's outputs (`LOCAL_OUTPUTS_FILE`, else cdk-outputs.local.json), if it is running. */
export function readLocalOutputs(env: NodeJS.ProcessEnv = process.env): Record<string, string> | undefined {
  const file = localOutputsFile(env);
  if (!existsSync(file)) return undefined;
  const all = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, string>>;
  return Object.values(all)[0];
}

export interface DeliveryResult {
  readonly label: string;
  /** HTTP status; 0 when the request itself failed. */
  readonly status: number;
  readonly outcome?: string;
  readonly reason?: string;
  readonly key?: string;
  readonly deliveries?: number;
  readonly error?: string;
  readonly ms: number;
}

export interface EffectSeen {
  readonly service: string;
  readonly replay: boolean;
  readonly idempotencyKey?: string;
}

export interface SendReport {
  readonly provider: ProviderId;
  /** `payment_intent.succeeded evt_… about pi_…` */
  readonly summary: string;
  /** `--file` / `--body`: where the body came from and its size; absent for a sample. */
  readonly body?: { readonly source: string; readonly bytes: number };
  /**
   * What the provider's own `extract` reads of the delivery (the receiver reads the same): the id,
   * type, account and object its key is built from. Absent for a handshake.
   */
  readonly event?: {
    readonly eventId: string;
    readonly eventType: string;
    readonly account: string;
    readonly objectId?: string;
  };
  readonly url: string;
  readonly deliveries: readonly DeliveryResult[];
  /** What the local effects sink recorded for this event; absent with --url or without the sink. */
  readonly effects?: { readonly url: string; readonly entries: readonly EffectSeen[] };
  /** Every delivery was answered 2xx. */
  readonly ok: boolean;
}

export interface SendOptions {
  /** The stack's outputs: the webhook URL and, locally, the effects sink. */
  readonly outputs?: Readonly<Record<string, string>> | undefined;
  readonly env?: NodeJS.ProcessEnv;
  readonly log?: (line: string) => void;
  readonly warn?: (line: string) => void;
  /** `--file -`: the body piped in. @default process.stdin, refused when it is a terminal */
  readonly stdin?: () => Promise<Buffer>;
}

/** Reads all of process.stdin; a terminal is refused (nothing was piped in). */
async function readProcessStdin(): Promise<Buffer> {
  if (process.stdin.isTTY)
    throw new SendUsageError('--file - reads the body from stdin: pipe it in (... --file - < event.json)');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/**
 * The body `--file` or `--body` gives, and where it came from: the file's exact bytes (`-`: stdin),
 * or the inline text as UTF-8. Undefined for a sample. A missing, unreadable or empty file is a
 * SendUsageError.
 */
export async function readOwnBody(
  args: Pick<SendArgs, 'file' | 'body'>,
  stdin: () => Promise<Buffer> = readProcessStdin,
): Promise<{ readonly body: Buffer; readonly source: string } | undefined> {
  if (args.body !== undefined) return { body: Buffer.from(args.body, 'utf8'), source: '--body' };
  const file = args.file;
  if (file === undefined) return undefined;
  let body: Buffer;
  let source: string;
  if (file === '-') {
    body = await stdin();
    source = 'stdin';
  } else {
    source = file;
    try {
      if (statSync(file).isDirectory()) throw new SendUsageError(`--file ${file} is a directory`);
      body = readFileSync(file);
    } catch (error) {
      if (error instanceof SendUsageError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      throw new SendUsageError(
        code === 'ENOENT'
          ? `--file ${file}: no such file`
          : `cannot read --file ${file}: ${code ?? (error as Error).message}`,
      );
    }
  }
  if (body.length === 0) throw new SendUsageError(`${file === '-' ? 'stdin' : `--file ${file}`} is empty`);
  return { body, source };
}

/** `--file event.json`, `stdin`, `--body`: how a message names the body. */
const named = (source: string): string =>
  source === '--body' || source === 'stdin' ? source : `--file ${source}`;

/**
 * Checks a body of your own as the receiver will read it, before anything is posted: JSON where the
 * provider's deliveries are JSON, then the provider's own reading (`ownDelivery`): a body it would
 * refuse (no event id, no type, another account than the headers) is a SendUsageError naming where
 * the provider reads what is missing. `--id` must be the id the provider reads.
 */
export function checkOwnDelivery(
  provider: ProviderId,
  delivery: OwnDelivery,
  source: string,
  eventId: string | undefined,
): void {
  const what = named(source);
  const contentType = delivery.headers['content-type'] ?? '';
  if (/json/i.test(contentType)) {
    try {
      JSON.parse(delivery.body.toString('utf8'));
    } catch (error) {
      throw new SendUsageError(`${what} is not JSON: ${(error as Error).message}`);
    }
  }
  const { reading } = delivery;
  const { defaults, docs, name } = requireProvider(provider);
  if (reading.kind === 'refused') {
    const detail = reading.detail ? ` (${reading.detail})` : '';
    const problem =
      reading.reason === 'missing_event_id'
        ? `has no event id: ${name} reads it from ${docs.identity.eventId}${detail}`
        : reading.reason === 'missing_event_type'
          ? `has no event type: ${name} reads it from ${docs.identity.eventType}${detail}`
          : reading.reason === 'invalid_json'
            ? `is not a payload ${name} can read${detail}`
            : `names another account than the delivery's headers (${reading.reason})${detail}`;
    throw new SendUsageError(`${what} ${problem}: the receiver would refuse it; nothing was sent`);
  }
  if (reading.kind === 'event') {
    // The provider's default key rule for the type: a composite or business-object key needs the
    // object id the body names (`payment_intent.*`: `data.object.id`).
    const rule = resolveKeyRule(defaults.keyRules, reading.event.eventType);
    const key = buildIdempotencyKey(provider, reading.event, rule);
    if (!key.ok)
      throw new SendUsageError(
        key.reason === 'missing_object_id'
          ? `${what} names no object: ${name} keys ${reading.event.eventType} events by their object (the ${rule.kind} rule), read from ${docs.identity.object}: the receiver would refuse it; nothing was sent`
          : `${what}: the event's key would be ${key.bytes} bytes, over the receiver's limit: the receiver would refuse it; nothing was sent`,
      );
  }
  if (eventId !== undefined && reading.kind === 'event' && reading.event.eventId !== eventId)
    throw new SendUsageError(
      `--id ${eventId}: ${name} reads the event id ${reading.event.eventId} from ${docs.identity.eventId}; change it in the body`,
    );
}

/** Signs the sample delivery and posts it as asked; prints through `log` as `npm run send` does. */
export async function sendSample(args: SendArgs, options: SendOptions = {}): Promise<SendReport> {
  const log = options.log ?? (() => {});
  const warn = options.warn ?? (() => {});
  const outputs = options.outputs;
  const url = args.url ?? outputs?.[webhookUrlOutputId(args.provider)];
  if (!url)
    throw new SendUsageError(
      'no URL: start the local stack with npx webhooks local (npm start in the repository; it writes cdk-outputs.local.json), or pass --url',
    );
  const secret = args.secret ?? localSecrets(args.provider, options.env)[0] ?? '';
  const own = await readOwnBody(args, options.stdin);
  let delivery: { readonly body: string | Buffer; readonly headers: Record<string, string> };
  let summary: string;
  /** What identifies this event's effects in the sink's records: its object id, else the event id. */
  let match: string;
  let event: SendReport['event'];
  if (own) {
    const signed = ownDelivery(args.provider, own.body, {
      ...(args.type ? { type: args.type } : {}),
      ...(args.eventId ? { eventId: args.eventId } : {}),
      secret,
      url,
    });
    checkOwnDelivery(args.provider, signed, own.source, args.eventId);
    const { reading } = signed;
    delivery = signed;
    if (reading.kind === 'event') {
      const { eventId, eventType, account, objectId } = reading.event;
      event = { eventId, eventType, account, ...(objectId === undefined ? {} : { objectId }) };
      summary = `${eventType} ${eventId}${objectId === undefined ? '' : ` about ${objectId}`}`;
      match = objectId ?? eventId;
      if (args.type && args.type !== eventType)
        warn(`note: the body's event type is ${eventType} (as ${args.provider} reads it), not ${args.type}`);
    } else {
      summary = `${reading.kind === 'handshake' ? reading.name : ''} handshake`;
      match = '\u0000';
    }
    summary += ` (${own.source}, ${own.body.length} bytes)`;
  } else {
    if (args.type && !SAMPLE_TYPES[args.provider]?.includes(args.type)) {
      warn(`note: ${args.type} has no tailored sample; sending the generic shape with that type`);
    }
    const sample = sampleDelivery(args.provider, {
      ...(args.type ? { type: args.type } : {}),
      ...(args.eventId ? { eventId: args.eventId } : {}),
      ...(args.objectId ? { objectId: args.objectId } : {}),
      ...(args.bytes === undefined ? {} : { bytes: args.bytes }),
      secret,
      url,
    });
    delivery = sample;
    summary = sample.summary;
    match = sample.summary.split(' about ').at(-1) ?? '\u0000';
  }
  log(`${args.provider}: ${summary}`);
  log(`POST ${url}`);

  const post = async (label: string): Promise<DeliveryResult> => {
    const started = Date.now();
    try {
      const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
      const text = await response.text();
      let outcome = text;
      let parsed: { outcome?: string; key?: string; deliveries?: number; reason?: string; message?: string } =
        {};
      try {
        parsed = JSON.parse(text) as typeof parsed;
        // A provider's own answer (a handshake's challenge): printed as it came.
        if (parsed.outcome === undefined && parsed.message === undefined) throw new Error('not ours');
        outcome = [
          // API Gateway's own answers (413 for size) carry only a message.
          parsed.outcome ?? (parsed.message && `(API Gateway) ${parsed.message}`),
          parsed.reason,
          parsed.key && `key=${parsed.key}`,
          parsed.deliveries && `deliveries=${parsed.deliveries}`,
        ]
          .filter(Boolean)
          .join('  ');
      } catch {
        // not JSON: print as is
      }
      // A provider-shaped answer (TwiML, a Discord interaction response) carries the verdict in a header.
      const verdict = response.headers.get('x-webhook-outcome');
      if (parsed.outcome === undefined && verdict) {
        outcome = `${verdict}  ${text}`;
        parsed = { ...parsed, outcome: verdict };
      }
      const ms = Date.now() - started;
      log(`  ${label.padEnd(8)} ${response.status}  ${outcome}  (${ms} ms)`);
      return {
        label,
        status: response.status,
        ...(parsed.outcome === undefined ? {} : { outcome: parsed.outcome }),
        ...(parsed.reason === undefined ? {} : { reason: parsed.reason }),
        ...(parsed.key === undefined ? {} : { key: parsed.key }),
        ...(parsed.deliveries === undefined ? {} : { deliveries: parsed.deliveries }),
        ms,
      };
    } catch (error) {
      log(`  ${label.padEnd(8)} failed: ${(error as Error).message}`);
      return { label, status: 0, error: (error as Error).message, ms: Date.now() - started };
    }
  };

  const results: DeliveryResult[] = [];
  for (let round = 1; round <= args.dup; round++) {
    const batch = await Promise.all(
      Array.from({ length: args.concurrent }, (_, i) =>
        post(args.concurrent > 1 ? `#${round}.${i + 1}` : `#${round}`),
      ),
    );
    results.push(...batch);
  }

  let effects: SendReport['effects'];
  const effectsUrl = outputs?.LocalEffectsUrl;
  if (effectsUrl && !args.url) {
    // Give the processor a moment (its poller batches for up to a second), then show the effects.
    await new Promise((r) => setTimeout(r, 2_500));
    try {
      const all = (await (await fetch(effectsUrl)).json()) as Array<{
        service: string;
        replay: boolean;
        idempotencyKey?: string;
        body: unknown;
      }>;
      const mine = all.filter((e) => JSON.stringify(e.body).includes(match));
      log(
        mine.length > 0
          ? `effects at ${effectsUrl}: ${mine.length} for this event`
          : `effects at ${effectsUrl}: none for this event`,
      );
      for (const e of mine)
        log(`  ${e.service.padEnd(7)} ${e.replay ? 'replay' : 'applied'}  ${e.idempotencyKey ?? ''}`);
      effects = {
        url: effectsUrl,
        entries: mine.map((e) => ({
          service: e.service,
          replay: e.replay,
          ...(e.idempotencyKey === undefined ? {} : { idempotencyKey: e.idempotencyKey }),
        })),
      };
    } catch {
      log(`(could not read ${effectsUrl})`);
    }
  }
  return {
    provider: args.provider,
    summary,
    ...(own ? { body: { source: own.source, bytes: own.body.length } } : {}),
    ...(event ? { event } : {}),
    url,
    deliveries: results,
    ...(effects ? { effects } : {}),
    ok: results.every((r) => r.status >= 200 && r.status < 300),
  };
}

function fail(message: string): never {
  console.error(`${message}\n\n${sendUsage()}`);
  process.exit(2);
}

async function main(): Promise<void> {
  let parsed: ParsedSendArgs;
  try {
    parsed = parseSendArgs(process.argv.slice(2));
  } catch (error) {
    if (error instanceof SendUsageError) fail(error.message);
    throw error;
  }
  if (parsed.help) {
    console.log(sendUsage());
    process.exit(0);
  }
  try {
    const report = await sendSample(parsed.args, {
      outputs: readLocalOutputs(),
      log: (line) => console.log(line),
      warn: (line) => console.warn(line),
    });
    process.exit(report.ok ? 0 : 1);
  } catch (error) {
    if (error instanceof SendUsageError) fail(error.message);
    throw error;
  }
}

// Run as a script (`npm run send`), not when imported by the CLI.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(String((error as Error)?.stack ?? error));
    process.exit(1);
  });
}
