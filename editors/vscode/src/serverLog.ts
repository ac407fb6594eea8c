/**
 * The sidecar's stderr in the output channel at the right level: its log lines are
 * `<date> <time> LEVEL logger: message` (sidecar/cli.py LOG_FORMAT); stderr is not an error stream. Pure.
 */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

const LINE = /^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?\s+(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s+(.*)$/;
const LEVELS: Record<string, LogLevel> = { DEBUG: 'debug', INFO: 'info', WARNING: 'warn', WARN: 'warn', ERROR: 'error', CRITICAL: 'error' };

/** Splits stderr chunks into lines and gives each its level; lines that are not log records (a traceback's)
 * take the level of the record they continue (`warn` before any record: Python's own complaints). */
export class ServerLogParser {
  private partial = '';
  private level: LogLevel = 'warn';

  push(chunk: string): Array<[LogLevel, string]> {
    const text = this.partial + chunk;
    const lines = text.split(/\r?\n/);
    this.partial = lines.pop() ?? '';
    return lines.filter((l) => l.trim()).map((l) => this.classify(l));
  }

  flush(): Array<[LogLevel, string]> {
    const rest = this.partial;
    this.partial = '';
    return rest.trim() ? [this.classify(rest)] : [];
  }

  private classify(line: string): [LogLevel, string] {
    const m = LINE.exec(line);
    if (!m) return [this.level, line];
    this.level = LEVELS[m[1]] ?? 'info';
    return [this.level, m[2]];
  }
}
