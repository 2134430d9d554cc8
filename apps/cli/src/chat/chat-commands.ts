/** A `/` command of `molf chat`: its name, what it takes, what it does. */
export type ChatCommand = { name: string; args?: string; help: string };

/** Every `/` command, in `/help` order; Tab completes their names (and the worker's skills). */
export const CHAT_COMMANDS: readonly ChatCommand[] = [
  { name: '/new', help: 'start a new session' },
  { name: '/sessions', help: "pick one of this worker's sessions to resume (its history is printed)" },
  { name: '/session', args: '<id>', help: 'resume a session by its id' },
  { name: '/model', args: '[p/m]', help: 'use this model for the next prompts (alone: show the model)' },
  { name: '/usage', help: 'tokens and cost of the last turn and of the session' },
  { name: '/edit', help: 'write the prompt in $VISUAL or $EDITOR' },
  { name: '/abort', help: 'abort the running turn (also Esc, or Ctrl-C)' },
  { name: '/skills', help: "list the worker's skills (.agents/skills, .claude/skills)" },
  { name: '/agents', help: 'list the agents the model can hand a task to' },
  { name: '/help', help: 'this help' },
  { name: '/exit', help: 'leave (also Ctrl-D, or Ctrl-C twice)' },
];

/** The commands and skills `prefix` completes to: only while the first word is being typed. */
export function completeCommand(prefix: string, skills: readonly string[]): string[] {
  if (!prefix.startsWith('/') || /\s/.test(prefix)) return [];
  const names = [...CHAT_COMMANDS.map((command) => command.name), ...skills.map((skill) => `/${skill}`)];
  return [...new Set(names)].filter((name) => name.startsWith(prefix));
}

export function formatChatHelp(): string {
  const width = Math.max(...CHAT_COMMANDS.map((command) => `${command.name} ${command.args ?? ''}`.length));
  const lines = CHAT_COMMANDS.map(
    (command) => `  ${`${command.name} ${command.args ?? ''}`.padEnd(width)}  ${command.help}`,
  );
  return [
    'Commands:',
    ...lines,
    `  ${'/<skill> [text]'.padEnd(width)}  send text (default: "Use the <skill> skill.") with that skill loaded`,
    '',
    'Input: Enter sends; Shift-Enter, Alt-Enter or a \\ at the end of a line starts a new line; a paste',
    'of several lines is one prompt; Up/Down recall earlier prompts (of every chat); Tab completes commands.',
    'While a turn runs you can type the next prompt: it waits in the queue.',
    '',
    'Approvals take one key: y = yes once (also Enter), s = this session, a = always (the exact pattern',
    'is shown, and you can edit it before it is saved), e = accept edits (edit_file, write_file) for this',
    'session, n = no (then a reason for the model, optional). A subagent asks the same way, its agent',
    'named. An MCP server new or changed in .mcp.json asks before it starts: y = start it for this worker',
    'process, a = always start this exact definition, n = no.',
    '',
  ].join('\n');
}
