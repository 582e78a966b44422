/**
 * The npm package as a user gets it: `npm pack` (which builds dist/ and assets/ in prepack), the
 * tarball installed into a fresh JavaScript CDK app with the peer dependencies, and synthesized there
 * offline, first with the defaults (no esbuild installed: the framework's bundles are prebuilt), then
 * with a processor module of the app's own. Needs the npm registry or a warm npm cache.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { machineNode } from '../helpers/machine-node.js';

const exec = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  devDependencies: Record<string, string>;
};

/**
 * The environment of a user's shell: without npm's lifecycle variables of an enclosing `npm test`
 * (they would point the inner npm at the repository), and without the repository's
 * node_modules/.bin on PATH (its esbuild would be found there).
 */
const env = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) =>
        !/^npm_(package|lifecycle)_/.test(name) && name !== 'npm_config_local_prefix' && name !== 'INIT_CWD',
    ),
  ),
  PATH: (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => !dir.includes(`node_modules${sep}.bin`))
    .join(delimiter),
};

const run = (command: string, args: string[], cwd: string, extraEnv: Record<string, string> = {}) =>
  exec(command, args, { cwd, env: { ...env, ...extraEnv }, maxBuffer: 64 * 1024 * 1024 });

const APP = `
import { App, Stack } from 'aws-cdk-lib';
import { AttributeType, BillingMode, Table } from 'aws-cdk-lib/aws-dynamodb';
import { IdempotentWebhookReceiver } from '${manifest.name}';

const app = new App({ outdir: process.env.OUTDIR });
const stack = new Stack(app, 'UserApp');
const entry = process.env.PROCESSOR_ENTRY;
const props = entry ? { processorEntry: entry } : {};
if (process.env.WITH_TABLE) {
  const invoices = new Table(stack, 'Invoices', {
    partitionKey: { name: 'pk', type: AttributeType.STRING },
    billingMode: BillingMode.PAY_PER_REQUEST,
  });
  props.tables = { invoices };
}
if (process.env.HMAC_PROVIDER) props.hmacProviders = [JSON.parse(process.env.HMAC_PROVIDER)];
new IdempotentWebhookReceiver(stack, 'Webhooks', props);
app.synth();
`;

/** The same app as CommonJS, what `tsc` emits for a CDK app with `"module": "commonjs"`. */
const CJS_APP = `
const { App, Stack } = require('aws-cdk-lib');
const { IdempotentWebhookReceiver } = require('${manifest.name}');

const app = new App({ outdir: process.env.OUTDIR });
new IdempotentWebhookReceiver(new Stack(app, 'UserApp'), 'Webhooks');
app.synth();
console.log(\`synthesized on \${process.version}\`);
`;

/** An app's processor module, as the README shows it: one applier of its own. */
const HANDLER = `
import { createProcessor } from '${manifest.name}/processor';

const invoicePaid = {
  async plan(event) {
    console.log('user-app applier', event.eventType);
    return { outcome: 'noop' };
  },
};
export const handler = createProcessor({ appliers: { stripe: { 'invoice.paid': invoicePaid } } });
`;

/** A string of the app's applier that survives minification: the mark of its bundle. */
const USER_APPLIER_MARK = 'user-app applier';

interface SynthesizedFunction {
  readonly logicalId: string;
  readonly handler: string;
  /** The function's bundle in the cloud assembly. */
  readonly bundle: string;
}

function functionsOf(outdir: string): SynthesizedFunction[] {
  const template = JSON.parse(readFileSync(join(outdir, 'UserApp.template.json'), 'utf8')) as {
    Resources: Record<string, { Type: string; Properties: { Handler: string; Code: { S3Key: string } } }>;
  };
  return Object.entries(template.Resources)
    .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function')
    .map(([logicalId, { Properties }]) => ({
      logicalId,
      handler: Properties.Handler,
      bundle: join(outdir, `asset.${Properties.Code.S3Key.replace(/\.zip$/, '')}`, 'index.mjs'),
    }));
}

const byRole = (functions: SynthesizedFunction[], role: string): SynthesizedFunction => {
  const found = functions.find((f) => f.logicalId.startsWith(`Webhooks${role}`));
  if (!found) throw new Error(`no ${role} function in ${functions.map((f) => f.logicalId).join(', ')}`);
  return found;
};

describe('the npm package in a plain CDK app', () => {
  let work: string;
  let app: string;
  let tarball: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'iwr-pack-'));
    app = join(work, 'app');
    await run('npm', ['pack', '--pack-destination', work, '--silent'], ROOT);
    const packed = readdirSync(work).find((file) => file.endsWith('.tgz'));
    if (!packed) throw new Error(`npm pack wrote no tarball into ${work}`);
    tarball = join(work, packed);
    await run('mkdir', [app], work);
    await run('npm', ['init', '-y'], app);
    await run(
      'npm',
      [
        'install',
        tarball,
        `aws-cdk-lib@${manifest.devDependencies['aws-cdk-lib']}`,
        `constructs@${manifest.devDependencies.constructs}`,
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
      ],
      app,
    );
    writeFileSync(join(app, 'app.mjs'), APP);
    writeFileSync(join(app, 'handler.mjs'), HANDLER);
  }, 180_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('packs compiled JavaScript, declarations and the prebuilt bundles, no sources or tests', async () => {
    const { stdout } = await run('tar', ['tzf', tarball], work);
    const files = stdout.split('\n').filter(Boolean);
    expect(files).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/dist/lib/index.js',
        'package/dist/lib/index.d.ts',
        'package/dist/lambdas/processor/sdk/index.js',
        'package/dist/cli/main.js',
        'package/cli/webhooks.mjs',
        'package/assets/receiver/index.mjs',
        'package/assets/sweeper/index.mjs',
        'package/assets/processor/index.mjs',
        'package/LICENSE',
      ]),
    );
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
    // The bin's launcher is the one file shipped from cli/: it runs dist/cli/main.js.
    expect(
      files.filter(
        (file) =>
          /^package\/(test|bench|local|bin|cli|lib|lambdas)\//.test(file) &&
          file !== 'package/cli/webhooks.mjs',
      ),
    ).toEqual([]);
    expect(files).not.toContain('package/package-lock.json');
  });

  it('synthesizes the receiver, processor and sweeper from the shipped bundles, without esbuild', async () => {
    expect(existsSync(join(app, 'node_modules', 'esbuild'))).toBe(false);
    const outdir = join(work, 'out-default');
    await run(process.execPath, ['app.mjs'], app, { OUTDIR: outdir });
    const functions = functionsOf(outdir);
    for (const role of ['IngestReceiver', 'ProcessingProcessor', 'SweepingSweeper']) {
      const fn = byRole(functions, role);
      expect(fn.handler).toBe('index.handler');
      expect(existsSync(fn.bundle)).toBe(true);
      expect(existsSync(`${fn.bundle}.map`)).toBe(true);
    }
    // The default processor has no appliers of the app's.
    expect(readFileSync(byRole(functions, 'ProcessingProcessor').bundle, 'utf8')).not.toContain(
      USER_APPLIER_MARK,
    );
  }, 60_000);

  it('refuses a processorEntry while esbuild is missing, saying how to install it', async () => {
    const outcome = await run(process.execPath, ['app.mjs'], app, {
      OUTDIR: join(work, 'out-no-esbuild'),
      PROCESSOR_ENTRY: join(app, 'handler.mjs'),
    }).then(
      () => ({ failed: false, stderr: '' }),
      (error: { stderr: string }) => ({ failed: true, stderr: error.stderr }),
    );
    expect(outcome.failed).toBe(true);
    expect(outcome.stderr).toMatch(
      /FunctionCodeError: processorEntry .*handler\.mjs is bundled with esbuild/,
    );
    expect(outcome.stderr).toContain('npm install --save-dev esbuild');
  }, 60_000);

  it("bundles the app's own processor module (createProcessor from /processor) once esbuild is installed", async () => {
    await run(
      'npm',
      [
        'install',
        `esbuild@${manifest.devDependencies.esbuild}`,
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
      ],
      app,
    );
    const outdir = join(work, 'out-entry');
    await run(process.execPath, ['app.mjs'], app, {
      OUTDIR: outdir,
      PROCESSOR_ENTRY: join(app, 'handler.mjs'),
    });
    const functions = functionsOf(outdir);
    const processor = byRole(functions, 'ProcessingProcessor');
    expect(processor.handler).toBe('index.handler');
    expect(readFileSync(processor.bundle, 'utf8')).toContain(USER_APPLIER_MARK);
    expect(existsSync(byRole(functions, 'IngestReceiver').bundle)).toBe(true);
    expect(existsSync(byRole(functions, 'SweepingSweeper').bundle)).toBe(true);
    const { stdout } = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(processor.bundle)}); console.log(typeof m.handler);`,
      ],
      app,
    );
    expect(stdout.trim()).toBe('function');
  }, 90_000);

  it("gives the app's processor module a table of the app's own, and that table only", async () => {
    const outdir = join(work, 'out-table');
    await run(process.execPath, ['app.mjs'], app, {
      OUTDIR: outdir,
      PROCESSOR_ENTRY: join(app, 'handler.mjs'),
      WITH_TABLE: '1',
    });
    const template = JSON.parse(readFileSync(join(outdir, 'UserApp.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
    };
    const resources = Object.entries(template.Resources);
    const tables = resources.filter(([, r]) => r.Type === 'AWS::DynamoDB::Table').map(([id]) => id);
    const invoices = tables.find((id) => id.startsWith('Invoices'));
    expect(invoices).toBeDefined();
    expect(tables).toHaveLength(2); // the claims table and the app's
    const processor = byRole(functionsOf(outdir), 'ProcessingProcessor');
    const properties: Record<string, unknown> = template.Resources[processor.logicalId]?.Properties ?? {};
    const environment = (properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(JSON.stringify(environment.BUSINESS_TABLES)).toContain(`{\\"invoices\\":\\"`);
    expect(JSON.stringify(environment.BUSINESS_TABLES)).toContain(`"Ref":"${invoices}"`);
    const granted = resources
      .filter(([, r]) => r.Type === 'AWS::IAM::Policy')
      .flatMap(
        ([, r]) =>
          (r.Properties.PolicyDocument as { Statement: { Action: unknown; Resource: unknown }[] }).Statement,
      )
      .filter((st) => JSON.stringify(st.Action).includes('dynamodb:PutItem'))
      .map((st) => JSON.stringify(st.Resource));
    expect(granted.filter((resource) => resource.includes(`"${invoices}"`))).toHaveLength(1);
  }, 90_000);

  it('adds a provider by configuration (hmacProviders) from the installed package', async () => {
    const outdir = join(work, 'out-hmac');
    const config = readFileSync(join(ROOT, 'examples/providers/partner.json'), 'utf8');
    await run(process.execPath, ['app.mjs'], app, { OUTDIR: outdir, HMAC_PROVIDER: config });
    const template = JSON.parse(readFileSync(join(outdir, 'UserApp.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
    };
    const routes = Object.values(template.Resources)
      .filter((r) => r.Type === 'AWS::ApiGatewayV2::Route')
      .map((r) => r.Properties.RouteKey);
    expect(routes).toContain('POST /webhooks/partner');
    const receiver = byRole(functionsOf(outdir), 'IngestReceiver');
    const properties: Record<string, unknown> = template.Resources[receiver.logicalId]?.Properties ?? {};
    const environment = (properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(JSON.parse(environment.WEBHOOK_HMAC_PROVIDERS as string)).toMatchObject([
      { id: 'partner', signature: { header: 'x-signature' } },
    ]);
  }, 60_000);

  it("loads through require() in a CommonJS app (TypeScript compiled to CommonJS) on the machine's Node", async () => {
    // An ESM-only package: require() loads it without a flag from Node 20.19 / 22.12 (package.json engines).
    writeFileSync(join(app, 'app.cjs'), CJS_APP);
    const outdir = join(work, 'out-cjs');
    const node = machineNode();
    const version = (await run(node, ['-p', 'process.version'], app)).stdout.trim();
    const { stdout } = await run(node, ['app.cjs'], app, { OUTDIR: outdir });
    expect(stdout.trim()).toBe(`synthesized on ${version}`);
    expect(byRole(functionsOf(outdir), 'IngestReceiver').handler).toBe('index.handler');
  }, 60_000);

  it('runs the installed `webhooks` CLI, compiled (no tsx in the app), answering --version and a command', async () => {
    expect(existsSync(join(app, 'node_modules', 'tsx'))).toBe(false);
    const { stdout } = await run('npx', ['--no-install', 'webhooks', '--version'], app);
    expect(stdout.trim()).toBe(`webhooks ${manifest.version} (${manifest.name})`);
    const outputsFile = join(work, 'absent-outputs.json');
    const listed = await run('npx', ['--no-install', 'webhooks', 'dlq', 'list'], app, {
      LOCAL_OUTPUTS_FILE: outputsFile,
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(listed.code).toBe(1);
    expect(listed.stderr.trim()).toBe(
      `webhooks: no outputs file at ${outputsFile}: start the local stack with npm start, or pass --stack NAME`,
    );
  }, 30_000);
});
