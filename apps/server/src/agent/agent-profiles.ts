import { type PermissionRule, safeParseAgentRules, TASK_TOOL } from '@molf/permissions';
import type { AgentInfo, CatalogProblem, CatalogSource, ProjectCatalog } from '@molf/protocol';

/** What a subagent is: its prompt, what it may use, and how long it may run. */
export type AgentProfile = {
  name: string;
  description: string;
  /** The agent's system prompt (the body of its file). */
  prompt: string;
  /** The only tools it is offered and may call; undefined: every tool but `task`. */
  tools: readonly string[] | undefined;
  /** Its rules, on top of the worker's file: they only narrow it. */
  rules: readonly PermissionRule[];
  /** `provider/model`; undefined: the parent turn's. */
  model: string | undefined;
  /** Model steps per run; undefined: the server's limit. */
  maxSteps: number | undefined;
  builtin: boolean;
  /** The agent's file, relative to the workdir (project agents). */
  path?: string;
  source?: CatalogSource;
};

function builtinRules(agent: string, rules: Record<string, 'allow' | 'deny' | 'ask'>): PermissionRule[] {
  return Object.entries(rules).map(([tool, action]) => ({
    tool,
    pattern: '*',
    action,
    source: { layer: 'agent', agent },
  }));
}

const READ_ONLY_TOOLS = ['read_file', 'glob', 'grep'] as const;

/** Agents every worker offers; a project agent of the same name replaces one. */
export const BUILTIN_AGENTS: readonly AgentProfile[] = [
  {
    name: 'explore',
    description:
      'Read-only: searches and reads the project (read_file, glob, grep) to answer a question or find where something is; changes nothing.',
    prompt: [
      'You are a read-only explorer working for another agent. Search and read the project with read_file, glob and grep to answer the task you were given; you cannot change anything or run commands.',
      'Be thorough but quick: look in the likely places first. End with a short, specific answer: what you found, with file paths and line numbers, and what you could not find.',
    ].join('\n\n'),
    tools: READ_ONLY_TOOLS,
    rules: builtinRules('explore', { '*': 'deny', read_file: 'allow', glob: 'allow', grep: 'allow' }),
    model: undefined,
    maxSteps: 15,
    builtin: true,
  },
  {
    name: 'general',
    description:
      'General-purpose: can use every tool of the worker (not task) to research or carry out a self-contained part of the work.',
    prompt: [
      'You are a general-purpose agent working for another agent on one self-contained task. Use the tools to do it completely, keeping changes minimal and correct.',
      'End with a short report for the agent that gave you the task: what you did, what you found, file paths that matter, and anything left undone.',
    ].join('\n\n'),
    tools: undefined,
    rules: [],
    model: undefined,
    maxSteps: 20,
    builtin: true,
  },
];

/** A model id the server can't use: the reason, for people. Undefined when it can. */
export type ModelCheck = (model: string) => string | undefined;

function toProfile(
  agent: AgentInfo,
  context: { toolNames: ReadonlySet<string>; checkModel: ModelCheck; problems: CatalogProblem[] },
): AgentProfile | undefined {
  const rules =
    agent.permission === undefined
      ? { ok: true as const, rules: [] }
      : safeParseAgentRules(agent.permission, agent.name);
  if (!rules.ok) {
    context.problems.push({
      path: agent.path,
      severity: 'error',
      message: `the agent "${agent.name}" is not offered: its permission is invalid (${rules.message})`,
    });
    return undefined;
  }
  let tools = agent.tools;
  if (tools !== undefined) {
    const unknown = tools.filter((tool) => !context.toolNames.has(tool));
    if (unknown.length > 0) {
      context.problems.push({
        path: agent.path,
        severity: 'warning',
        message: `the agent "${agent.name}" names tools this worker does not have (${unknown.join(', ')}); they are left out`,
      });
    }
    if (tools.includes(TASK_TOOL)) {
      context.problems.push({
        path: agent.path,
        severity: 'warning',
        message: `the agent "${agent.name}" lists task, which subagents never have (no nesting); it is left out`,
      });
    }
    tools = tools.filter((tool) => context.toolNames.has(tool) && tool !== TASK_TOOL);
  }
  if (agent.model !== undefined) {
    const problem = context.checkModel(agent.model);
    if (problem !== undefined) {
      context.problems.push({
        path: agent.path,
        severity: 'error',
        message: `the agent "${agent.name}" names the model ${agent.model}, which this server cannot use: ${problem}`,
      });
    }
  }
  return {
    name: agent.name,
    description: agent.description,
    prompt: agent.prompt,
    tools,
    rules: rules.rules,
    model: agent.model,
    maxSteps: agent.maxSteps,
    builtin: false,
    path: agent.path,
    source: agent.source,
  };
}

export type ResolvedAgents = { agents: ReadonlyMap<string, AgentProfile>; problems: CatalogProblem[] };

/**
 * The agents a worker's sessions can run: the built-in ones, replaced or joined by the project's.
 * A project agent whose permission is invalid is left out; unknown tools are dropped and unknown
 * models reported (a task with that agent then fails with the reason).
 */
export function resolveAgents(options: {
  catalog: ProjectCatalog | undefined;
  /** Every tool a session of the worker may be offered. */
  toolNames: readonly string[];
  checkModel: ModelCheck;
}): ResolvedAgents {
  const problems: CatalogProblem[] = [];
  const agents = new Map<string, AgentProfile>(BUILTIN_AGENTS.map((agent) => [agent.name, agent]));
  const context = { toolNames: new Set(options.toolNames), checkModel: options.checkModel, problems };
  for (const agent of options.catalog?.agents ?? []) {
    const profile = toProfile(agent, context);
    if (profile !== undefined) agents.set(profile.name, profile);
  }
  return { agents, problems };
}
