/** The one line that says what a call does: its command, path or pattern. */
export function callSubject(toolName: string, args: Record<string, unknown>): string {
  const pick = (key: string) => (typeof args[key] === 'string' ? (args[key] as string) : undefined);
  switch (toolName) {
    case 'shell_exec':
      return pick('command') ?? '';
    case 'read_file':
    case 'write_file':
    case 'edit_file':
      return pick('path') ?? '';
    case 'glob':
    case 'grep':
      return [pick('pattern'), pick('path') === undefined ? undefined : `in ${pick('path')}`].filter(Boolean).join(' ');
    case 'task':
      return `${pick('agent') ?? ''}: ${pick('description') ?? ''}`;
    case 'skill':
      return pick('name') ?? '';
    default: {
      const text = JSON.stringify(args);
      return text === '{}' ? '' : text;
    }
  }
}
