/**
 * The README's `npx webhooks ...` from the repository, as a new user has it: a clone after `npm ci`,
 * with no dist/ (nothing has run `npm run build`). npm links no bin of the root package itself, so
 * `npx webhooks` installs the repository into npx's cache as a link and runs the bin its
 * package.json names: that file must exist and work without a build.
 *
 * The clone is a copy of the working tree's files (tracked and not ignored, so uncommitted changes
 * count) with the repository's node_modules linked in, and npx gets a cache of its own.
 */
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveCommand } from '../../cli/commands/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

/** A user's shell: no npm lifecycle variables of an enclosing `npm test`, no node_modules/.bin on PATH. */
const userEnv = (clone: string, cache: string): NodeJS.ProcessEnv => ({
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
  npm_config_cache: cache,
  // The repository's own package and its installed tree are all npx needs: no registry.
  npm_config_offline: 'true',
  LOCAL_OUTPUTS_FILE: join(clone, 'cdk-outputs.local.json'),
});

describe('npx webhooks in a clone of the repository, without a build', () => {
  let work: string;
  let clone: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'iwr-clone-'));
    clone = join(work, 'repo');
    const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .split('\0')
      .filter((file) => file !== '' && file !== 'node_modules' && !file.startsWith('dist/'));
    for (const file of files) {
      mkdirSync(dirname(join(clone, file)), { recursive: true });
      cpSync(join(ROOT, file), join(clone, file), { dereference: false });
    }
    symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(clone, 'node_modules'));
    env = userEnv(clone, join(work, 'npm-cache'));
  });

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const npx = (...args: string[]) =>
    promisify(execFile)('npx', ['webhooks', ...args], { cwd: clone, env, timeout: 90_000 }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({
        code: error.code ?? -1,
        stdout: error.stdout ?? '',
        stderr: error.stderr ?? '',
      }),
    );

  it('runs `npx webhooks --version`, `--help` and a command from the sources', async () => {
    const versioned = await npx('--version');
    expect(versioned, versioned.stderr).toMatchObject({ code: 0 });
    expect(versioned.stdout.trim()).toBe(`webhooks ${version} (idempotent-webhook-receiver)`);

    const help = await npx('--help');
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^usage: webhooks <command>/);

    // A command runs, and fails as documented without a stack.
    const listed = await npx('dlq', 'list');
    expect(listed.code).toBe(1);
    expect(listed.stderr.trim()).toBe(
      `webhooks: no outputs file at ${join(clone, 'cdk-outputs.local.json')}: start the local stack with npx webhooks local (npm start in the repository), or pass --stack NAME`,
    );
  }, 240_000);
});

describe('the `npx webhooks` lines of README.md and docs/', () => {
  it('each name a command the CLI has', () => {
    const docs = [
      'README.md',
      ...execFileSync('git', ['ls-files', 'docs/*.md'], { cwd: ROOT, encoding: 'utf8' })
        .split('\n')
        .filter(Boolean),
    ];
    const lines: string[] = [];
    for (const doc of docs) {
      for (const match of readFileSync(join(ROOT, doc), 'utf8').matchAll(/npx webhooks((?: +[^\s`|#]+)*)/g)) {
        const argv = (match[1] ?? '').trim().split(/ +/).filter(Boolean);
        if (argv[0] === '...') continue; // "npx webhooks ... --stack NAME": any command
        lines.push(argv.join(' '));
        expect(resolveCommand(argv).kind, `${doc}: npx webhooks ${argv.join(' ')}`).not.toBe('unknown');
      }
    }
    expect(lines.length).toBeGreaterThan(20);
  });
});
