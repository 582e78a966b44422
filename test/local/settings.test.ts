import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localOutputsFile as cliOutputsFile } from '../../cli/stack.js';
import { ConfigError } from '../../lambdas/shared/settings.js';
import {
  LOCAL_DEFAULTS,
  LOCAL_ENV,
  loadLocalStackKnobs,
  loadLocalStartSettings,
  localOutputsFile,
} from '../../local/settings.js';

const root = resolve(import.meta.dirname, '../..');

describe('local runner settings', () => {
  it('defaults to port 3000, cdk.out at the root and the outputs file in the working directory', () => {
    expect(loadLocalStartSettings({}, '/somewhere/project')).toEqual({
      port: 3000,
      cdkOut: join(root, 'cdk.out'),
      skipSynth: false,
      outputsFile: '/somewhere/project/cdk-outputs.local.json',
    });
    // From the repository root (npm start, npm run send, the CLI tests): the path it has always been.
    expect(localOutputsFile({}, root)).toBe(join(root, 'cdk-outputs.local.json'));
  });

  it('gives the CLI, send and npm start the same outputs file', () => {
    const env = { LOCAL_OUTPUTS_FILE: '/tmp/outputs.json' };
    expect(cliOutputsFile(env)).toBe('/tmp/outputs.json');
    expect(loadLocalStartSettings(env).outputsFile).toBe('/tmp/outputs.json');
    expect(cliOutputsFile({})).toBe(resolve(process.cwd(), LOCAL_DEFAULTS.outputsFileName));
  });

  it('reads PORT, LOCAL_CDK_OUT and LOCAL_SKIP_SYNTH', () => {
    expect(
      loadLocalStartSettings({ PORT: '0', LOCAL_CDK_OUT: '/tmp/out', LOCAL_SKIP_SYNTH: '1' }, root),
    ).toMatchObject({ port: 0, cdkOut: '/tmp/out', skipSynth: true });
  });

  it('refuses a port that is not one, naming PORT', () => {
    expect(() => loadLocalStartSettings({ PORT: '70000' })).toThrow(
      new ConfigError('environment variable PORT must be a port number, got "70000"'),
    );
  });

  it('leaves the template’s values alone unless a knob is set, and caps batches at 10', () => {
    expect(loadLocalStackKnobs({})).toEqual({
      visibilityTimeoutSeconds: undefined,
      claimLeaseSeconds: undefined,
      maxReceiveCount: undefined,
      maxConcurrentBatches: 10,
      sweepIntervalSeconds: 10,
    });
    expect(
      loadLocalStackKnobs({
        LOCAL_VISIBILITY_TIMEOUT_SECONDS: '2',
        CLAIM_LEASE_SECONDS: '20',
        MAX_RECEIVE_COUNT: '3',
        LOCAL_SWEEP_INTERVAL_SECONDS: '1',
      }),
    ).toMatchObject({
      visibilityTimeoutSeconds: 2,
      claimLeaseSeconds: 20,
      maxReceiveCount: 3,
      sweepIntervalSeconds: 1,
    });
  });

  it.each([
    LOCAL_ENV.visibilityTimeoutSeconds,
    LOCAL_ENV.claimLeaseSeconds,
    LOCAL_ENV.maxReceiveCount,
    LOCAL_ENV.maxConcurrentBatches,
    LOCAL_ENV.sweepIntervalSeconds,
  ])('refuses %s that is not a positive integer, naming it', (name) => {
    expect(() => loadLocalStackKnobs({ [name]: '0' })).toThrow(
      new ConfigError(`environment variable ${name} must be a positive integer, got "0"`),
    );
  });
});
