/**
 * `npm run send -- <provider> [event-type] [--dup N] [--concurrent N] [--url URL] [--id ID] [--object ID]`
 *
 * Signs a realistic sample event with the configured secret (the provider's environment variable,
 * else the local development default) and posts it to the local stack (from cdk-outputs.local.json)
 * or to --url, printing each answer, then what reached the ledger and the mailer.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isProviderId, PROVIDER_IDS, type ProviderId } from '../lambdas/providers/types';
import { localSecrets } from './dev-secrets';
import { SAMPLE_TYPES, sampleDelivery } from './samples';

const USAGE = `usage: npm run send -- <provider> [event-type] [options]

  provider      ${PROVIDER_IDS.join(', ')}
  event-type    one of the samples (default: the first):
${PROVIDER_IDS.map((p) => `                  ${p.padEnd(9)} ${SAMPLE_TYPES[p].join(', ')}`).join('\n')}

options
  --dup N         send the same delivery N times, one after the other (default 1)
  --concurrent N  send N copies of the delivery at once (default 1)
  --url URL       post here instead of the local stack's URL for the provider
  --id ID         use this provider event id (to redeliver "the same" event)
  --object ID     use this business object id (payment intent, order, payment, invoice)
  --secret S      sign with this secret instead of the configured one`;

interface Args {
  provider: ProviderId;
  type: string | undefined;
  dup: number;
  concurrent: number;
  url: string | undefined;
  eventId: string | undefined;
  objectId: string | undefined;
  secret: string | undefined;
}

function fail(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

function parseArgs(argv: readonly string[]): Args {
  const positional: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    }
    if (arg.startsWith('--')) {
      const value = argv[i + 1];
      if (value === undefined) fail(`${arg} needs a value`);
      flags[arg.slice(2)] = value;
      i++;
    } else positional.push(arg);
  }
  const [provider, type] = positional;
  if (!provider) fail('name a provider');
  if (!isProviderId(provider)) fail(`unknown provider ${JSON.stringify(provider)}`);
  const count = (name: string) => {
    const raw = flags[name];
    if (raw === undefined) return 1;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > 1000) fail(`--${name} must be a whole number from 1 to 1000`);
    return n;
  };
  for (const name of Object.keys(flags)) {
    if (!['dup', 'concurrent', 'url', 'id', 'object', 'secret'].includes(name))
      fail(`unknown option --${name}`);
  }
  return {
    provider,
    type,
    dup: count('dup'),
    concurrent: count('concurrent'),
    url: flags.url,
    eventId: flags.id,
    objectId: flags.object,
    secret: flags.secret,
  };
}

function localOutputs(): Record<string, string> | undefined {
  const file =
    process.env.LOCAL_OUTPUTS_FILE ?? join(resolve(import.meta.dirname, '..'), 'cdk-outputs.local.json');
  if (!existsSync(file)) return undefined;
  const all = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, string>>;
  return Object.values(all)[0];
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const outputs = localOutputs();
  const outputName = `${args.provider[0]?.toUpperCase()}${args.provider.slice(1)}WebhookUrl`;
  const url = args.url ?? outputs?.[outputName];
  if (!url)
    fail('no URL: start the local stack with `npm start` (it writes cdk-outputs.local.json), or pass --url');
  if (args.type && !SAMPLE_TYPES[args.provider].includes(args.type)) {
    console.warn(`note: ${args.type} has no tailored sample; sending the generic shape with that type`);
  }
  const secret = args.secret ?? localSecrets(args.provider)[0] ?? '';
  const delivery = sampleDelivery(args.provider, {
    ...(args.type ? { type: args.type } : {}),
    ...(args.eventId ? { eventId: args.eventId } : {}),
    ...(args.objectId ? { objectId: args.objectId } : {}),
    secret,
  });
  console.log(`${args.provider}: ${delivery.summary}`);
  console.log(`POST ${url}`);

  const post = async (label: string) => {
    const started = Date.now();
    try {
      const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
      const text = await response.text();
      let outcome = text;
      try {
        const parsed = JSON.parse(text) as {
          outcome?: string;
          key?: string;
          deliveries?: number;
          reason?: string;
        };
        outcome = [
          parsed.outcome,
          parsed.reason,
          parsed.key && `key=${parsed.key}`,
          parsed.deliveries && `deliveries=${parsed.deliveries}`,
        ]
          .filter(Boolean)
          .join('  ');
      } catch {
        // not JSON: print as is
      }
      console.log(`  ${label.padEnd(8)} ${response.status}  ${outcome}  (${Date.now() - started} ms)`);
      return response.status;
    } catch (error) {
      console.log(`  ${label.padEnd(8)} failed: ${(error as Error).message}`);
      return 0;
    }
  };

  const statuses: number[] = [];
  for (let round = 1; round <= args.dup; round++) {
    const batch = await Promise.all(
      Array.from({ length: args.concurrent }, (_, i) =>
        post(args.concurrent > 1 ? `#${round}.${i + 1}` : `#${round}`),
      ),
    );
    statuses.push(...batch);
  }

  const effectsUrl = outputs?.LocalEffectsUrl;
  if (effectsUrl && !args.url) {
    // Give the processor a moment (its poller batches for up to a second), then show the effects.
    await new Promise((r) => setTimeout(r, 2_500));
    try {
      const effects = (await (await fetch(effectsUrl)).json()) as Array<{
        service: string;
        replay: boolean;
        idempotencyKey?: string;
        body: unknown;
      }>;
      const mine = effects.filter((e) =>
        JSON.stringify(e.body).includes(delivery.summary.split(' about ').at(-1) ?? '\u0000'),
      );
      console.log(
        mine.length > 0
          ? `effects at ${effectsUrl}: ${mine.length} for this event`
          : `effects at ${effectsUrl}: none for this event (only a payment's first success posts to the ledger and mailer)`,
      );
      for (const e of mine)
        console.log(`  ${e.service.padEnd(7)} ${e.replay ? 'replay' : 'applied'}  ${e.idempotencyKey ?? ''}`);
    } catch {
      console.log(`(could not read ${effectsUrl})`);
    }
  }
  process.exit(statuses.every((s) => s >= 200 && s < 300) ? 0 : 1);
}

main().catch((error) => {
  console.error(String((error as Error)?.stack ?? error));
  process.exit(1);
});
