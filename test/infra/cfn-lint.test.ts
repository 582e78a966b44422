/**
 * cfn-lint, AWS's CloudFormation linter, over the templates as CloudFormation reads them: the example
 * app's stack (what bin/app.ts deploys) and the package's construct with its defaults in an otherwise
 * empty stack (what a user's app gets). Any error or warning fails the test; a rule that does not
 * apply is suppressed on its resource with the reason beside it (docs/rules.md), never turned off.
 * One synth, one cfn-lint run over both templates. cfn-lint is a Python tool: see the message below.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { App, Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentsExampleStack } from '../../examples/payments/stack.js';
import { IdempotentWebhookReceiver } from '../../lib/idempotent-webhook-receiver.js';

const exec = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
/** The version CI's machines have; another 1.x may know other rules. */
const CFN_LINT_VERSION = '1.51.0';
const INSTALL = `cfn-lint is not installed: pip install cfn-lint==${CFN_LINT_VERSION} (Python 3), then rerun`;

interface Finding {
  readonly Filename: string;
  readonly Level: string;
  readonly Message: string;
  readonly Location: { readonly Path: ReadonlyArray<string | number> };
  readonly Rule: { readonly Id: string };
}

/** Runs cfn-lint; its JSON findings. It exits non-zero when it finds anything, so the code is not the verdict. */
async function cfnLint(templates: string[]): Promise<Finding[]> {
  const { stdout } = await exec('cfn-lint', ['--format', 'json', '--', ...templates], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: NodeJS.ErrnoException & { stdout?: string; stderr?: string }) => {
    if (error.code === 'ENOENT') throw new Error(INSTALL);
    // Findings: exit code 2 (errors), 4 (warnings), 8 (informational), or a sum; 1 is cfn-lint's own failure.
    if (typeof error.code === 'number' && error.code > 1 && error.stdout) return { stdout: error.stdout };
    throw new Error(`cfn-lint failed (${String(error.code)}): ${error.stderr ?? error.message}`);
  });
  return JSON.parse(stdout || '[]') as Finding[];
}

describe('cfn-lint', () => {
  let outdir: string;
  let templates: string[];

  beforeAll(() => {
    outdir = mkdtempSync(join(tmpdir(), 'cfn-lint-'));
    // Bundling skipped: the templates are the same, only the asset hashes differ.
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    const example = new PaymentsExampleStack(app, 'IdempotentWebhooks');
    const bare = new Stack(app, 'DefaultReceiver');
    new IdempotentWebhookReceiver(bare, 'Webhooks');
    const assembly = app.synth();
    templates = [example, bare].map((stack) => join(assembly.directory, stack.templateFile));
  }, 60_000);

  afterAll(() => {
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  });

  it('finds no error and no warning in the example stack and the default construct', async () => {
    const findings = await cfnLint(templates);
    const lines = findings.map(
      (f) =>
        `${f.Rule.Id} ${f.Level} ${f.Filename.replace(`${outdir}/`, '')} ${f.Location.Path.join('/')}: ${f.Message}`,
    );
    expect(lines).toEqual([]);
  }, 120_000);

  it('suppresses W3005 on the Lambda functions only, and nothing else anywhere', () => {
    const suppressions = templates.flatMap((file) => {
      const { Resources } = JSON.parse(readFileSync(file, 'utf8')) as {
        Resources: Record<string, { Type: string; Metadata?: Record<string, unknown> }>;
      };
      return Object.values(Resources)
        .filter((resource) => resource.Metadata?.['cfn-lint'] !== undefined)
        .map((resource) => ({ type: resource.Type, cfnLint: resource.Metadata?.['cfn-lint'] }));
    });
    // Three functions in each template: receiver, processor, sweeper.
    expect(suppressions).toHaveLength(6);
    for (const suppression of suppressions)
      expect(suppression).toEqual({
        type: 'AWS::Lambda::Function',
        cfnLint: { config: { ignore_checks: ['W3005'] } },
      });
  });
});
