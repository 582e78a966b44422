/**
 * Discord interactions (slash commands, buttons and selects, modals): `X-Signature-Ed25519: <hex>`,
 * an Ed25519 signature of `<X-Signature-Timestamp><raw body>`, checked with the application's public
 * key (hex, Developer Portal > General Information). The PING Discord sends when the Interactions
 * Endpoint URL is saved is answered with a PONG and never claimed; Discord also sends deliberately
 * bad signatures to check that they get a 401.
 * https://discord.com/developers/docs/interactions/receiving-and-responding
 */

import {
  createPrivateKey,
  createPublicKey,
  type KeyObject,
  sign as signEd25519,
  verify as verifyEd25519,
} from 'node:crypto';
import {
  bodyBytes,
  decodeHex,
  effectiveTolerance,
  field,
  nonEmptyString,
  parseUnixSeconds,
  randomHex,
  readHeader,
  readRequestPayload,
  usableSecrets,
  withinTolerance,
} from './crypto.js';
import { defineProvider } from './define.js';
import type {
  DevSample,
  DevSampleOptions,
  ExtractResult,
  HandshakeResponse,
  ProviderReply,
  VerifyOptions,
  VerifyResult,
  WebhookRequest,
} from './types.js';

/** Discord signs no time window of its own; five minutes, as for Slack and Standard Webhooks. */
const DEFAULT_TOLERANCE_SECONDS = 300;
const DEFAULT_ACCOUNT = 'default';
const ED25519_KEY_BYTES = 32;
const ED25519_SIGNATURE_BYTES = 64;

/** Interaction types (https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-object-interaction-type). */
const INTERACTION = { ping: 1, command: 2, component: 3, autocomplete: 4, modal: 5 } as const;
const TYPE_NAMES: Readonly<Record<number, string>> = {
  [INTERACTION.command]: 'application_command',
  [INTERACTION.component]: 'message_component',
  [INTERACTION.autocomplete]: 'application_command_autocomplete',
  [INTERACTION.modal]: 'modal_submit',
};
/** Interaction callback types: PONG, "thinking…" for a command or modal, "update later" for a component. */
const CALLBACK = { pong: 1, deferredMessage: 5, deferredUpdate: 6, autocompleteResult: 8 } as const;

/**
 * The development key pair of `npm start`: a fixed Ed25519 seed, public so that `npm run send` can
 * sign what the local receiver verifies with `DEV_PUBLIC_KEY`. Never a production key: Discord's
 * private key never leaves Discord.
 */
const DEV_PRIVATE_SEED = '377cf489cdef7cbb80255adc14006b014f04edbc07864a4f8db42d0620daa97c';
export const DISCORD_DEV_PUBLIC_KEY = '1c9cb0941c40ba02a4aaa02889f462a4f7abd6e7bb4dd77d07fa48f59e53fcd1';

/** PKCS#8 and SPKI wrappers of raw 32-byte Ed25519 keys (RFC 8410). */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** A hex public key as a key object, parsed once per container; undefined if it is not 32 bytes of hex. */
const publicKeys = new Map<string, KeyObject | undefined>();
function publicKeyOf(hex: string): KeyObject | undefined {
  if (publicKeys.has(hex)) return publicKeys.get(hex);
  const raw = decodeHex(hex.trim());
  let key: KeyObject | undefined;
  if (raw?.length === ED25519_KEY_BYTES) {
    try {
      key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
    } catch {
      key = undefined;
    }
  }
  publicKeys.set(hex, key);
  return key;
}

function verify(request: WebhookRequest, options: VerifyOptions): VerifyResult {
  const keys = usableSecrets(options.secrets)
    .map(publicKeyOf)
    .filter((key): key is KeyObject => key !== undefined);
  if (keys.length === 0) return { ok: false, reason: 'no_secret_configured' };
  const signatureHex = readHeader(request.headers, 'x-signature-ed25519');
  const timestampText = readHeader(request.headers, 'x-signature-timestamp');
  if (signatureHex === undefined || timestampText === undefined)
    return { ok: false, reason: 'missing_signature' };
  const timestamp = parseUnixSeconds(timestampText);
  const signature = decodeHex(signatureHex);
  if (timestamp === undefined || signature?.length !== ED25519_SIGNATURE_BYTES) {
    return { ok: false, reason: 'malformed_signature' };
  }
  const signedContent = Buffer.concat([Buffer.from(timestampText), request.rawBody]);
  if (!keys.some((key) => verifyEd25519(null, signedContent, key, signature))) {
    return { ok: false, reason: 'signature_mismatch' };
  }
  // Signature first, then time: a captured interaction sent again later is refused, in both directions.
  const tolerance = effectiveTolerance(options.toleranceSeconds, DEFAULT_TOLERANCE_SECONDS);
  if (!withinTolerance(timestamp, options.nowSeconds, tolerance)) {
    return { ok: false, reason: 'timestamp_outside_tolerance' };
  }
  return { ok: true };
}

function readPayload(request: WebhookRequest): Record<string, unknown> | undefined {
  return readRequestPayload(request);
}

const json = (body: unknown): ProviderReply => ({
  statusCode: 200,
  contentType: 'application/json',
  body: JSON.stringify(body),
});

/**
 * PING gets PONG. Autocomplete wants its choices in the answer itself, which a queue cannot give:
 * it gets an empty list and is not claimed (answer autocomplete from a function of its own).
 */
function handshake(request: WebhookRequest): HandshakeResponse | undefined {
  const type = readPayload(request)?.type;
  if (type === INTERACTION.ping) return { name: 'ping', ...json({ type: CALLBACK.pong }) };
  if (type === INTERACTION.autocomplete) {
    return { name: 'autocomplete', ...json({ type: CALLBACK.autocompleteResult, data: { choices: [] } }) };
  }
  return undefined;
}

/**
 * The interaction response for an event the receiver took or already had: a deferred answer, which
 * shows "thinking…" (commands, modals) or nothing (components) until the processor follows up
 * through the interaction token (valid 15 minutes). A duplicate gets the same answer.
 */
function acknowledge(request: WebhookRequest): ProviderReply | undefined {
  const type = readPayload(request)?.type;
  if (type === INTERACTION.component) return json({ type: CALLBACK.deferredUpdate });
  if (type === INTERACTION.command || type === INTERACTION.modal)
    return json({ type: CALLBACK.deferredMessage });
  return undefined;
}

/** `<application_command|message_component|modal_submit>[.<command name or custom_id>]`. */
function eventTypeOf(payload: Record<string, unknown>): string | undefined {
  const type = payload.type;
  const base = typeof type === 'number' ? TYPE_NAMES[type] : undefined;
  if (base === undefined) return undefined;
  const detail =
    nonEmptyString(field(payload.data, 'name')) ?? nonEmptyString(field(payload.data, 'custom_id'));
  return detail === undefined ? base : `${base}.${detail}`;
}

/** Discord ids are snowflakes: milliseconds since 2015-01-01 in the top 42 bits. */
const DISCORD_EPOCH_MS = 1_420_070_400_000n;
function snowflakeSeconds(id: string): number | undefined {
  if (!/^\d{1,20}$/.test(id)) return undefined;
  return Number(((BigInt(id) >> 22n) + DISCORD_EPOCH_MS) / 1000n);
}

function extract(request: WebhookRequest): ExtractResult {
  const payload = readPayload(request);
  if (payload === undefined)
    return { ok: false, reason: 'invalid_json', detail: 'body is not a JSON object' };
  // The interaction id: one per user action; Discord does not redeliver an interaction.
  const eventId = nonEmptyString(payload.id);
  if (eventId === undefined) return { ok: false, reason: 'missing_event_id' };
  const eventType = eventTypeOf(payload);
  if (eventType === undefined) return { ok: false, reason: 'missing_event_type' };
  const message = nonEmptyString(field(payload.message, 'id'));
  const channel = nonEmptyString(payload.channel_id);
  return {
    ok: true,
    event: {
      eventId,
      eventType,
      // Signed: the application the interaction was sent to.
      account: nonEmptyString(payload.application_id) ?? DEFAULT_ACCOUNT,
      objectId: message ?? channel,
      ...(message !== undefined
        ? { objectKind: 'message' }
        : channel !== undefined
          ? { objectKind: 'channel' }
          : {}),
      occurredAt: snowflakeSeconds(eventId),
    },
  };
}

/**
 * The signing key of `npm run send`: the development public key stands for its private seed; any
 * other value must be an Ed25519 private seed (64 hex characters), as a test signing with a key
 * Discord would not use.
 */
function signingKey(secret: string): KeyObject {
  const seedHex = secret === DISCORD_DEV_PUBLIC_KEY ? DEV_PRIVATE_SEED : secret;
  const seed = decodeHex(seedHex);
  if (seed?.length !== ED25519_KEY_BYTES) {
    throw new Error(
      'a Discord signature needs a private key: pass the development public key or a 32-byte Ed25519 seed in hex',
    );
  }
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** `X-Signature-Ed25519` and `X-Signature-Timestamp` for `body`, as Discord computes them. */
function sign(body: string | Buffer, secret: string, nowSeconds: number): Record<string, string> {
  const timestamp = String(nowSeconds);
  const signature = signEd25519(
    null,
    Buffer.concat([Buffer.from(timestamp), bodyBytes(body)]),
    signingKey(secret),
  );
  return { 'x-signature-ed25519': signature.toString('hex'), 'x-signature-timestamp': timestamp };
}

/** The public key of an Ed25519 seed (hex), for tests that sign with a key of their own. */
export function discordPublicKeyOf(seedHex: string): string {
  const jwk = createPublicKey(signingKey(seedHex)).export({ format: 'jwk' });
  return Buffer.from(String(jwk.x), 'base64url').toString('hex');
}

const APPLICATION_ID = '1187301233440161844';
const GUILD_ID = '1187301300423196732';

/** A snowflake for `nowSeconds` (so the event time read back is the sample's). */
function snowflake(nowSeconds: number): string {
  const ms = BigInt(nowSeconds) * 1000n + BigInt(Number.parseInt(randomHex(1), 16) % 1000);
  return (((ms - DISCORD_EPOCH_MS) << 22n) | BigInt(Number.parseInt(randomHex(3), 16) & 0x3fffff)).toString();
}

/** An interaction in the documented shape (https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-object). */
function sample(type: string, options: DevSampleOptions): DevSample {
  const id = options.eventId ?? snowflake(options.nowSeconds);
  // `<kind>[.<name>]`: the event type `extract` reads back (the name is the command's or the custom_id).
  const dot = type.indexOf('.');
  const kind = dot < 0 ? type : type.slice(0, dot);
  const named = dot < 0 ? undefined : type.slice(dot + 1);
  // The object is the message for a component (its channel stays the sample's), else the channel.
  const channel = (kind === 'message_component' ? undefined : options.objectId) ?? '1187301300423196735';
  const user = { id: '80351110224678912', username: 'nelly', global_name: 'Nelly', discriminator: '0' };
  const common = {
    id,
    application_id: APPLICATION_ID,
    token: `aW50ZXJhY3Rpb246${randomHex(24)}`,
    version: 1,
    app_permissions: '2248473465835073',
    locale: 'en-US',
    entitlements: [],
    authorizing_integration_owners: { '0': GUILD_ID },
    context: 0,
  };
  const guild = {
    guild_id: GUILD_ID,
    guild_locale: 'en-US',
    channel_id: channel,
    channel: { id: channel, type: 0, name: 'general', guild_id: GUILD_ID },
    member: {
      user,
      roles: [],
      joined_at: '2024-01-02T10:00:00.000000+00:00',
      permissions: '2248473465835073',
    },
  };
  let interaction: Record<string, unknown>;
  if (kind === 'ping') {
    interaction = {
      id,
      application_id: APPLICATION_ID,
      type: INTERACTION.ping,
      token: common.token,
      version: 1,
      user,
    };
  } else if (kind === 'message_component') {
    interaction = {
      ...common,
      ...guild,
      type: INTERACTION.component,
      message: {
        id: options.objectId ?? snowflake(options.nowSeconds - 60),
        channel_id: channel,
        content: 'Pick one',
      },
      data: { custom_id: named ?? 'approve', component_type: 2 },
    };
  } else if (kind === 'modal_submit') {
    interaction = {
      ...common,
      ...guild,
      type: INTERACTION.modal,
      data: {
        custom_id: named ?? 'feedback',
        components: [{ type: 1, components: [{ type: 4, custom_id: 'text', value: 'Works for me' }] }],
      },
    };
  } else {
    const name = named ?? 'refund';
    interaction = {
      ...common,
      ...guild,
      type: INTERACTION.command,
      data: {
        id: '1187301233440161845',
        name,
        type: 1,
        options: [{ name: 'payment', type: 3, value: `pi_${randomHex(8)}` }],
      },
    };
  }
  return {
    body: JSON.stringify(interaction),
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Discord-Interactions/1.0 (+https://discord.com)',
    },
    summary: type === 'ping' ? 'PING (endpoint check)' : `${type} ${id} in channel ${channel}`,
  };
}

export const discordProvider = defineProvider({
  id: 'discord',
  name: 'Discord',
  defaults: {
    // Discord never redelivers an interaction: an answer after 3 s fails it for the user, who may
    // try again (a new interaction, a new id). The claim only has to outlive a captured request
    // sent again within the tolerance, and the processor's own redeliveries: a day.
    claimTtlSeconds: 24 * 3600,
    toleranceSeconds: DEFAULT_TOLERANCE_SECONDS,
    keyRules: { default: { kind: 'event-id' } },
  },
  defaultAccount: DEFAULT_ACCOUNT,
  secret: {
    hint: "the application's Public Key (hex) from Developer Portal > General Information; a public key, not the bot token",
    devSecret: DISCORD_DEV_PUBLIC_KEY,
  },
  headers: { secret: ['x-signature-ed25519'] },
  // No redeliveries: zero duplicates is the normal state.
  alarms: { duplicateRatioLow: false },
  verify,
  handshake,
  extract,
  readPayload,
  acknowledge,
  dev: {
    sampleTypes: ['application_command.refund', 'message_component.approve', 'modal_submit.feedback', 'ping'],
    sample,
    sign,
  },
  reconcile: {
    kind: 'none',
    why: 'an interaction is answered in the request or not at all: there is nothing to deliver later',
  },
  docs: {
    signature: {
      header: '`X-Signature-Ed25519: <hex>` with `X-Signature-Timestamp`',
      signedContent: '`<timestamp><raw body>`',
      digest: "Ed25519 (64-byte signature, hex) with the application's public key (32 bytes, hex)",
      tolerance: '300 s either way (ours: Discord states none)',
    },
    identity: {
      eventId: 'payload `id`, the interaction id (signed)',
      eventType:
        '`application_command[.<name>]`, `message_component[.<custom_id>]`, `modal_submit[.<custom_id>]` from `type` and `data` (signed); PING gets `{"type":1}` and autocomplete an empty choice list, never claimed',
      account: 'payload `application_id` (signed)',
      object: '`message.id` for a component, else `channel_id`',
    },
    retryWindow: {
      text: 'none: an interaction is sent once and must be answered within 3 s (commands and modals get `{"type":5}`, components `{"type":6}`, the processor follows up)',
      source:
        'https://discord.com/developers/docs/interactions/receiving-and-responding#responding-to-an-interaction',
    },
  },
});
