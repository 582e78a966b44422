import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  effectFaultPoint,
  faultInjector,
  InjectedFaultError,
  parseFaultPoints,
} from '../../lambdas/shared/faults.js';

describe('fault points', () => {
  it('ends the process at a crash point instead of throwing, as a worker dying holding its lease', () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation((code) => {
      throw new Error(`exit ${code}`);
    });
    const stderr = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const inject = faultInjector('processor.crashAfterClaim@x:1');
      expect(() => inject?.('processor.crashAfterClaim', 'evt_y')).not.toThrow();
      expect(() => inject?.('processor.crashAfterClaim', 'evt_x')).toThrow('exit 137');
      expect(exit).toHaveBeenCalledWith(137);
      expect(stderr).toHaveBeenCalledWith('injected crash at processor.crashAfterClaim: the process exits');
      expect(() => inject?.('processor.crashAfterClaim', 'evt_x')).not.toThrow();
    } finally {
      exit.mockRestore();
      stderr.mockRestore();
    }
  });

  it('is inert when FAULT_POINTS is unset or blank', () => {
    expect(faultInjector(undefined)).toBeUndefined();
    expect(faultInjector('  ')).toBeUndefined();
    expect(faultInjector(' , ,')).toBeUndefined();
  });

  it('reads each entry: point, match, count; empty entries are skipped', () => {
    expect(parseFaultPoints('processor.afterState,, receiver.afterClaim@evt_9:12 ,')).toEqual([
      { point: 'processor.afterState', match: undefined, remaining: 1 },
      { point: 'receiver.afterClaim', match: 'evt_9', remaining: 12 },
    ]);
    expect(parseFaultPoints('processor.afterLedger@:*')).toEqual([
      { point: 'processor.afterLedger', match: undefined, remaining: Number.POSITIVE_INFINITY },
    ]);
  });

  it('throws once by default, then lets the point pass', () => {
    const inject = faultInjector('processor.afterClaim');
    expect(() => inject?.('processor.afterClaim', 'evt_1')).toThrow(InjectedFaultError);
    expect(() => inject?.('processor.afterClaim', 'evt_1')).not.toThrow();
  });

  it('fires only for event ids containing the match, the given number of times', () => {
    const inject = faultInjector('receiver.afterClaim@poison:2');
    expect(() => inject?.('receiver.afterClaim', 'evt_ok')).not.toThrow();
    expect(() => inject?.('receiver.afterClaim', 'evt_poison_1')).toThrow(
      'injected fault at receiver.afterClaim',
    );
    expect(() => inject?.('receiver.afterClaim', 'evt_poison_2')).toThrow();
    expect(() => inject?.('receiver.afterClaim', 'evt_poison_3')).not.toThrow();
  });

  it('fires for ever with a * count, and keeps several points apart', () => {
    const inject = faultInjector('processor.afterLedger:*, processor.afterClaim@x');
    for (let i = 0; i < 5; i++) expect(() => inject?.('processor.afterLedger', 'evt')).toThrow();
    expect(() => inject?.('processor.afterClaim', 'evt')).not.toThrow();
    expect(() => inject?.('processor.afterClaim', 'evt_x')).toThrow();
  });

  it('shares counts between processes through a state directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'faults-'));
    const a = faultInjector('processor.afterClaim:2', dir);
    const b = faultInjector('processor.afterClaim:2', dir);
    expect(() => a?.('processor.afterClaim', 'e')).toThrow();
    expect(() => b?.('processor.afterClaim', 'e')).toThrow();
    expect(() => a?.('processor.afterClaim', 'e')).not.toThrow();
    expect(() => b?.('processor.afterClaim', 'e')).not.toThrow();
  });

  it('fires for ever with a * count through a state directory too, and keeps nothing there for it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'faults-'));
    const inject = faultInjector('processor.afterState:*', dir);
    for (let i = 0; i < 3; i++)
      expect(() => inject?.('processor.afterState', 'e')).toThrow(InjectedFaultError);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('throws an InjectedFaultError naming the point', () => {
    const inject = faultInjector('receiver.afterPayloadStored');
    try {
      inject?.('receiver.afterPayloadStored', 'evt_1');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InjectedFaultError);
      expect((error as InjectedFaultError).name).toBe('InjectedFaultError');
      expect((error as InjectedFaultError).point).toBe('receiver.afterPayloadStored');
      expect((error as Error).message).toBe('injected fault at receiver.afterPayloadStored');
    }
  });

  it('rejects an unknown point or a malformed entry with a message naming the valid points', () => {
    expect(() => parseFaultPoints('receiver.afterLunch')).toThrow(/processor\.afterClaim/);
    expect(() => parseFaultPoints('processor.beforeledger')).toThrow(/processor\.before<Effect>/);
    expect(() => parseFaultPoints('processor.during')).toThrow(/processor\.before<Effect>Marker/);
    expect(() => parseFaultPoints('receiver.afterClaim:lots')).toThrow(/point\[@match\]\[:count\]/);
    // An effect point's name is whole: nothing before `processor.` or after the effect's name.
    for (const entry of [
      'xprocessor.beforeLedger',
      'processor.beforeLedger.x',
      '-processor.afterState',
      'processor.afterState:1x',
    ]) {
      expect(() => parseFaultPoints(entry)).toThrow(
        `FAULT_POINTS entry ${JSON.stringify(entry)} is not point[@match][:count] with a point among receiver.afterClaim, receiver.afterPayloadStored, processor.beforeClaim, processor.afterClaim, processor.crashAfterClaim, processor.afterState, processor.failNow, compliance.afterObject, compliance.afterDone, or an effect's processor.before<Effect>, processor.before<Effect>Marker, processor.after<Effect>`,
      );
    }
  });

  it("names each effect step's points after the effect, so any effect has them", () => {
    expect(effectFaultPoint('before', 'ledger')).toBe('processor.beforeLedger');
    expect(effectFaultPoint('beforeMarker', 'ledger')).toBe('processor.beforeLedgerMarker');
    expect(effectFaultPoint('after', 'receipt')).toBe('processor.afterReceipt');
    const inject = faultInjector('processor.beforeReceiptMarker@evt_1');
    expect(() => inject?.(effectFaultPoint('beforeMarker', 'receipt'), 'evt_1')).toThrow(InjectedFaultError);
    expect(() => inject?.(effectFaultPoint('beforeMarker', 'ledger'), 'evt_1')).not.toThrow();
  });
});
