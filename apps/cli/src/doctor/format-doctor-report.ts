import type { TerminalStyle } from '../terminal/terminal-style.ts';
import type { DoctorCheck, DoctorStatus } from './doctor-check.ts';

const MARKS: Record<DoctorStatus, string> = { ok: '✓', warning: '!', error: '✗', skipped: '·' };

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** `molf doctor`'s text: a header, one line a check (a fix under each warning and error), a verdict. */
export function formatDoctorReport(options: {
  version: string;
  checks: readonly DoctorCheck[];
  style: TerminalStyle;
}): string {
  const { checks, style } = options;
  const paint: Record<DoctorStatus, (text: string) => string> = {
    ok: style.ok,
    warning: style.warn,
    error: style.fail,
    skipped: style.dim,
  };
  const lines = [style.bold(options.version)];
  for (const check of checks) {
    lines.push(`${paint[check.status](MARKS[check.status])} ${check.summary}`);
    if (check.fix !== undefined) lines.push(`  ${style.dim('fix:')} ${check.fix}`);
  }
  const errors = checks.filter((check) => check.status === 'error').length;
  const warnings = checks.filter((check) => check.status === 'warning').length;
  lines.push(
    '',
    errors > 0
      ? style.fail(
          `${plural(errors, 'problem')}${warnings > 0 ? `, ${plural(warnings, 'warning')}` : ''}: see the fixes above`,
        )
      : warnings > 0
        ? style.warn(`healthy, with ${plural(warnings, 'warning')}`)
        : style.ok('healthy'),
  );
  return `${lines.join('\n')}\n`;
}
