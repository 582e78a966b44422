/** The receiver and processor Lambdas: runtime, sizing, logs, the environment contract, and a processorEntry of your own. */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_IDS } from '../../lambdas/providers/types.js';
import { METRIC_NAMESPACE } from '../../lambdas/shared/metric-names.js';
import { SECRET_PLACEHOLDER } from '../../lambdas/shared/secrets-manager.js';
import { PROCESSOR_SERVICE, RECEIVER_SERVICE } from '../../lib/constructs/metrics.js';
import {
  buildReceiver,
  environmentOf,
  exampleTable,
  type Json,
  renderJoin,
  type SynthesizedStack,
  synthesize,
} from './support.js';

describe('webhook Lambdas', () => {
  let s: SynthesizedStack;
  let receiver: string;
  let processor: string;
  let receiverEnv: Json;
  let processorEnv: Json;
  const fn = (id: string) => s.template.toJSON().Resources[id].Properties as Json;

  beforeAll(() => {
    s = synthesize();
    receiver = s.logicalId(s.stack.webhooks.receiverFunction);
    processor = s.logicalId(s.stack.webhooks.processorFunction);
    receiverEnv = environmentOf(s.template, receiver);
    processorEnv = environmentOf(s.template, processor);
  });

  it('runs both functions on Node.js 24', () => {
    expect([fn(receiver).Runtime, fn(processor).Runtime]).toEqual(['nodejs24.x', 'nodejs24.x']);
  });

  it('runs both functions on arm64', () => {
    expect([fn(receiver).Architectures, fn(processor).Architectures]).toEqual([['arm64'], ['arm64']]);
  });

  it('gives the receiver 10 s and 512 MB', () => {
    expect([fn(receiver).Timeout, fn(receiver).MemorySize]).toEqual([10, 512]);
  });

  it('gives the processor 30 s and 512 MB', () => {
    expect([fn(processor).Timeout, fn(processor).MemorySize]).toEqual([30, 512]);
  });

  it.each([
    ['receiver', () => receiver],
    ['processor', () => processor],
  ])('sends the %s logs to its own log group kept for one month', (_name, id) => {
    const logGroup = (fn(id()).LoggingConfig as Json).LogGroup as Json;
    const logGroupId = (logGroup as { Ref: string }).Ref;
    expect(s.template.toJSON().Resources[logGroupId].Properties.RetentionInDays).toBe(30);
  });

  it('uses no deprecated logRetention custom resource', () => {
    s.template.resourceCountIs('Custom::LogRetention', 0);
  });

  it('attaches no managed policy to the function roles', () => {
    for (const role of Object.values(s.template.findResources('AWS::IAM::Role'))) {
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  it('gives the receiver the claims table name and the event queue URL', () => {
    expect(receiverEnv).toMatchObject({
      CLAIMS_TABLE_NAME: { Ref: s.logicalId(s.stack.webhooks.claimsTable) },
      EVENT_QUEUE_URL: { Ref: s.logicalId(s.stack.webhooks.eventQueue) },
    });
  });

  it('sets the receiver lease to 15 s, above its 10 s timeout', () => {
    expect(receiverEnv.RECEIVER_LEASE_SECONDS).toBe('15');
  });

  it('passes PROVIDER_SETTINGS as JSON (empty: the provider modules default)', () => {
    expect(JSON.parse(receiverEnv.PROVIDER_SETTINGS as string)).toEqual({});
  });

  it('names the receiver service and metric namespace for Powertools', () => {
    expect(receiverEnv).toMatchObject({
      POWERTOOLS_SERVICE_NAME: RECEIVER_SERVICE,
      POWERTOOLS_METRICS_NAMESPACE: METRIC_NAMESPACE,
    });
  });

  it('gives the receiver each provider secret by ARN in WEBHOOK_SECRET_ARNS', () => {
    const join = (receiverEnv.WEBHOOK_SECRET_ARNS as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
    // The JSON's quotes are in the literal parts; each ARN is a Ref to the secret.
    const rendered = join[1]
      .map((part) => (typeof part === 'string' ? part : (part as { Ref: string }).Ref))
      .join('');
    expect(JSON.parse(rendered)).toEqual(
      Object.fromEntries(PROVIDER_IDS.map((p) => [p, s.logicalId(s.stack.webhooks.secrets[p])])),
    );
  });

  it('puts no secret value in any environment variable (no WEBHOOK_SECRET_* or WEBHOOK_TOKEN_*)', () => {
    for (const env of [receiverEnv, processorEnv]) {
      const names = Object.keys(env).filter((name) => /^WEBHOOK_(SECRET|TOKEN)_/.test(name));
      expect(names.filter((name) => name !== 'WEBHOOK_SECRET_ARNS')).toEqual([]);
      expect(JSON.stringify(env)).not.toMatch(new RegExp(`whsec_|${SECRET_PLACEHOLDER}`));
    }
  });

  it('gives the processor the claims and business table names', () => {
    expect(processorEnv).toMatchObject({
      CLAIMS_TABLE_NAME: { Ref: s.logicalId(s.stack.webhooks.claimsTable) },
    });
    const ref = (name: string) => `<Ref:${s.logicalId(exampleTable(s, name))}>`;
    expect(JSON.parse(renderJoin(processorEnv.BUSINESS_TABLES))).toEqual({
      payments: ref('payments'),
      orders: ref('orders'),
      resources: ref('resources'),
    });
  });

  it('sets the processing lease to 120 s, above the processor timeout', () => {
    expect(Number(processorEnv.PROCESSING_LEASE_SECONDS)).toBe(120);
    expect(Number(processorEnv.PROCESSING_LEASE_SECONDS)).toBeGreaterThan(fn(processor).Timeout as number);
  });

  it("sets MAX_RECEIVE_COUNT to the event queue's redrive maxReceiveCount", () => {
    const queue = s.template.toJSON().Resources[s.logicalId(s.stack.webhooks.eventQueue)];
    expect(processorEnv.MAX_RECEIVE_COUNT).toBe(String(queue.Properties.RedrivePolicy.maxReceiveCount));
  });

  it("declares the example's effects without URLs by default (the effects are skipped until given one)", () => {
    expect(JSON.parse(processorEnv.EFFECTS as string)).toEqual({
      ledger: { honoursIdempotencyKey: true },
      mailer: { honoursIdempotencyKey: false },
    });
  });

  it('names the processor service and metric namespace for Powertools', () => {
    expect(processorEnv).toMatchObject({
      POWERTOOLS_SERVICE_NAME: PROCESSOR_SERVICE,
      POWERTOOLS_METRICS_NAMESPACE: METRIC_NAMESPACE,
    });
  });

  it('does not set AWS_NODEJS_CONNECTION_REUSE_ENABLED (SDK v3 reuses connections)', () => {
    expect(Object.keys({ ...receiverEnv, ...processorEnv })).not.toContain(
      'AWS_NODEJS_CONNECTION_REUSE_ENABLED',
    );
  });
});

describe('a processorEntry of your own', () => {
  let project: string;
  const HANDLER = `export const handler = async () => ({ batchItemFailures: [], marker: 'user-processor-marker' });\n`;

  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), 'iwr-entry-'));
    mkdirSync(join(project, 'app', 'src'), { recursive: true });
    writeFileSync(join(project, 'app', 'package.json'), JSON.stringify({ name: 'user-app', type: 'module' }));
    writeFileSync(
      join(project, 'app', 'package-lock.json'),
      JSON.stringify({ name: 'user-app', lockfileVersion: 3, requires: true, packages: {} }),
    );
    writeFileSync(join(project, 'app', 'src', 'processor.mjs'), HANDLER);
    // esbuild installed in that project, as `npm install --save-dev esbuild` would (the repository's copy).
    mkdirSync(join(project, 'app', 'node_modules', '.bin'), { recursive: true });
    symlinkSync(join(REPO_ROOT, 'node_modules', 'esbuild'), join(project, 'app', 'node_modules', 'esbuild'));
    symlinkSync('../esbuild/bin/esbuild', join(project, 'app', 'node_modules', '.bin', 'esbuild'));
    mkdirSync(join(project, 'lockless'));
    writeFileSync(join(project, 'lockless', 'processor.mjs'), HANDLER);
  });

  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it('is bundled from its own project (the lock file found above it) and run as index.handler', () => {
    const s = synthesize({
      bundle: true,
      bare: true,
      props: { processorEntry: join(project, 'app', 'src', 'processor.mjs') },
    });
    const id = s.logicalId(s.stack.webhooks.processorFunction);
    const props = fn(s, id);
    expect(props.Handler).toBe('index.handler');
    expect(props.Runtime).toBe('nodejs24.x');
    const key = (props.Code as { S3Key: string }).S3Key.replace(/\.zip$/, '');
    const bundle = readFileSync(join(s.app.synth().directory, `asset.${key}`, 'index.mjs'), 'utf8');
    expect(bundle).toContain('user-processor-marker');
    expect(bundle).toMatch(
      /^import\{createRequire\}from"module";|^import \{ createRequire \} from 'module';/,
    );
  }, 60_000);

  it('refuses an entry with no lock file in or above its directory, naming the way out', () => {
    expect(() => buildReceiver({ processorEntry: join(project, 'lockless', 'processor.mjs') })).toThrow(
      /no lock file \(.*package-lock\.json\) in or above .*lockless: .*processorBundling\.depsLockFilePath/,
    );
  });

  it('takes the lock file and project root from processorBundling', () => {
    const receiver = buildReceiver({
      processorEntry: join(project, 'lockless', 'processor.mjs'),
      processorBundling: {
        projectRoot: project,
        depsLockFilePath: join(project, 'app', 'package-lock.json'),
      },
    });
    expect(receiver.processorFunction).toBeDefined();
  });
});

const REPO_ROOT = resolve(import.meta.dirname, '../..');
const fn = (s: SynthesizedStack, id: string) => s.template.toJSON().Resources[id].Properties as Json;

describe('source maps', () => {
  const fields = ['receiverFunction', 'processorFunction', 'sweeperFunction'] as const;

  it('are off by default (a faster cold start), and on for every function with sourceMaps: true', () => {
    const off = synthesize({ bare: true });
    const on = synthesize({ bare: true, props: { sourceMaps: true } });
    for (const field of fields) {
      expect(
        environmentOf(off.template, off.logicalId(off.stack.webhooks[field])).NODE_OPTIONS,
      ).toBeUndefined();
      expect(environmentOf(on.template, on.logicalId(on.stack.webhooks[field])).NODE_OPTIONS).toBe(
        '--enable-source-maps',
      );
    }
  });
});
