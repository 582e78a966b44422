/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex>`, HMAC-SHA256 of the raw body keyed with the secret
 * string. Nothing time-related is signed. The legacy SHA-1 `X-Hub-Signature` is not accepted.
 * https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
 */
import { randomUUID } from 'node:crypto';
import {
  bodyBytes,
  decodeHex,
  field,
  hmacSha256,
  idString,
  randomHex,
  readHeader,
  readRequestPayload,
  safeEqualAny,
  usableSecrets,
} from './crypto.js';
import { defineProvider } from './define.js';
import type {
  DevSample,
  DevSampleOptions,
  ExtractResult,
  VerifyOptions,
  VerifyResult,
  WebhookRequest,
} from './types.js';

const SIGNATURE_PREFIX = 'sha256=';
/** A delivery whose body names no installation, repository or organization. */
const DEFAULT_ACCOUNT = 'default';

function verify(request: WebhookRequest, options: VerifyOptions): VerifyResult {
  const secrets = usableSecrets(options.secrets);
  if (secrets.length === 0) return { ok: false, reason: 'no_secret_configured' };
  const header = readHeader(request.headers, 'x-hub-signature-256');
  if (header === undefined) return { ok: false, reason: 'missing_signature' };
  if (!header.startsWith(SIGNATURE_PREFIX)) return { ok: false, reason: 'malformed_signature' };

  const candidate = decodeHex(header.slice(SIGNATURE_PREFIX.length));
  if (candidate === undefined) return { ok: false, reason: 'signature_mismatch' };
  const expected = secrets.map((secret) => hmacSha256(secret, request.rawBody));
  // The unsigned hook-target headers are checked against the body in extract (scope_mismatch),
  // so the body is parsed once.
  return safeEqualAny(candidate, expected) ? { ok: true } : { ok: false, reason: 'signature_mismatch' };
}

type Scope = { readonly ok: true; readonly account: string } | { readonly ok: false };

/**
 * The account scope, from signed content only: the body's `installation.id` (present only in
 * deliveries to a GitHub App), else `repository.id`, else `organization.id`. Fixed by the body, so
 * no header can move a delivery to another account: an organization hook's and a repository hook's
 * copy of one push land in the same account (the repository's).
 *
 * The unsigned hook-target headers must agree with the body: a `repository` hook's target id is
 * `repository.id`, an `organization` hook's `organization.id`, and neither is an App delivery (no
 * `installation`); without a type, the id must be one of the body's ids. A GitHub App's target id is
 * the App id, which the body does not carry (the App's own secret binds it).
 * https://docs.github.com/en/webhooks/webhook-events-and-payloads#delivery-headers
 */
function scopeOf(request: WebhookRequest, payload: Readonly<Record<string, unknown>>): Scope {
  const targetId = readHeader(request.headers, 'x-github-hook-installation-target-id');
  const targetType = readHeader(request.headers, 'x-github-hook-installation-target-type')?.toLowerCase();
  const installation = idString(field(payload.installation, 'id'));
  const repository = idString(field(payload.repository, 'id'));
  const organization = idString(field(payload.organization, 'id'));
  const account = installation ?? repository ?? organization ?? DEFAULT_ACCOUNT;
  if (targetType === 'repository' || targetType === 'organization') {
    const signed = targetType === 'repository' ? repository : organization;
    if (installation !== undefined || signed === undefined || signed !== targetId) return { ok: false };
    return { ok: true, account };
  }
  if (targetType === undefined && targetId !== undefined) {
    if (![repository, organization, installation].includes(targetId)) return { ok: false };
  }
  return { ok: true, account };
}

/** The hook whose secret verifies the delivery (each hook, and each App, has its own secret). */
function secretScope(request: WebhookRequest): string | undefined {
  return readHeader(request.headers, 'x-github-hook-installation-target-id');
}

/**
 * The JSON payload. A webhook configured with content type `application/x-www-form-urlencoded`
 * sends `payload=<url-encoded JSON>`; the signature still covers the form body as received.
 * https://docs.github.com/en/webhooks/using-webhooks/creating-webhooks
 */
function readPayload(request: WebhookRequest): Record<string, unknown> | undefined {
  return readRequestPayload(request, { formField: 'payload' });
}

function extract(request: WebhookRequest): ExtractResult {
  const payload = readPayload(request);
  if (payload === undefined) {
    return { ok: false, reason: 'invalid_json', detail: 'body is not a JSON object' };
  }
  // The delivery GUID stays the same when a delivery is redelivered.
  const eventId = readHeader(request.headers, 'x-github-delivery');
  if (eventId === undefined) return { ok: false, reason: 'missing_event_id' };
  const eventType = readHeader(request.headers, 'x-github-event');
  if (eventType === undefined) return { ok: false, reason: 'missing_event_type' };

  const objectId = idString(field(payload.repository, 'id'));
  const scope = scopeOf(request, payload);
  if (!scope.ok) return { ok: false, reason: 'scope_mismatch' };
  return {
    ok: true,
    event: {
      eventId,
      eventType,
      // From the signed body, checked against the unsigned header (scopeOf). Nothing time-related
      // is signed: a captured delivery replayed with a fresh delivery id passes verification, but
      // only in its own scope, where absolute writes and the stale-order guard make it harmless.
      account: scope.account,
      objectId,
      objectKind: objectId === undefined ? undefined : 'repository',
    },
  };
}

/** `X-Hub-Signature-256` for `body`, as GitHub computes it (@octokit/webhooks-methods' `sign`). */
function sign(body: string | Buffer, secret: string): Record<string, string> {
  return {
    'x-hub-signature-256': `${SIGNATURE_PREFIX}${hmacSha256(secret, bodyBytes(body)).toString('hex')}`,
  };
}

/** GitHub sends pretty-printed JSON with a trailing newline. */
const githubJson = (payload: unknown): string => `${JSON.stringify(payload, null, 2)}\n`;

function commit(index: number, message: string) {
  const sha = randomHex(20);
  const person = { name: 'Octo Cat', email: 'octocat@github.com', username: 'octocat' };
  return {
    id: sha,
    tree_id: randomHex(20),
    distinct: true,
    message,
    timestamp: '2026-12-02T10:00:00Z',
    url: `https://github.com/octo-org/octo-repo/commit/${sha}`,
    author: person,
    committer: person,
    added: [],
    removed: [],
    modified: [`src/module-${index}.ts`],
  };
}

/**
 * A push whose body is exactly `bytes` long: commits until it is nearly there, then the last
 * commit's message padded to the byte (a push with many commits is how GitHub bodies get large).
 */
export function largePushBody(payload: Record<string, unknown>, bytes: number): string {
  const commits: ReturnType<typeof commit>[] = [];
  const sized = () => Buffer.byteLength(githubJson({ ...payload, commits }));
  // Each commit adds about 700 bytes; grow in steps, then pad the last message to the exact size.
  while (sized() < bytes - 2_000) {
    const missing = bytes - 2_000 - sized();
    const step = Math.max(1, Math.floor(missing / 800));
    for (let i = 0; i < step; i++) commits.push(commit(commits.length, `Change ${commits.length}`));
  }
  commits.push(commit(commits.length, ''));
  const last = commits.length - 1;
  const padding = bytes - sized();
  if (padding < 0) throw new Error(`a push cannot be made as small as ${bytes} bytes`);
  commits[last] = { ...(commits[last] as ReturnType<typeof commit>), message: 'x'.repeat(padding) };
  const body = githubJson({ ...payload, commits });
  if (Buffer.byteLength(body) !== bytes) throw new Error('push body size mismatch');
  return body;
}

/** A repository hook's delivery (https://docs.github.com/en/webhooks/webhook-events-and-payloads). */
function sample(type: string, options: DevSampleOptions): DevSample {
  const payload =
    type === 'ping'
      ? {
          zen: 'Design for failure.',
          hook_id: 42,
          repository: { id: 17273051, full_name: 'octo-org/octo-repo' },
        }
      : {
          ref: 'refs/heads/main',
          before: randomHex(20),
          after: randomHex(20),
          repository: { id: 17273051, full_name: 'octo-org/octo-repo', pushed_at: options.nowSeconds },
          pusher: { name: 'octocat', email: 'octocat@github.com' },
        };
  const body =
    type === 'push' && options.bytes !== undefined
      ? largePushBody(payload, options.bytes)
      : githubJson(payload);
  const delivery = options.eventId ?? randomUUID();
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/local',
      'x-github-event': type,
      'x-github-delivery': delivery,
      'x-github-hook-id': '42',
      'x-github-hook-installation-target-id': '17273051',
      'x-github-hook-installation-target-type': 'repository',
    },
    summary: `${type} delivery ${delivery}`,
  };
}

export const githubProvider = defineProvider({
  id: 'github',
  name: 'GitHub',
  defaults: {
    // GitHub does not retry; failed deliveries from the past 3 days (7 on Enterprise Server) can be
    // redelivered by hand, which 7 days covers.
    // https://docs.github.com/en/webhooks/testing-and-troubleshooting-webhooks/redelivering-webhooks
    claimTtlSeconds: 7 * 24 * 3600,
    keyRules: { default: { kind: 'event-id' } },
  },
  defaultAccount: DEFAULT_ACCOUNT,
  secret: {
    hint: "the webhook's secret, as typed in the repository or organization webhook settings",
    devSecret: 'local-github-secret',
  },
  headers: { secret: ['x-hub-signature', 'x-hub-signature-256'], forward: ['x-github-'] },
  // GitHub never redelivers on its own: zero duplicates is its normal state.
  alarms: { duplicateRatioLow: false },
  verify,
  extract,
  readPayload,
  secretScope,
  dev: { sampleTypes: ['push', 'ping'], sizedTypes: ['push'], sample, sign },
  // GitHub never redelivers by itself; its API lists a hook's deliveries (each with `status` and
  // `status_code`) and sends one again as a new attempt with the same `X-GitHub-Delivery`.
  reconcile: {
    kind: 'list-and-redeliver',
    list: '`GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries` (and the org and App hook equivalents), cursor-paged',
    redeliver: '`POST /repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}/attempts`',
    retentionSeconds: 3 * 86_400,
    source:
      'https://docs.github.com/en/rest/repos/webhooks#list-deliveries-for-a-repository-webhook; https://docs.github.com/en/webhooks/testing-and-troubleshooting-webhooks/redelivering-webhooks',
  },
  docs: {
    signature: {
      header: '`X-Hub-Signature-256: sha256=…` (legacy SHA-1 header not accepted)',
      signedContent: 'raw body',
      digest: 'HMAC-SHA256 hex; the secret string',
      tolerance: 'none signed',
    },
    identity: {
      eventId: 'header `X-GitHub-Delivery`',
      eventType: 'header `X-GitHub-Event`',
      account:
        'from the signed body: `installation.id`, else `repository.id`, else `organization.id`, else `default`; the hook-target headers must agree with it (see Tenancy)',
      object: '`repository.id` (`repository`)',
    },
    retryWindow: {
      text: 'no automatic retry; manual redelivery of the last 3 days',
      source:
        'https://docs.github.com/en/webhooks/testing-and-troubleshooting-webhooks/redelivering-webhooks',
    },
  },
});
