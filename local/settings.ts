/**
 * The local runner's environment variables (README, "Run it locally"): `npm start`'s own, and the
 * knobs of the local stack. The outputs file's default lives here only: `npm start` writes it,
 * `npm run send` and the `webhooks` CLI read it.
 */
import { join, resolve } from 'node:path';
import {
  defineSettings,
  type Env,
  integer,
  optionalInteger,
  optionalText,
  parsed,
  readSetting,
  type SettingsOf,
} from '../lambdas/shared/settings.js';

/** The repository root: the example app `npm start` runs. */
const PACKAGE_ROOT = resolve(import.meta.dirname, '..');

export const LOCAL_DEFAULTS = {
  port: 3000,
  /** Resolved against the working directory: the repository root for `npm start` and `npm run`. */
  outputsFileName: 'cdk-outputs.local.json',
  /** Concurrent batches per event source mapping locally: the deployed 100 would be 100 node processes. */
  maxConcurrentBatches: 10,
  /** How often scheduled rules (the sweeper) run locally; deployed: every 5 minutes. */
  sweepIntervalSeconds: 10,
} as const;

const OUTPUTS_FILE = optionalText('LOCAL_OUTPUTS_FILE');

/** `npm start`'s own settings. */
const START = defineSettings({
  port: integer('PORT', {
    default: LOCAL_DEFAULTS.port,
    min: 0,
    max: 65_535,
    message: 'must be a port number',
  }),
  /** Where `cdk synth` writes, and the stack is run from. @default <app directory>/cdk.out */
  cdkOut: optionalText('LOCAL_CDK_OUT'),
  /** `1`: run the cloud assembly already in `cdkOut`. */
  skipSynth: parsed(
    'LOCAL_SKIP_SYNTH',
    (raw) => raw === '1',
    (skip: boolean) => (skip ? '1' : undefined),
  ),
  outputsFile: OUTPUTS_FILE,
});

/** The local stack's knobs: overrides of the template's values, and local-only limits. */
const KNOBS = defineSettings({
  /** The event queue's visibility timeout (the template's 181 s), e.g. 2 to watch retries. */
  visibilityTimeoutSeconds: optionalInteger('LOCAL_VISIBILITY_TIMEOUT_SECONDS'),
  /** The receiver's and the processor's leases. */
  claimLeaseSeconds: optionalInteger('CLAIM_LEASE_SECONDS'),
  /** The redrive policy's `maxReceiveCount`, and the processor's setting with it. */
  maxReceiveCount: optionalInteger('MAX_RECEIVE_COUNT'),
  maxConcurrentBatches: integer('LOCAL_MAX_CONCURRENT_BATCHES', {
    default: LOCAL_DEFAULTS.maxConcurrentBatches,
  }),
  sweepIntervalSeconds: integer('LOCAL_SWEEP_INTERVAL_SECONDS', {
    default: LOCAL_DEFAULTS.sweepIntervalSeconds,
  }),
  /**
   * Effect adapters that call their configured URL locally, comma-separated (`*`: every one with a
   * URL). @default none: every adapter calls the local effects sink
   */
  realEffects: optionalText('LOCAL_REAL_EFFECTS'),
});

export const LOCAL_ENV = { ...START.ENV, ...KNOBS.ENV } as const;

export interface LocalStartSettings
  extends Omit<SettingsOf<typeof START.settings>, 'cdkOut' | 'outputsFile'> {
  readonly cdkOut: string;
  readonly outputsFile: string;
}

export type LocalStackKnobs = SettingsOf<typeof KNOBS.settings>;

/**
 * The local runner's settings, defaults resolved; a ConfigError names each bad variable. `appDirectory`
 * is the CDK app's (the repository's for `npm start`, the working directory for `webhooks local`);
 * `cdkOut` is LOCAL_CDK_OUT resolved against the working directory, else `defaultCdkOut` (the
 * runner passes cdk.json's `output` there, as `cdk synth` would write).
 */
export function loadLocalStartSettings(
  env: Env = process.env,
  cwd = process.cwd(),
  appDirectory = PACKAGE_ROOT,
  defaultCdkOut = join(appDirectory, 'cdk.out'),
): LocalStartSettings {
  const settings = START.load(env);
  return {
    ...settings,
    cdkOut: settings.cdkOut === undefined ? defaultCdkOut : resolve(cwd, settings.cdkOut),
    outputsFile: localOutputsFile(env, cwd),
  };
}

/** The local stack's knobs; a ConfigError names each bad variable. */
export function loadLocalStackKnobs(env: Env = process.env): LocalStackKnobs {
  return KNOBS.load(env);
}

/**
 * The outputs file of the local stack: `LOCAL_OUTPUTS_FILE`, else cdk-outputs.local.json in the
 * working directory (the repository root under `npm start`, `npm run send` and `npx webhooks`
 * from there; the project's directory once installed as a package).
 */
export function localOutputsFile(env: Env = process.env, cwd = process.cwd()): string {
  return resolve(cwd, readSetting(OUTPUTS_FILE, env) ?? LOCAL_DEFAULTS.outputsFileName);
}
