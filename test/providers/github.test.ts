import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { WebhookDefinition } from '@octokit/webhooks-examples';
import { verify as octokitVerify, sign } from '@octokit/webhooks-methods';
import { describe, expect, it } from 'vitest';
import { githubProvider } from '../../lambdas/providers/github.js';
import { changeChar, flipByte, GARBAGE_BODIES, GARBAGE_HEADER_VALUES, request } from './support.js';

const SECRET = 'mysecret';
const NOW = 1_718_210_703;

/**
 * The example payloads GitHub's Octokit team publishes for every event. Read with JSON.parse: as a
 * module import the 4 MB file takes seconds to transform.
 */
const webhooks: readonly WebhookDefinition[] = JSON.parse(
  readFileSync(createRequire(import.meta.url).resolve('@octokit/webhooks-examples'), 'utf8'),
);

function examplesOf(name: string): readonly Record<string, unknown>[] {
  const definition = webhooks.find((webhook) => webhook.name === name);
  if (definition === undefined || definition.examples.length === 0) {
    throw new Error(`no ${name} examples in @octokit/webhooks-examples`);
  }
  return definition.examples as unknown as readonly Record<string, unknown>[];
}

/** The first push example, two-space indented as GitHub sends it. */
const pushBody = Buffer.from(JSON.stringify(examplesOf('push')[0], null, 2));

function verify(signature: string | undefined, body: Buffer | string, secrets: readonly string[] = [SECRET]) {
  return githubProvider.verify(request({ 'x-hub-signature-256': signature }, body), {
    secrets,
    nowSeconds: NOW,
  });
}

function deliveryHeaders(
  overrides: Record<string, string | undefined> = {},
): Record<string, string | undefined> {
  return {
    'content-type': 'application/json',
    'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    'x-github-event': 'push',
    'x-github-hook-id': '292430182',
    // A repository hook on the repository of the push example below.
    'x-github-hook-installation-target-id': '186853002',
    'x-github-hook-installation-target-type': 'repository',
    ...overrides,
  };
}

describe('githubProvider.verify: the unsigned hook target must agree with the signed body', () => {
  it('verifies the bytes whatever the hook headers say, and extract refuses a replay under another target', async () => {
    const signature = await sign(SECRET, pushBody.toString('utf8'));
    const replayed = request(
      {
        ...deliveryHeaders({ 'x-github-hook-installation-target-id': '424242' }),
        'x-hub-signature-256': signature,
      },
      pushBody,
    );
    expect(githubProvider.verify(replayed, { secrets: [SECRET], nowSeconds: NOW })).toEqual({ ok: true });
    expect(githubProvider.extract(replayed)).toEqual({ ok: false, reason: 'scope_mismatch' });
  });

  it('chooses the secret by the hook target: each hook has its own', () => {
    expect(githubProvider.secretScope?.(request(deliveryHeaders(), pushBody))).toBe('186853002');
  });
});

describe('githubProvider.verify', () => {
  it("verifies GitHub's published test vector", () => {
    const signature = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
    expect(verify(signature, 'Hello, World!', ["It's a Secret to Everybody"])).toEqual({ ok: true });
  });

  it("verifies @octokit/webhooks-methods' test vectors, compact and as GitHub formats them", () => {
    expect(
      verify('sha256=4864d2759938a15468b5df9ade20bf161da9b4f737ea61794142f3484236bda3', '{"foo":"bar"}'),
    ).toEqual({
      ok: true,
    });
    expect(
      verify(
        'sha256=e3eccac34c43c7dc1cbb905488b1b81347fcc700a7b025697a9d07862256023f',
        '{\n  "foo": "bar"\n}\n',
      ),
    ).toEqual({ ok: true });
  });

  it('accepts whatever @octokit/webhooks-methods sign produces', async () => {
    const payload = pushBody.toString('utf8');
    const signature = await sign(SECRET, payload);
    expect(await octokitVerify(SECRET, payload, signature)).toBe(true);
    expect(verify(signature, pushBody)).toEqual({ ok: true });
  });

  it('rejects a body with one byte changed', async () => {
    const signature = await sign(SECRET, pushBody.toString('utf8'));
    for (const index of [0, 7, pushBody.length >> 1, pushBody.length - 1]) {
      expect(verify(signature, flipByte(pushBody, index))).toEqual({
        ok: false,
        reason: 'signature_mismatch',
      });
    }
  });

  it('rejects a signature with one hex digit changed', async () => {
    const signature = await sign(SECRET, pushBody.toString('utf8'));
    for (const index of [7, 38, signature.length - 1]) {
      expect(verify(changeChar(signature, index), pushBody)).toEqual({
        ok: false,
        reason: 'signature_mismatch',
      });
    }
  });

  it('rejects a signature made with another secret', async () => {
    expect(verify(await sign('not-my-secret', pushBody.toString('utf8')), pushBody)).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('accepts a delivery signed with the second of two configured secrets', async () => {
    const signature = await sign('previous-secret', pushBody.toString('utf8'));
    expect(verify(signature, pushBody, [SECRET, 'previous-secret'])).toEqual({ ok: true });
  });

  it('does not accept the legacy SHA-1 X-Hub-Signature header', () => {
    const sha1 = `sha1=${createHmac('sha1', SECRET).update(pushBody).digest('hex')}`;
    const result = githubProvider.verify(request({ 'x-hub-signature': sha1 }, pushBody), {
      secrets: [SECRET],
      nowSeconds: NOW,
    });
    expect(result).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verify(sha1, pushBody)).toEqual({ ok: false, reason: 'malformed_signature' });
  });

  it('returns missing_signature when the header is absent or blank', () => {
    expect(verify(undefined, pushBody)).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verify('', pushBody)).toEqual({ ok: false, reason: 'missing_signature' });
  });

  it('returns malformed_signature when the sha256= prefix is missing', async () => {
    const signature = await sign(SECRET, pushBody.toString('utf8'));
    expect(verify(signature.slice('sha256='.length), pushBody)).toEqual({
      ok: false,
      reason: 'malformed_signature',
    });
    expect(verify(signature.replace('sha256=', 'SHA256='), pushBody)).toEqual({
      ok: false,
      reason: 'malformed_signature',
    });
  });

  it('rejects a digest that is not hex or has the wrong length', async () => {
    const signature = await sign(SECRET, pushBody.toString('utf8'));
    expect(verify(`${signature.slice(0, -1)}g`, pushBody)).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
    expect(verify(signature.slice(0, -2), pushBody)).toEqual({ ok: false, reason: 'signature_mismatch' });
    expect(verify('sha256=', pushBody)).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('returns no_secret_configured when no usable secret is configured', () => {
    expect(verify('sha256=00', pushBody, [])).toEqual({ ok: false, reason: 'no_secret_configured' });
    expect(verify('sha256=00', pushBody, [''])).toEqual({ ok: false, reason: 'no_secret_configured' });
  });

  it('verifies a form-encoded delivery over the raw form body', async () => {
    const form = `payload=${encodeURIComponent(pushBody.toString('utf8'))}`;
    expect(verify(await sign(SECRET, form), form)).toEqual({ ok: true });
    expect(verify(await sign(SECRET, pushBody.toString('utf8')), form)).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('never throws on garbage headers or bodies', () => {
    for (const header of GARBAGE_HEADER_VALUES) {
      for (const body of GARBAGE_BODIES) {
        expect(verify(header, body).ok).toBe(false);
      }
    }
  });
});

describe('githubProvider.extract', () => {
  it('reads a push delivery from the headers and the repository in the payload', () => {
    expect(githubProvider.extract(request(deliveryHeaders(), pushBody))).toEqual({
      ok: true,
      event: {
        eventId: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
        eventType: 'push',
        account: '186853002',
        objectId: '186853002',
        objectKind: 'repository',
      },
    });
  });

  it('reads every push example in @octokit/webhooks-examples', () => {
    for (const example of examplesOf('push')) {
      const repository = example.repository as { id: number };
      // Examples of deliveries to a GitHub App carry `installation`; the others, a repository hook's.
      const headers = deliveryHeaders(
        'installation' in example
          ? {
              'x-github-hook-installation-target-type': 'integration',
              'x-github-hook-installation-target-id': '1',
            }
          : { 'x-github-hook-installation-target-id': String(repository.id) },
      );
      const result = githubProvider.extract(request(headers, JSON.stringify(example)));
      expect(result).toMatchObject({ ok: true, event: { objectId: String(repository.id) } });
    }
  });

  it("leaves the object out for an App's event without a repository, scoped by the signed installation id", () => {
    const example = examplesOf('installation')[0] as { installation: { id: number } };
    // An App's target id is the App id, which the body does not carry: the installation id is signed.
    const headers = deliveryHeaders({
      'x-github-event': 'installation',
      'x-github-hook-installation-target-type': 'integration',
      'x-github-hook-installation-target-id': '79929171',
    });
    const result = githubProvider.extract(request(headers, JSON.stringify(example)));
    expect(result).toEqual({
      ok: true,
      event: {
        eventId: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
        eventType: 'installation',
        account: String(example.installation.id),
      },
    });
  });

  it('takes the scope from the signed body when the hook target headers are absent', () => {
    const headers = deliveryHeaders({
      'x-github-hook-installation-target-id': undefined,
      'x-github-hook-installation-target-type': undefined,
    });
    const body = JSON.parse(pushBody.toString('utf8')) as { repository: { id: number } };
    expect(githubProvider.extract(request(headers, pushBody))).toMatchObject({
      ok: true,
      event: { account: String(body.repository.id) },
    });
  });

  it('fixes the account by the body, whatever hook-target headers a replay puts on it', () => {
    // One signed body carrying all three ids, as an App's delivery about an organization's repository.
    const body = JSON.stringify({
      ref: 'refs/heads/main',
      installation: { id: 555 },
      repository: { id: 17273051 },
      organization: { id: 9919 },
    });
    const withTarget = (type: string | undefined, id: string | undefined) =>
      githubProvider.extract(
        request(
          deliveryHeaders({
            'x-github-hook-installation-target-type': type,
            'x-github-hook-installation-target-id': id,
          }),
          body,
        ),
      );
    expect(withTarget('integration', '42')).toMatchObject({ ok: true, event: { account: '555' } });
    expect(withTarget(undefined, undefined)).toMatchObject({ ok: true, event: { account: '555' } });
    // Relabelled as a repository or organization hook: an App delivery is neither.
    expect(withTarget('repository', '17273051')).toEqual({ ok: false, reason: 'scope_mismatch' });
    expect(withTarget('organization', '9919')).toEqual({ ok: false, reason: 'scope_mismatch' });
    // An organization hook's copy of a push lands in the repository's account, as the repository hook's does.
    const push = JSON.stringify({
      ref: 'refs/heads/main',
      repository: { id: 17273051 },
      organization: { id: 9919 },
    });
    const orgHook = deliveryHeaders({
      'x-github-hook-installation-target-type': 'organization',
      'x-github-hook-installation-target-id': '9919',
    });
    expect(githubProvider.extract(request(orgHook, push))).toMatchObject({
      ok: true,
      event: { account: '17273051' },
    });
  });

  it('refuses a hook target header the signed body contradicts, with or without its type', () => {
    for (const overrides of [
      { 'x-github-hook-installation-target-id': '999' },
      { 'x-github-hook-installation-target-id': '999', 'x-github-hook-installation-target-type': undefined },
      { 'x-github-hook-installation-target-type': 'organization' },
      { 'x-github-hook-installation-target-id': undefined },
    ]) {
      expect(githubProvider.extract(request(deliveryHeaders(overrides), pushBody))).toMatchObject({
        ok: false,
        reason: 'scope_mismatch',
      });
    }
  });

  it('reads the JSON from the payload field of a form-encoded delivery', () => {
    const form = `payload=${encodeURIComponent(pushBody.toString('utf8'))}`;
    const headers = deliveryHeaders({ 'content-type': 'application/x-www-form-urlencoded' });
    expect(githubProvider.extract(request(headers, form))).toMatchObject({
      ok: true,
      event: { eventType: 'push', objectId: '186853002' },
    });
  });

  it('returns invalid_json for a form-encoded delivery without a JSON payload field', () => {
    const headers = deliveryHeaders({ 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' });
    for (const form of ['', 'other=1', 'payload=', 'payload=%5B%5D', 'payload=not-json']) {
      expect(githubProvider.extract(request(headers, form))).toMatchObject({
        ok: false,
        reason: 'invalid_json',
      });
    }
  });

  it("returns invalid_json for the published vector's body, which is not JSON", () => {
    expect(githubProvider.extract(request(deliveryHeaders(), 'Hello, World!'))).toMatchObject({
      ok: false,
      reason: 'invalid_json',
    });
  });

  it('returns missing_event_id without X-GitHub-Delivery', () => {
    const headers = deliveryHeaders({ 'x-github-delivery': undefined });
    expect(githubProvider.extract(request(headers, pushBody))).toEqual({
      ok: false,
      reason: 'missing_event_id',
    });
  });

  it('returns missing_event_type without X-GitHub-Event', () => {
    const headers = deliveryHeaders({ 'x-github-event': '' });
    expect(githubProvider.extract(request(headers, pushBody))).toEqual({
      ok: false,
      reason: 'missing_event_type',
    });
  });

  describe('garbage bodies', () => {
    /**
     * The garbage bodies that are JSON objects (after a UTF-8 BOM, which decoding drops); every other
     * one is not JSON, or JSON but not an object. None names a repository, installation or organization.
     */
    const OBJECT_BODIES = new Set([
      '{"id":1e400,"type":1e400,"event":1e400,"created":1e400,"updated_at":1e400}',
      '{"id":123456789012345678901234567890,"data":{"id":123456789012345678901234567890}}',
      '{"id":null,"type":null,"data":null,"account":null,"repository":null,"payment":null}',
      '{"__proto__":{"id":"x"},"constructor":{"id":"y"},"event":"CONSTRUCTOR_X"}',
      '{"id":"evt_1","type":"t","data":"not an object","related_object":[1],"created":"soon"}',
      `{"id":"${'a'.repeat(100_000)}"}`,
      '\uFEFF{}',
    ]);
    const isObjectBody = (body: Buffer) => OBJECT_BODIES.has(body.toString('utf8'));
    const notAnObject = { ok: false, reason: 'invalid_json', detail: 'body is not a JSON object' };
    const extract = (body: Buffer, headers: Record<string, string | undefined>) =>
      githubProvider.extract(request(headers, body));

    it('lists only bodies the garbage set holds (so this table cannot go stale unseen)', () => {
      const garbage = new Set(GARBAGE_BODIES.map((body) => body.toString('utf8')));
      expect([...OBJECT_BODIES].filter((body) => !garbage.has(body))).toEqual([]);
    });

    it('answers invalid_json for each that is not a JSON object', () => {
      const others = GARBAGE_BODIES.filter((body) => !isObjectBody(body));
      expect(others.length).toBe(GARBAGE_BODIES.length - OBJECT_BODIES.size);
      for (const body of others) expect(extract(body, deliveryHeaders())).toEqual(notAnObject);
    });

    it('answers scope_mismatch for a JSON object a repository hook delivered without that repository', () => {
      for (const body of GARBAGE_BODIES.filter(isObjectBody))
        expect(extract(body, deliveryHeaders())).toEqual({ ok: false, reason: 'scope_mismatch' });
    });

    it('reads a JSON object with no hook-target headers into the default account, with no object', () => {
      const headers = deliveryHeaders({
        'x-github-hook-installation-target-id': undefined,
        'x-github-hook-installation-target-type': undefined,
      });
      for (const body of GARBAGE_BODIES.filter(isObjectBody))
        expect(extract(body, headers)).toEqual({
          ok: true,
          event: {
            eventId: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
            eventType: 'push',
            account: 'default',
            objectId: undefined,
            objectKind: undefined,
          },
        });
    });

    it('answers invalid_json for every one posted as a form: none holds a payload field of JSON', () => {
      const form = deliveryHeaders({ 'content-type': 'application/x-www-form-urlencoded' });
      for (const body of GARBAGE_BODIES) expect(extract(body, form)).toEqual(notAnObject);
    });
  });
});

describe('githubProvider.defaults', () => {
  it('keeps claims 7 days and keys on the delivery id', () => {
    expect(githubProvider.id).toBe('github');
    expect(githubProvider.defaults).toEqual({
      claimTtlSeconds: 604_800,
      keyRules: { default: { kind: 'event-id' } },
    });
  });
});
