/** A processor or receiver log that records its lines, for tests that read what an operator would. */
export interface LogLine {
  readonly level: 'info' | 'warn' | 'error';
  readonly message: string;
  readonly details: Record<string, unknown>;
}

export function recordingLog(): {
  readonly log: Record<LogLine['level'], (message: string, details: Record<string, unknown>) => void>;
  readonly lines: LogLine[];
} {
  const lines: LogLine[] = [];
  const at = (level: LogLine['level']) => (message: string, details: Record<string, unknown>) => {
    lines.push({ level, message, details });
  };
  return { log: { info: at('info'), warn: at('warn'), error: at('error') }, lines };
}
