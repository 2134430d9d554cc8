import { TASK_TOOL } from '@molf/permissions';
import { MolfError, type ToolDescriptor, type ToolResult, toErrorResult, type WorkerId } from '@molf/protocol';
import { z } from 'zod';
import type { AgentProfile, ResolvedAgents } from '../agent/agent-profiles.ts';
import type { SubagentOutcome, SubagentRun } from '../agent/run-subagent.ts';
import { describeNamedList } from './describe-named-list.ts';
import type { ServerTool } from './server-tool.ts';

/** Subagents one parent turn runs at once; more `task` calls wait. */
export const DEFAULT_MAX_PARALLEL_TASKS = 4;
/** A subagent is stopped after this. */
export const DEFAULT_TASK_TIMEOUT_MS = 10 * 60_000;

const taskArgs = z.strictObject({
  agent: z.string().min(1).max(64).describe('The agent to run'),
  description: z.string().min(1).max(200).describe('A short (3–5 word) description of the task'),
  prompt: z.string().min(1).max(100_000).describe('The task for the agent: everything it needs to know'),
});

const INTRODUCTION =
  'Runs a subagent: a separate agent with its own instructions and tools that does one task and returns ' +
  'its final answer to you. Use it for self-contained work (a search across the project, an independent ' +
  'change) to keep your own context small; several task calls in one step run in parallel. The subagent ' +
  'sees only your prompt, so say everything it needs.';

function toDescriptor(agents: Iterable<AgentProfile>): ToolDescriptor {
  const list = [...agents];
  return {
    name: TASK_TOOL,
    description: describeNamedList(INTRODUCTION, 'agent', list),
    inputSchema: {
      type: 'object',
      properties: {
        agent: { type: 'string', enum: list.map((agent) => agent.name), description: 'The agent to run' },
        description: { type: 'string', description: 'A short (3–5 word) description of the task' },
        prompt: { type: 'string', description: 'The task for the agent: everything it needs to know' },
      },
      required: ['agent', 'description', 'prompt'],
      additionalProperties: false,
    },
  };
}

/** At most `limit` tasks at once per key (the parent session: one turn runs there at a time). */
function createTaskSlots(limit: number) {
  const slots = new Map<string, { running: number; waiting: Array<() => void> }>();
  return {
    async take(key: string, signal: AbortSignal): Promise<() => void> {
      let entry = slots.get(key);
      if (entry === undefined) {
        entry = { running: 0, waiting: [] };
        slots.set(key, entry);
      }
      const slot = entry;
      if (slot.running >= limit) {
        await new Promise<void>((resolve, reject) => {
          const wake = () => {
            signal.removeEventListener('abort', onAbort);
            resolve();
          };
          const onAbort = () => {
            slot.waiting.splice(slot.waiting.indexOf(wake), 1);
            reject(new MolfError('cancelled', 'the task was cancelled while it waited for a free slot'));
          };
          slot.waiting.push(wake);
          signal.addEventListener('abort', onAbort, { once: true });
        });
      } else {
        slot.running += 1;
      }
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const next = slot.waiting.shift();
        // The slot passes to the next waiter as it is; only when none waits is it given back.
        if (next !== undefined) next();
        else {
          slot.running -= 1;
          if (slot.running === 0) slots.delete(key);
        }
      };
    },
  };
}

function formatOutcome(agent: AgentProfile, outcome: SubagentOutcome, maxSteps: number): ToolResult {
  const open = `<task_result agent="${agent.name}" session="${outcome.childSessionId}">`;
  switch (outcome.reason) {
    case 'completed':
      return { output: [open, outcome.text, '</task_result>'].join('\n') };
    case 'step_limit':
      return {
        output: [
          open,
          outcome.text === '' ? '(no answer yet)' : outcome.text,
          `[The subagent reached its limit of ${maxSteps} model steps before it finished; this is what it had.]`,
          '</task_result>',
        ].join('\n'),
      };
    case 'doom_loop':
      return toErrorResult(
        'internal',
        `The ${agent.name} subagent kept repeating the same tool call and was stopped (session ${outcome.childSessionId}).${outcome.text === '' ? '' : ` What it had: ${outcome.text}`}`,
      );
    case 'aborted':
      return toErrorResult('cancelled', `The ${agent.name} subagent was stopped before it finished.`);
    case 'error':
      return toErrorResult(
        'internal',
        `The ${agent.name} subagent failed: ${outcome.error ?? 'it ended with an error'} (session ${outcome.childSessionId}).`,
      );
  }
}

/**
 * `task({ agent, description, prompt })`: runs a subagent in a child session and returns its final
 * answer. Offered to sessions that are not subagents themselves (no nesting), with an enum of the
 * worker's agents. At most `maxParallel` run at once per parent turn; each is stopped (really: its
 * turn is aborted, its tool processes killed) after `timeoutMs`.
 */
export function createTaskTool(options: {
  agents: (workerId: WorkerId) => ResolvedAgents | undefined;
  run: (run: SubagentRun) => Promise<SubagentOutcome>;
  /** The server's step limit, for agents that set none. */
  defaultMaxSteps: number;
  /** Default DEFAULT_MAX_PARALLEL_TASKS (4). */
  maxParallel?: number;
  /** Default DEFAULT_TASK_TIMEOUT_MS (10 min). */
  timeoutMs?: number;
}): ServerTool<typeof taskArgs> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TASK_TIMEOUT_MS;
  const slots = createTaskSlots(options.maxParallel ?? DEFAULT_MAX_PARALLEL_TASKS);
  return {
    definition: {
      name: TASK_TOOL,
      description: INTRODUCTION,
      args: taskArgs,
      defaultTimeoutMs: timeoutMs,
    },
    // The limit counts from when the subagent starts, not while the call waits for a slot (below).
    ownsTimeLimit: true,
    offer({ workerId, agent }) {
      if (agent !== undefined) return undefined;
      const resolved = options.agents(workerId);
      return resolved === undefined ? undefined : toDescriptor(resolved.agents.values());
    },
    async run(args, context) {
      const agent = options.agents(context.workerId)?.agents.get(args.agent);
      if (agent === undefined) {
        const known = [...(options.agents(context.workerId)?.agents.keys() ?? [])].join(', ');
        return toErrorResult('invalid_arguments', `There is no agent named "${args.agent}". The agents are: ${known}.`);
      }
      const limit = new AbortController();
      const signal = AbortSignal.any([context.signal, limit.signal]);
      let release: (() => void) | undefined;
      try {
        release = await slots.take(context.sessionId, context.signal);
      } catch {
        return toErrorResult('cancelled', 'The task was cancelled before it started.');
      }
      const timer = setTimeout(() => limit.abort(new MolfError('timeout', 'the task timed out')), timeoutMs);
      try {
        const outcome = await options.run({
          parentSessionId: context.sessionId,
          toolCallId: context.sessionToolCallId ?? context.toolCallId,
          workerId: context.workerId,
          agent,
          description: args.description,
          prompt: args.prompt,
          modelId: context.modelId,
          ...(context.unattended === undefined ? {} : { unattended: context.unattended }),
          signal,
        });
        if (limit.signal.aborted) {
          return toErrorResult(
            'timeout',
            `The ${agent.name} subagent did not finish within ${Math.round(timeoutMs / 1000)} s and was stopped (session ${outcome.childSessionId}).${outcome.text === '' ? '' : ` What it had: ${outcome.text}`}`,
          );
        }
        if (context.signal.aborted) return toErrorResult('cancelled', 'The task was cancelled: the turn was aborted.');
        return formatOutcome(agent, outcome, agent.maxSteps ?? options.defaultMaxSteps);
      } finally {
        clearTimeout(timer);
        release();
      }
    },
  };
}
