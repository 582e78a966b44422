import { describe, expect, it } from 'vitest';
import { type ProgressStream, progressBar, renderProgress } from '../../cli/progress.js';

function stream(isTTY: boolean): ProgressStream & { text: string } {
  return {
    isTTY,
    text: '',
    write(chunk: string) {
      this.text += chunk;
      return true;
    },
  };
}

describe('renderProgress', () => {
  it('fills the bar in proportion and shows the count and percentage', () => {
    expect(renderProgress(0, 4, 8)).toBe('[........] 0/4   0%');
    expect(renderProgress(1, 4, 8)).toBe('[##......] 1/4  25%');
    expect(renderProgress(4, 4, 8)).toBe('[########] 4/4 100%');
  });

  it('pads the count to the width of the total', () => {
    expect(renderProgress(3, 12, 4)).toBe('[#...]  3/12  25%');
  });

  it('caps at full when more is done than expected (approximate SQS counts)', () => {
    expect(renderProgress(5, 4, 4)).toBe('[####] 5/4 100%');
  });

  it('shows a bare count while the total is unknown, and a full bar for nothing to do', () => {
    expect(renderProgress(3, undefined, 4)).toBe('[....] 3');
    expect(renderProgress(0, 0, 4)).toBe('[####] 0/0 100%');
  });
});

describe('progressBar', () => {
  it('redraws in place on a terminal and ends the line when finished', () => {
    const out = stream(true);
    const bar = progressBar({ label: 'moving', stream: out });
    bar.update(0, 2);
    bar.update(1);
    bar.update(2);
    bar.finish();
    expect(out.text.split('\r').filter(Boolean)).toHaveLength(4);
    expect(out.text.endsWith('2/2 100%\n')).toBe(true);
  });

  it('writes only the final line into a pipe', () => {
    const out = stream(false);
    const bar = progressBar({ label: 'moving', stream: out });
    bar.update(0, 3);
    bar.update(3);
    bar.finish();
    bar.finish();
    expect(out.text).toBe(`moving ${renderProgress(3, 3)}\n`);
  });

  it('writes nothing when disabled', () => {
    const out = stream(true);
    const bar = progressBar({ label: 'x', stream: out, enabled: false });
    bar.update(1, 1);
    bar.finish();
    expect(out.text).toBe('');
  });
});
