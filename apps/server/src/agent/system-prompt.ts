import type { Instructions } from '@molf/protocol';
import type { AgentProfile } from './agent-profiles.ts';

/** The server's time zone, read once: an `Intl.DateTimeFormat` costs about 0.5 ms to make, every step. */
let timeZone: string | undefined;

function serverTimeZone(): string {
  timeZone ??= Intl.DateTimeFormat().resolvedOptions().timeZone;
  return timeZone;
}

/**
 * The system prompt of every model step: who the agent is, the gate, where it works, the time, and
 * the project's instructions (AGENTS.md or CLAUDE.md at the workdir root).
 */
export function toSystemPrompt(options: {
  workdir: string;
  workerName: string;
  instructions: Instructions['files'];
  /** Set when a subagent runs the turn: its prompt follows the common part. */
  agent?: Pick<AgentProfile, 'name' | 'prompt'>;
  /** Default: now. */
  now?: Date;
}): string {
  const project = options.instructions.map(
    (file) =>
      `Project instructions from ${file.path}${file.truncated ? ' (cut at 64 KB)' : ''}; follow them:\n\n${file.text}`,
  );
  return [
    'You are Molf, a coding agent. You work in a project on a worker machine through tools; use them to look before you change anything, and keep changes minimal and correct.',
    'Every tool call passes an approval gate: a call may be denied by a rule or by the user. Respect a denial and its feedback; do not try to reach the same result another way.',
    `The project directory (workdir) is ${options.workdir} on worker "${options.workerName}". Relative paths are relative to it.`,
    `Current time: ${(options.now ?? new Date()).toISOString()} (${serverTimeZone()}).`,
    ...project,
    ...(options.agent === undefined
      ? []
      : [
          `You run as the subagent "${options.agent.name}" for another agent, which gave you one task in the next message. Your final answer is all it sees: make it complete and self-contained.`,
          options.agent.prompt,
        ]),
  ].join('\n\n');
}
