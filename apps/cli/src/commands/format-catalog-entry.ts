/** A description is shown on one line, cut here (`molf workers --json` has it whole). */
const MAX_DESCRIPTION = 100;

/** A text's first line, cut to fit; `…` says that something was left out. */
export function toOneLine(text: string): string {
  const whole = text.trim();
  const line = whole.split('\n')[0]?.trim() ?? '';
  if (line.length > MAX_DESCRIPTION) return `${line.slice(0, MAX_DESCRIPTION - 1)}…`;
  return line === whole ? line : `${line} …`;
}

/** A skill or agent as `molf workers` and `molf chat` list it: `name (built-in) — first line of its description`. */
export function formatCatalogEntry(entry: { name: string; description: string; builtin?: boolean }): string {
  return `${entry.name}${entry.builtin === true ? ' (built-in)' : ''} — ${toOneLine(entry.description)}`;
}
