import { describe, expect, it } from 'vitest';
import { parseCommandArgs } from '../../cli/args.js';
import { summarizeBody } from '../../cli/commands/dlq.js';
import { COMMANDS, overview, resolveCommand } from '../../cli/commands/index.js';
import { verdict } from '../../cli/commands/inspect.js';
import { replayQuery, summarize } from '../../cli/commands/replay.js';
import { splitGlobalOptions } from '../../cli/commands/send.js';
import { UsageError } from '../../cli/errors.js';

describe('resolveCommand', () => {
  it('finds one-word and two-word commands and passes the rest on', () => {
    const inspect = resolveCommand(['inspect', 'stripe', 'evt_1']);
    expect(inspect).toMatchObject({ kind: 'command', rest: ['stripe', 'evt_1'] });
    expect(inspect.kind === 'command' && inspect.command.name).toBe('inspect');
    const list = resolveCommand(['dlq', 'list', '--max', '3']);
    expect(list.kind === 'command' && list.command.name).toBe('dlq list');
    expect(list.kind === 'command' && list.rest).toEqual(['--max', '3']);
  });

  it('asks for help with no command, and reports unknown ones', () => {
    expect(resolveCommand([])).toEqual({ kind: 'help' });
    expect(resolveCommand(['--help'])).toEqual({ kind: 'help' });
    expect(resolveCommand(['bogus'])).toEqual({ kind: 'unknown', name: 'bogus' });
    expect(resolveCommand(['dlq', 'purge'])).toEqual({ kind: 'unknown', name: 'purge', group: 'dlq' });
  });

  it('lists every command in the overview', () => {
    for (const command of COMMANDS) expect(overview()).toContain(command.synopsis.usage);
  });
});

const replayArgs = (argv: string[]) =>
  replayQuery(
    parseCommandArgs(
      argv,
      {
        key: { type: 'string' },
        account: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        force: { type: 'boolean' },
      },
      'replay',
    ),
  );

describe('replayQuery', () => {
  it('reads an event, a key or a time range', () => {
    expect(replayArgs(['stripe', 'evt_1'])).toEqual({ kind: 'event', provider: 'stripe', eventId: 'evt_1' });
    expect(replayArgs(['--key', 'stripe:platform:evt_1'])).toEqual({
      kind: 'key',
      key: 'stripe:platform:evt_1',
    });
    const range = replayArgs(['stripe', '--from', '2026-12-01', '--to', '2026-12-02T12:00Z']);
    expect(range).toMatchObject({ kind: 'range', providers: ['stripe'] });
  });

  it('replays a time range for every provider with "all"', () => {
    expect(replayArgs(['all', '--from', '2026-12-01', '--to', '2026-12-02'])).toMatchObject({
      providers: [
        'stripe',
        'github',
        'shopify',
        'asaas',
        'standard',
        'paddle',
        'slack',
        'square',
        'twilio',
        'discord',
      ],
    });
  });

  it.each([
    [['stripe', '--from', '2026-12-01'], /both --from and --to/],
    [['--from', '2026-12-01', '--to', '2026-12-02'], /name a provider for the time range, or all/],
    [['stripe', '--from', '2026-12-02', '--to', '2026-12-01'], /--from must be before --to/],
    [['stripe', '--from', '2020-01-01', '--to', '2026-01-01'], /at most 400 days/],
    [['stripe', '--key', 'k'], /--key names the claim by itself/],
    [['stripe'], /name the event id/],
    [['paypal', 'evt_1'], /unknown provider/],
    [['stripe', 'evt_1', 'extra'], /unexpected argument "extra"/],
  ])('refuses %j', (argv, message) => {
    expect(() => replayArgs(argv as string[])).toThrow(message as RegExp);
  });
});

describe('summarize', () => {
  it('counts each action', () => {
    expect(summarize([{ action: 'sent' }, { action: 'skipped' }, { action: 'skipped' }])).toEqual({
      sent: 1,
      forced: 0,
      skipped: 2,
      failed: 0,
    });
  });
});

describe('verdict', () => {
  it('answers "claimed once or twice?" from the deliveries of one claim', () => {
    expect(verdict([{ key: 'k', deliveries: 1 }])).toBe('claimed once, from 1 delivery');
    expect(verdict([{ key: 'k', deliveries: 3 }])).toBe(
      'claimed once: 3 deliveries of one key, 2 duplicates absorbed by the claim',
    );
  });

  it('says so when one event id has claims under several keys', () => {
    expect(
      verdict([
        { key: 'a', deliveries: 1 },
        { key: 'b', deliveries: 1 },
      ]),
    ).toMatch(/^2 claims match: this event was claimed 2 times, under different keys \(a, b\)/);
  });
});

describe('summarizeBody', () => {
  it('reads an event message and tolerates anything else', () => {
    expect(
      summarizeBody(JSON.stringify({ key: 'k', provider: 'stripe', eventType: 't', eventId: 'e' })),
    ).toEqual({
      key: 'k',
      provider: 'stripe',
      eventType: 't',
      eventId: 'e',
    });
    expect(summarizeBody('not json')).toEqual({ key: null, provider: null, eventType: null, eventId: null });
  });
});

describe('splitGlobalOptions (webhooks send)', () => {
  it("takes --json and --stack out of send's own arguments", () => {
    expect(splitGlobalOptions(['stripe', '--json', '--stack', 'Prod', '--dup', '2'])).toEqual({
      rest: ['stripe', '--dup', '2'],
      json: true,
      stack: 'Prod',
    });
    expect(splitGlobalOptions(['stripe', '--stack=Prod']).stack).toBe('Prod');
  });

  it('refuses --stack without a name', () => {
    expect(() => splitGlobalOptions(['stripe', '--stack'])).toThrow(UsageError);
  });
});
