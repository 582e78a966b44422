import { InteractionResponseType, InteractionType, verifyKey } from 'discord-interactions';
import { describe, expect, it } from 'vitest';
import {
  DISCORD_DEV_PUBLIC_KEY,
  discordProvider,
  discordPublicKeyOf,
} from '../../lambdas/providers/discord.js';
import type { VerifyOptions } from '../../lambdas/providers/types.js';
import { changeChar, fixture, flipByte, GARBAGE_BODIES, GARBAGE_HEADER_VALUES, request } from './support.js';

/** A key pair of this test's own (Discord's private key never leaves Discord). */
const SEED = '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb';
const PUBLIC_KEY = discordPublicKeyOf(SEED);
const OTHER_SEED = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const T = 1_703_145_268;
const body = fixture('discord', 'application_command.json');

function options(overrides: Partial<VerifyOptions> = {}): VerifyOptions {
  return { secrets: [PUBLIC_KEY], nowSeconds: T, ...overrides };
}
const signed = (payload: Buffer | string = body, seed = SEED, at = T) =>
  discordProvider.dev.sign(payload, seed, at);
const verify = (
  headers: Record<string, string | undefined>,
  payload: Buffer | string = body,
  opts = options(),
) => discordProvider.verify(request(headers, payload), opts);

describe('discord keys', () => {
  it('derives public keys as RFC 8032 does (test vectors 1 and 2), and the development pair is one', () => {
    // https://www.rfc-editor.org/rfc/rfc8032#section-7.1
    expect(discordPublicKeyOf(OTHER_SEED)).toBe(
      'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    );
    expect(PUBLIC_KEY).toBe('3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c');
    const headers = discordProvider.dev.sign(body, DISCORD_DEV_PUBLIC_KEY, T);
    expect(verify(headers, body, options({ secrets: [DISCORD_DEV_PUBLIC_KEY] }))).toEqual({ ok: true });
  });

  it('refuses to sign with anything that is not the development key or a 32-byte seed', () => {
    expect(() => discordProvider.dev.sign(body, 'not-a-key', T)).toThrow(/private key/);
    expect(() => discordProvider.dev.sign(body, 'ab'.repeat(31), T)).toThrow(/private key/);
  });
});

describe('discordProvider.verify', () => {
  it('accepts exactly what discord-interactions verifyKey accepts, and verifyKey accepts what we sign', async () => {
    const headers = signed();
    const official = (payload: Buffer, h = headers, key = PUBLIC_KEY) =>
      verifyKey(payload, h['x-signature-ed25519'] ?? '', h['x-signature-timestamp'] ?? '', key);
    expect(await official(body)).toBe(true);
    expect(verify(headers)).toEqual({ ok: true });

    const tampered = flipByte(body, 40);
    expect(await official(tampered)).toBe(false);
    expect(verify(headers, tampered)).toEqual({ ok: false, reason: 'signature_mismatch' });

    const otherKey = signed(body, OTHER_SEED);
    expect(await official(body, otherKey)).toBe(false);
    expect(verify(otherKey)).toEqual({ ok: false, reason: 'signature_mismatch' });

    // The timestamp is signed: moving it breaks the signature for both.
    const moved = { ...headers, 'x-signature-timestamp': String(T + 1) };
    expect(await official(body, moved)).toBe(false);
    expect(verify(moved)).toEqual({ ok: false, reason: 'signature_mismatch' });

    const flipped = {
      ...headers,
      'x-signature-ed25519': changeChar(headers['x-signature-ed25519'] ?? '', 10),
    };
    expect(await official(body, flipped)).toBe(false);
    expect(verify(flipped)).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('accepts any configured key (a rotation), ignores unusable ones, and needs one usable key', () => {
    expect(
      verify(signed(), body, options({ secrets: ['not hex', DISCORD_DEV_PUBLIC_KEY, PUBLIC_KEY] })),
    ).toEqual({
      ok: true,
    });
    expect(verify(signed(), body, options({ secrets: ['not hex', 'ab'.repeat(31)] }))).toEqual({
      ok: false,
      reason: 'no_secret_configured',
    });
  });

  it('refuses a timestamp over 5 minutes old or ahead, and honours a tolerance override', () => {
    expect(verify(signed(body, SEED, T - 300))).toEqual({ ok: true });
    for (const at of [T - 301, T + 301])
      expect(verify(signed(body, SEED, at))).toEqual({ ok: false, reason: 'timestamp_outside_tolerance' });
    expect(verify(signed(body, SEED, T - 600), body, options({ toleranceSeconds: 900 }))).toEqual({
      ok: true,
    });
  });

  it('tells missing headers from malformed ones', () => {
    const headers = signed();
    expect(verify({ 'x-signature-timestamp': headers['x-signature-timestamp'] })).toEqual({
      ok: false,
      reason: 'missing_signature',
    });
    expect(verify({ 'x-signature-ed25519': headers['x-signature-ed25519'] })).toEqual({
      ok: false,
      reason: 'missing_signature',
    });
    for (const bad of [
      { ...headers, 'x-signature-timestamp': 'yesterday' },
      { ...headers, 'x-signature-ed25519': 'zz'.repeat(64) },
      { ...headers, 'x-signature-ed25519': (headers['x-signature-ed25519'] ?? '').slice(0, 126) },
    ])
      expect(verify(bad)).toEqual({ ok: false, reason: 'malformed_signature' });
  });

  it('never throws on garbage headers and bodies', () => {
    for (const header of GARBAGE_HEADER_VALUES)
      for (const payload of GARBAGE_BODIES) {
        expect(verify({ 'x-signature-ed25519': header, 'x-signature-timestamp': header }, payload).ok).toBe(
          false,
        );
        expect(() => discordProvider.handshake?.(request({}, payload))).not.toThrow();
        expect(() => discordProvider.acknowledge?.(request({}, payload), 'accepted')).not.toThrow();
        expect(() => discordProvider.extract(request({}, payload))).not.toThrow();
      }
  });
});

describe('discordProvider.handshake and acknowledge', () => {
  const interaction = (type: number) => request({}, JSON.stringify({ id: '1', application_id: '2', type }));

  it('answers PING with PONG and autocomplete with no choices; leaves the rest to the pipeline', () => {
    expect(discordProvider.handshake?.(interaction(InteractionType.PING))).toEqual({
      name: 'ping',
      statusCode: 200,
      contentType: 'application/json',
      body: JSON.stringify({ type: InteractionResponseType.PONG }),
    });
    expect(
      discordProvider.handshake?.(interaction(InteractionType.APPLICATION_COMMAND_AUTOCOMPLETE)),
    ).toMatchObject({
      name: 'autocomplete',
      body: JSON.stringify({
        type: InteractionResponseType.APPLICATION_COMMAND_AUTOCOMPLETE_RESULT,
        data: { choices: [] },
      }),
    });
    for (const type of [
      InteractionType.APPLICATION_COMMAND,
      InteractionType.MESSAGE_COMPONENT,
      InteractionType.MODAL_SUBMIT,
    ])
      expect(discordProvider.handshake?.(interaction(type))).toBeUndefined();
  });

  it('defers commands and modals with a message to follow, components with an update to follow', () => {
    const answer = (type: number, outcome: 'accepted' | 'duplicate' = 'accepted') =>
      JSON.parse(discordProvider.acknowledge?.(interaction(type), outcome)?.body ?? 'null');
    expect(answer(InteractionType.APPLICATION_COMMAND)).toEqual({
      type: InteractionResponseType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE,
    });
    expect(answer(InteractionType.MODAL_SUBMIT, 'duplicate')).toEqual({
      type: InteractionResponseType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE,
    });
    expect(answer(InteractionType.MESSAGE_COMPONENT)).toEqual({
      type: InteractionResponseType.DEFERRED_UPDATE_MESSAGE,
    });
    expect(discordProvider.acknowledge?.(request({}, '{"type":99}'), 'accepted')).toBeUndefined();
  });
});

describe('discordProvider.extract', () => {
  it('reads the interaction id, a named type, the application, the channel and the time from the snowflake', () => {
    expect(discordProvider.extract(request({}, body))).toEqual({
      ok: true,
      event: {
        eventId: '1187302049924612136',
        eventType: 'application_command.refund',
        account: '1187301233440161844',
        objectId: '1187301300423196735',
        objectKind: 'channel',
        occurredAt: 1_703_145_267,
      },
    });
  });

  it('names a component by its custom_id and scopes it to its message', () => {
    const sample = discordProvider.dev.sample('message_component.approve', {
      nowSeconds: T,
      objectId: '999',
    });
    expect(discordProvider.extract(request({}, sample.body))).toMatchObject({
      ok: true,
      event: {
        eventType: 'message_component.approve',
        objectId: '999',
        objectKind: 'message',
        occurredAt: T,
      },
    });
  });

  it('names what is missing and never throws', () => {
    expect(discordProvider.extract(request({}, '{"type":2}'))).toMatchObject({
      ok: false,
      reason: 'missing_event_id',
    });
    expect(discordProvider.extract(request({}, '{"id":"1","type":42}'))).toMatchObject({
      ok: false,
      reason: 'missing_event_type',
    });
    expect(discordProvider.extract(request({}, 'type=2'))).toMatchObject({
      ok: false,
      reason: 'invalid_json',
    });
  });
});

describe('discordProvider.dev', () => {
  it('signs every sample so that verifyKey accepts it, with the event time the sample names', async () => {
    for (const type of discordProvider.dev.sampleTypes) {
      const sample = discordProvider.dev.sample(type, { nowSeconds: T });
      const headers = discordProvider.dev.sign(sample.body, SEED, T);
      expect(
        await verifyKey(
          sample.body,
          headers['x-signature-ed25519'] ?? '',
          headers['x-signature-timestamp'] ?? '',
          PUBLIC_KEY,
        ),
      ).toBe(true);
      const extracted = discordProvider.extract(request({}, sample.body));
      if (type === 'ping')
        expect(discordProvider.handshake?.(request({}, sample.body))).toMatchObject({ name: 'ping' });
      else expect(extracted).toMatchObject({ ok: true, event: { occurredAt: T } });
    }
  });
});
