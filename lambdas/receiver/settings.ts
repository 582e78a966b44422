/**
 * The receiver's settings, read once per cold start from environment variables and validated up
 * front: a misconfigured receiver fails at start-up with a message naming the variable, rather than
 * answering deliveries wrongly.
 */
import { PROVIDERS } from '../providers/index.js';
import { type KeyRule, type KeyRules, PROVIDER_IDS, type ProviderId } from '../providers/types.js';
import { CLAIM_RETENTION_DEFAULT_SECONDS } from '../shared/claim-retention.js';
import { ConfigError, type Env, positiveInteger, required } from '../shared/config.js';
import {
  CLAIM_CHECK_THRESHOLD_DEFAULT_BYTES,
  LAMBDA_SYNC_REQUEST_LIMIT_BYTES,
  SQS_MAX_MESSAGE_BYTES,
} from '../shared/payload-limits.js';

export { ConfigError };

export interface ProviderSettings {
  readonly claimTtlSeconds: number;
  readonly toleranceSeconds?: number;
  readonly keyRules: KeyRules;
}

export interface ReceiverSettings {
  readonly claimsTableName: string;
  readonly eventQueueUrl: string;
  /** How long a receiver holds a fresh claim while it enqueues; must exceed the receiver's timeout. */
  readonly leaseSeconds: number;
  /** How long a duplicate waits for an in-flight first delivery to resolve before answering 503. */
  readonly duplicateWaitMs: number;
  readonly duplicatePollMs: number;
  /**
   * Largest raw body accepted. The default is Lambda's invocation limit: every body API Gateway can
   * hand the function is accepted (docs/rules.md, "Payload size").
   */
  readonly maxBodyBytes: number;
  /** Queue messages larger than this go as a claim check: the body to S3, a pointer on the queue. */
  readonly claimCheckThresholdBytes: number;
  /** Where claim-checked bodies go (the archive bucket); without it a message over the threshold is refused. */
  readonly archiveBucket: string | undefined;
  /** Local S3 servers (s3rver) need path-style URLs. */
  readonly archiveForcePathStyle: boolean;
  /**
   * The least a claim lives, whatever its provider's TTL: the DLQ's retention plus a redrive margin
   * (lambdas/shared/claim-retention.ts), so a message can never outlive its claim.
   */
  readonly claimRetentionSeconds: number;
  readonly providers: Readonly<Record<ProviderId, ProviderSettings>>;
}

export const RECEIVER_DEFAULTS = {
  leaseSeconds: 15,
  duplicateWaitMs: 2_000,
  duplicatePollMs: 50,
  /** No body that can reach the function is refused for its size. */
  maxBodyBytes: LAMBDA_SYNC_REQUEST_LIMIT_BYTES,
  claimCheckThresholdBytes: CLAIM_CHECK_THRESHOLD_DEFAULT_BYTES,
  claimRetentionSeconds: CLAIM_RETENTION_DEFAULT_SECONDS,
} as const;

const KEY_RULE_KINDS: ReadonlySet<string> = new Set<KeyRule['kind']>([
  'event-id',
  'composite',
  'business-object',
]);

function parseKeyRule(value: unknown, where: string): KeyRule {
  const kind = typeof value === 'string' ? value : (value as { kind?: unknown } | null)?.kind;
  if (typeof kind !== 'string' || !KEY_RULE_KINDS.has(kind)) {
    throw new ConfigError(`${where}: key rule must be one of event-id, composite, business-object`);
  }
  return { kind } as KeyRule;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * PROVIDER_SETTINGS overrides the provider modules' defaults, e.g.
 * `{"stripe":{"claimTtlSeconds":864000,"keyRules":{"byEventType":{"charge.*":"composite"}}}}`.
 * `byEventType` entries are merged over the defaults'; `default` replaces the default rule.
 */
export function parseProviderSettings(json: string | undefined): Record<ProviderId, ProviderSettings> {
  let overrides: unknown = {};
  if (json?.trim()) {
    try {
      overrides = JSON.parse(json);
    } catch {
      throw new ConfigError('environment variable PROVIDER_SETTINGS is not valid JSON');
    }
  }
  if (!isRecord(overrides))
    throw new ConfigError('PROVIDER_SETTINGS must be a JSON object keyed by provider');
  for (const name of Object.keys(overrides)) {
    if (!(PROVIDER_IDS as readonly string[]).includes(name)) {
      throw new ConfigError(`PROVIDER_SETTINGS names unknown provider ${JSON.stringify(name)}`);
    }
  }
  const result = {} as Record<ProviderId, ProviderSettings>;
  for (const id of PROVIDER_IDS) {
    const defaults = PROVIDERS[id].defaults;
    const override = overrides[id] ?? {};
    const where = `PROVIDER_SETTINGS.${id}`;
    if (!isRecord(override)) throw new ConfigError(`${where} must be an object`);
    const ttl = override.claimTtlSeconds ?? defaults.claimTtlSeconds;
    if (!Number.isSafeInteger(ttl) || (ttl as number) <= 0) {
      throw new ConfigError(`${where}.claimTtlSeconds must be a positive integer`);
    }
    const tolerance = override.toleranceSeconds ?? defaults.toleranceSeconds;
    if (tolerance !== undefined && (!Number.isSafeInteger(tolerance) || (tolerance as number) <= 0)) {
      throw new ConfigError(`${where}.toleranceSeconds must be a positive integer`);
    }
    const rules = override.keyRules ?? {};
    if (!isRecord(rules)) throw new ConfigError(`${where}.keyRules must be an object`);
    const byEventType: Record<string, KeyRule> = { ...defaults.keyRules.byEventType };
    if (rules.byEventType !== undefined) {
      if (!isRecord(rules.byEventType))
        throw new ConfigError(`${where}.keyRules.byEventType must be an object`);
      for (const [type, rule] of Object.entries(rules.byEventType)) {
        byEventType[type] = parseKeyRule(rule, `${where}.keyRules.byEventType[${JSON.stringify(type)}]`);
      }
    }
    result[id] = {
      claimTtlSeconds: ttl as number,
      ...(tolerance === undefined ? {} : { toleranceSeconds: tolerance as number }),
      keyRules: {
        default:
          rules.default === undefined
            ? defaults.keyRules.default
            : parseKeyRule(rules.default, `${where}.keyRules.default`),
        byEventType,
      },
    };
  }
  return result;
}

export function loadReceiverSettings(env: Env = process.env): ReceiverSettings {
  return {
    claimsTableName: required(env, 'CLAIMS_TABLE_NAME'),
    eventQueueUrl: required(env, 'EVENT_QUEUE_URL'),
    leaseSeconds: positiveInteger(env, 'RECEIVER_LEASE_SECONDS', RECEIVER_DEFAULTS.leaseSeconds),
    duplicateWaitMs: positiveInteger(env, 'DUPLICATE_WAIT_MS', RECEIVER_DEFAULTS.duplicateWaitMs),
    duplicatePollMs: positiveInteger(env, 'DUPLICATE_POLL_MS', RECEIVER_DEFAULTS.duplicatePollMs),
    maxBodyBytes: positiveInteger(env, 'MAX_BODY_BYTES', RECEIVER_DEFAULTS.maxBodyBytes),
    claimRetentionSeconds: positiveInteger(
      env,
      'CLAIM_RETENTION_SECONDS',
      RECEIVER_DEFAULTS.claimRetentionSeconds,
    ),
    claimCheckThresholdBytes: claimCheckThreshold(env),
    archiveBucket: env.ARCHIVE_BUCKET_NAME?.trim() || undefined,
    archiveForcePathStyle: env.ARCHIVE_FORCE_PATH_STYLE === 'true',
    providers: parseProviderSettings(env.PROVIDER_SETTINGS),
  };
}

/** `CLAIM_CHECK_THRESHOLD_BYTES`: 1 KiB up to SQS's message limit. */
function claimCheckThreshold(env: Env): number {
  const value = positiveInteger(
    env,
    'CLAIM_CHECK_THRESHOLD_BYTES',
    RECEIVER_DEFAULTS.claimCheckThresholdBytes,
  );
  if (value < 1_024 || value > SQS_MAX_MESSAGE_BYTES)
    throw new ConfigError(
      `environment variable CLAIM_CHECK_THRESHOLD_BYTES must be between 1024 and ${SQS_MAX_MESSAGE_BYTES} (SQS's message limit)`,
    );
  return value;
}
