/**
 * The receiver's settings, read once per cold start from environment variables and validated up
 * front: a misconfigured receiver fails at start-up with a message naming the variable, rather than
 * answering deliveries wrongly. The one list of its variables (lambdas/shared/settings.ts): the
 * handler loads them, the ingest construct writes them with `toEnvironment`, the stack checks its
 * props against their rules and the local runner overrides them by `ENV` name.
 */
import { HMAC_PROVIDERS } from '../providers/configured.js';
import { PROVIDER_LIST, type ProviderTable } from '../providers/index.js';
import type { KeyRule, KeyRules, Provider, ProviderId } from '../providers/types.js';
import { CLAIM_RETENTION_DEFAULT_SECONDS } from '../shared/claim-retention.js';
import {
  CLAIM_CHECK_THRESHOLD_DEFAULT_BYTES,
  LAMBDA_SYNC_REQUEST_LIMIT_BYTES,
  SQS_MAX_MESSAGE_BYTES,
} from '../shared/payload-limits.js';
import { checkPublicBaseUrl } from '../shared/public-url.js';
import {
  ARCHIVE_BUCKET,
  ARCHIVE_FORCE_PATH_STYLE,
  CLAIMS_TABLE,
  ConfigError,
  claimRetention,
  defineSettings,
  type Env,
  EVENT_QUEUE_URL,
  FAULT_POINTS,
  FAULT_POINTS_STATE_DIR,
  integer,
  optionalText,
  parsed,
  type SettingsOf,
  toggle,
  WEBHOOK_SECRET_ARNS,
} from '../shared/settings.js';

export { ConfigError };

export interface ProviderSettings {
  readonly claimTtlSeconds: number;
  /** Undefined for a provider that signs no timestamp. */
  readonly toleranceSeconds?: number | undefined;
  readonly keyRules: KeyRules;
}

/** A key rule as `PROVIDER_SETTINGS` takes it: the rule, or its kind alone. */
export type KeyRuleInput = KeyRule | KeyRule['kind'];

/** What `PROVIDER_SETTINGS` holds for one provider: overrides of its module's defaults. */
export interface ProviderSettingsOverride {
  readonly claimTtlSeconds?: number;
  readonly toleranceSeconds?: number;
  readonly keyRules?: {
    readonly default?: KeyRuleInput;
    readonly byEventType?: Readonly<Record<string, KeyRuleInput>>;
  };
}

export type ProviderSettingsOverrides = Partial<Readonly<Record<ProviderId, ProviderSettingsOverride>>>;

/** Plain seconds, milliseconds and bytes: the construct's `Duration` defaults derive from these. */
export const DEFAULTS = {
  /** Must exceed the receiver's timeout (10 s by default). */
  leaseSeconds: 15,
  duplicateWaitMs: 2_000,
  duplicatePollMs: 50,
  /** No body that can reach the function is refused for its size. */
  maxBodyBytes: LAMBDA_SYNC_REQUEST_LIMIT_BYTES,
  claimCheckThresholdBytes: CLAIM_CHECK_THRESHOLD_DEFAULT_BYTES,
  claimRetentionSeconds: CLAIM_RETENTION_DEFAULT_SECONDS,
  countDuplicates: true,
  markEnqueued: true,
} as const;

/** @deprecated the same object as {@link DEFAULTS}, under its former name. */
export const RECEIVER_DEFAULTS = DEFAULTS;

/** A claim check below 1 KiB saves nothing; SQS refuses a message over its limit. */
export const CLAIM_CHECK_THRESHOLD_RANGE = { min: 1_024, max: SQS_MAX_MESSAGE_BYTES } as const;

const RECEIVER = defineSettings({
  claimsTableName: CLAIMS_TABLE,
  eventQueueUrl: EVENT_QUEUE_URL,
  /** How long a receiver holds a fresh claim while it enqueues; must exceed the receiver's timeout. */
  leaseSeconds: integer('RECEIVER_LEASE_SECONDS', { default: DEFAULTS.leaseSeconds }),
  /** How long a duplicate waits for an in-flight first delivery to resolve before answering 503. */
  duplicateWaitMs: integer('DUPLICATE_WAIT_MS', { default: DEFAULTS.duplicateWaitMs }),
  duplicatePollMs: integer('DUPLICATE_POLL_MS', { default: DEFAULTS.duplicatePollMs }),
  /**
   * Whether a duplicate adds itself to its claim's `deliveries` (a second write, 1 WRU): what the
   * answer's `deliveries` and `webhooks inspect` report. Off, a duplicate costs its failed
   * conditional write alone and is counted by the `Duplicate` metric only.
   */
  countDuplicates: toggle('COUNT_DUPLICATES', DEFAULTS.countDuplicates),
  /**
   * Whether the receiver marks a claim ENQUEUED after its send (a third sequential request, 1 WRU).
   * Off, a new event is its claim write and its send; the claim stays RECEIVED (flagged `unmarked`)
   * until a processor takes it, and a duplicate that finds it so sends a copy of its own, which the
   * processor absorbs (docs/performance.md, "The ENQUEUED mark").
   */
  markEnqueued: toggle('MARK_ENQUEUED', DEFAULTS.markEnqueued),
  /**
   * Largest raw body accepted. The default is Lambda's invocation limit: every body API Gateway can
   * hand the function is accepted (docs/rules.md, "Payload size").
   */
  maxBodyBytes: integer('MAX_BODY_BYTES', { default: DEFAULTS.maxBodyBytes }),
  /**
   * The least a claim lives, whatever its provider's TTL: the DLQ's retention plus a redrive margin
   * (lambdas/shared/claim-retention.ts), so a message can never outlive its claim.
   */
  claimRetentionSeconds: claimRetention(DEFAULTS.claimRetentionSeconds),
  /** Queue messages larger than this go as a claim check: the body to S3, a pointer on the queue. */
  claimCheckThresholdBytes: integer('CLAIM_CHECK_THRESHOLD_BYTES', {
    default: DEFAULTS.claimCheckThresholdBytes,
    ...CLAIM_CHECK_THRESHOLD_RANGE,
    message: `must be between ${CLAIM_CHECK_THRESHOLD_RANGE.min} and ${CLAIM_CHECK_THRESHOLD_RANGE.max} (SQS's message limit)`,
  }),
  /** Where claim-checked bodies go (the archive bucket); without it a message over the threshold is refused. */
  archiveBucket: ARCHIVE_BUCKET,
  /** Local S3 servers (s3rver) need path-style URLs. */
  archiveForcePathStyle: ARCHIVE_FORCE_PATH_STYLE,
  /**
   * The base URL providers deliver to (`https://<api>.execute-api.<region>.amazonaws.com`, or the
   * custom domain in front of it): the URL that Square and Twilio sign is `<base>/webhooks/<id>`.
   * Never taken from the Host header. Unset, those providers are refused with 500.
   */
  publicBaseUrl: optionalText('PUBLIC_BASE_URL', checkPublicBaseUrl),
  /**
   * Providers by configuration (lambdas/providers/configured.ts). The registry reads the variable
   * when it loads; listed here so the construct writes it and a bad value names it at start-up.
   */
  hmacProviders: HMAC_PROVIDERS,
  /** Each provider's claim TTL, tolerance and key rules: its module's defaults with `PROVIDER_SETTINGS` over them. */
  providers: parsed(
    'PROVIDER_SETTINGS',
    (raw) => parseProviderSettings(raw),
    (overrides: ProviderSettingsOverrides) => JSON.stringify(overrides),
  ),
  /**
   * `{"stripe":"arn:aws:secretsmanager:..."}`: where each provider's signing secrets are; read by
   * lambdas/shared/secrets-manager.ts. Unset (tests, the local stack): `WEBHOOK_SECRET_<PROVIDER>`.
   */
  secretArnsJson: WEBHOOK_SECRET_ARNS,
  /** Recovery testing only (docs/rules.md): never set on a deployed stack. */
  faultPoints: FAULT_POINTS,
  faultPointsStateDirectory: FAULT_POINTS_STATE_DIR,
});

export type ReceiverSettings = SettingsOf<typeof RECEIVER.settings>;
/** The variables' names, by setting: `ENV.leaseSeconds` is `RECEIVER_LEASE_SECONDS`. */
export const ENV = RECEIVER.ENV;
/** The environment -> {@link ReceiverSettings}. */
export const schema = RECEIVER.schema;
/** The receiver's settings -> its environment variables (what the ingest construct writes). */
export const toEnvironment = RECEIVER.toEnvironment;
/** The rules of single settings, for the stack's synth-time checks (`ruleBroken`). */
export const SETTINGS = RECEIVER.settings;

const KEY_RULE_KINDS: ReadonlySet<unknown> = new Set<KeyRule['kind']>([
  'event-id',
  'composite',
  'business-object',
]);

function parseKeyRule(value: unknown, where: string): KeyRule {
  const kind = typeof value === 'string' ? value : (value as { kind?: unknown } | null)?.kind;
  if (!KEY_RULE_KINDS.has(kind)) {
    throw new ConfigError(`${where}: key rule must be one of event-id, composite, business-object`);
  }
  return { kind: kind as KeyRule['kind'] };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * PROVIDER_SETTINGS overrides the provider modules' defaults, e.g.
 * `{"stripe":{"claimTtlSeconds":864000,"keyRules":{"byEventType":{"charge.*":"composite"}}}}`.
 * `byEventType` entries are merged over the defaults'; `default` replaces the default rule.
 */
export function parseProviderSettings(
  json: string | undefined,
  providers: readonly Provider<string>[] = PROVIDER_LIST,
): ProviderTable<ProviderSettings> {
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
  const ids = providers.map((provider) => provider.id);
  for (const name of Object.keys(overrides)) {
    if (!ids.includes(name)) {
      throw new ConfigError(
        `PROVIDER_SETTINGS names unknown provider ${JSON.stringify(name)} (the providers are ${ids.join(', ')})`,
      );
    }
  }
  const result: Record<ProviderId, ProviderSettings> = {};
  for (const { id, defaults } of providers) {
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
      toleranceSeconds: tolerance as number | undefined,
      keyRules: {
        default:
          rules.default === undefined
            ? defaults.keyRules.default
            : parseKeyRule(rules.default, `${where}.keyRules.default`),
        byEventType,
      },
    };
  }
  return result as ProviderTable<ProviderSettings>;
}

/** Reads and checks the receiver's environment; a {@link ConfigError} names each bad variable. */
export function loadReceiverSettings(env: Env = process.env): ReceiverSettings {
  return RECEIVER.load(env);
}

/** The same as {@link loadReceiverSettings}. */
export const load = loadReceiverSettings;
