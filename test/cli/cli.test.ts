/**
 * The `webhooks` bin as a process: help on every command, and the expected failures as one line on
 * stderr with a non-zero exit, never a stack trace. No stack needed.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const missingOutputs = join(mkdtempSync(join(tmpdir(), 'webhooks-cli-')), 'absent.json');

async function webhooks(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)('node', ['cli/webhooks.mjs', ...args], {
      cwd: root,
      env: { ...process.env, LOCAL_OUTPUTS_FILE: missingOutputs },
      timeout: 20_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const noStackTrace = (text: string) => expect(text).not.toMatch(/\n\s+at /);

describe('the webhooks bin', () => {
  it('prints the package version with --version and exits 0', async () => {
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const result = await webhooks(flag);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout.trim()).toBe(`webhooks ${version} (idempotent-webhook-receiver)`);
    }
  });

  it.each([
    { args: ['--help'] },
    { args: ['inspect', '--help'] },
    { args: ['dlq', 'list', '--help'] },
    { args: ['dlq', 'redrive', '-h'] },
    { args: ['replay', '--help'] },
    { args: ['send', '--help'] },
  ])('prints help for $args and exits 0', async ({ args }) => {
    const result = await webhooks(...args);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^usage: webhooks/);
  });

  it('says how to get an outputs file when the local stack is not running', async () => {
    const result = await webhooks('dlq', 'list', '--json');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).toBe(
      `webhooks: no outputs file at ${missingOutputs}: start the local stack with npx webhooks local (npm start in the repository), or pass --stack NAME`,
    );
  });

  it('refuses an unknown provider with exit 2 and a pointer to the help', async () => {
    const result = await webhooks('inspect', 'paypal', 'evt_1');
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(
      'webhooks: unknown provider "paypal": one of stripe, github, shopify, asaas, standard, paddle, slack, square, twilio, discord (webhooks inspect --help)',
    );
    noStackTrace(result.stderr);
  });

  it('refuses unknown commands and options in one line', async () => {
    const unknown = await webhooks('purge');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^webhooks: unknown command "purge"/);
    const option = await webhooks('replay', 'stripe', 'evt_1', '--forse');
    expect(option.code).toBe(2);
    expect(option.stderr.trim()).toBe('webhooks: unknown option --forse (webhooks replay --help)');
    noStackTrace(unknown.stderr + option.stderr);
  });

  it('names a missing AWS region for --stack instead of throwing', async () => {
    const result = await promisify(execFile)('node', ['cli/webhooks.mjs', 'dlq', 'list', '--stack', 'Nope'], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        HOME: missingOutputs,
        AWS_CONFIG_FILE: missingOutputs,
        AWS_SHARED_CREDENTIALS_FILE: missingOutputs,
      },
      timeout: 20_000,
    }).catch((error: { code: number; stderr: string }) => error);
    expect('code' in result && result.code).toBe(1);
    expect(result.stderr).toMatch(/^webhooks: no AWS region for CloudFormation \(stack Nope\)/);
    noStackTrace(result.stderr);
  });
});
