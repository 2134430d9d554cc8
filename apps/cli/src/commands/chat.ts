import { createInterface, emitKeypressEvents, type Interface } from 'node:readline';
import { followSession, type SessionFollower, type SessionState } from '@molf/client';
import { type Approval, CATALOG_NAME_PATTERN, type SessionEvent, type WorkerInfo } from '@molf/protocol';
import { type Command, Option } from 'commander';
import { addStackOptions, openStack, sessionWorker } from '../embedded-stack.ts';
import { createChatTranscript } from '../chat/chat-transcript.ts';
import { formatCatalogEntry } from './format-catalog-entry.ts';

type ChatOptions = {
  model?: string;
  session?: string;
  server?: string;
  token?: string;
  worker?: string;
  dataDir?: string;
  config?: string;
};

const HELP = `Commands:
  /new              start a new session
  /sessions         list this worker's sessions (newest first)
  /session <id>     switch to a session
  /model <p/m>      use this model for the next prompts (/model alone shows it)
  /abort            abort the running turn (also Esc or Ctrl-C)
  /skills           list the worker's skills (.agents/skills, .claude/skills)
  /agents           list the agents the model can hand a task to (built-in, .agents/agents, .claude/agents)
  /<skill> [text]   send text (default: "Use the <skill> skill.") with that skill loaded
  /help             this help
  /exit             leave (also Ctrl-D, or Ctrl-C twice)
While a tool call waits for approval, answer: o = once, s = this session, a = always (saved for the
worker), d = deny (then a reason for the model, optional). A subagent's calls ask the same way, with
its agent named: ? [explore] shell_exec asks for approval. Its work is shown indented under its task.
A server new or changed in the project's .mcp.json waits for approval before it starts: o = start it
for this worker process, a = always start this exact definition (a change asks again), d = deny.
`;

export function registerChatCommand(program: Command): void {
  const command = program
    .command('chat')
    .description(
      'interactive session in the terminal: streaming answers, tool calls, approval prompts; without --server it ' +
        'starts a server and a worker on the current directory',
    )
    .addOption(new Option('--model <provider/model>', 'model for prompts').env('MOLF_MODEL'))
    .option('--session <id>', 'resume this session');
  addStackOptions(command).action(chat);
}

/** The start of an MCP server of the worker's .mcp.json, rather than a tool call of the session. */
function isServerStart(approval: Approval): boolean {
  return approval.kind === 'mcp_server';
}

function describeApproval(approval: Approval): string {
  if (isServerStart(approval)) {
    // "session" is not offered: a server start belongs to no session.
    return [
      `? MCP server ${String(approval.args.name)} asks to start: ${approval.subjects[0]?.label ?? ''}`,
      `  (new or changed in .mcp.json; ${approval.reason})`,
      '  [o]nce (this worker process)  [a]lways (this exact definition)  [d]eny',
      '',
    ].join('\n');
  }
  const subjects = approval.subjects.filter((subject) => subject.decision !== 'allow').map((subject) => subject.label);
  const who = approval.subagent === undefined ? '' : `[${approval.subagent.agent}] `;
  const lines = [
    `? ${who}${approval.tool} asks for approval: ${subjects.join('; ') || approval.tool}`,
    `  (${approval.reason})`,
  ];
  const patterns = approval.alwaysPatterns;
  lines.push(
    patterns === null
      ? '  [o]nce  [d]eny          (no "session"/"always": no pattern describes this call safely)'
      : `  [o]nce  [s]ession  [a]lways  [d]eny     session/always allow: ${patterns.map((pattern) => JSON.stringify(pattern)).join(', ')}`,
  );
  return `${lines.join('\n')}\n`;
}

async function chat(options: ChatOptions): Promise<void> {
  await using stack = await openStack({ ...options, logName: 'chat' });
  const { client } = stack;
  const out = (text: string) => process.stdout.write(text);
  const workerId = await sessionWorker(stack);
  let model = options.model;
  let sessionId = options.session ?? (await client.rpc.sessions.create.mutate({ workerId })).sessionId;
  /** The worker of the session shown: its skills are the ones `/<skill>` loads. */
  let sessionWorkerId: string = workerId;
  let busy = false;
  const transcript = createChatTranscript(out);
  /** Following the current session: busy state and the approvals waiting come from it. */
  let follower: SessionFollower | undefined;
  const waiting = (): Approval[] => follower?.state().approvals ?? [];
  /** The approval whose question is on the screen. */
  let shown: string | undefined;
  let denying: Approval | undefined;
  let lastInterrupt = 0;

  const rl: Interface = createInterface({
    input: process.stdin,
    output: process.stdout,
    terminal: process.stdin.isTTY,
  });
  let left = false;
  rl.once('close', () => {
    left = true;
  });
  const newline = () => transcript.endLine();
  const showPrompt = () => {
    // A command or an event that ends after /exit must not prompt on the closed interface (it throws).
    if (left) return;
    const approvals = waiting();
    if (denying !== undefined) rl.setPrompt('reason (optional): ');
    else if (approvals.length > 0)
      rl.setPrompt(isServerStart(approvals[0] as Approval) ? 'approve [o/a/d]: ' : 'approve [o/s/a/d]: ');
    else rl.setPrompt(busy ? '' : '> ');
    if (!busy || approvals.length > 0 || denying !== undefined) rl.prompt();
  };
  /** Puts the oldest waiting approval's question on the screen, once. */
  const showFirstApproval = (state: SessionState) => {
    const first = state.approvals[0];
    if (first === undefined || first.approvalId === shown) return;
    shown = first.approvalId;
    newline();
    out(describeApproval(first));
    showPrompt();
  };

  function onEvent(event: SessionEvent, state: SessionState): void {
    transcript.show(event);
    // A subagent's approvals wait in the same queue as the session's own (see followSession).
    const approvalEvent = event.type === 'subagent.event' ? event.event : event;
    switch (approvalEvent.type) {
      case 'approval.requested':
        showFirstApproval(state);
        break;
      case 'approval.resolved':
        if (denying?.approvalId === approvalEvent.approvalId) denying = undefined;
        if (shown === approvalEvent.approvalId) {
          shown = undefined;
          newline();
          out(`  → ${approvalEvent.outcome}${approvalEvent.by.startsWith('rule') ? ' (by a rule)' : ''}\n`);
        }
        showFirstApproval(state);
        showPrompt();
        break;
      default:
        break;
    }
    if (event.type === 'status') {
      busy = state.busy;
      if (!busy) {
        newline();
        showPrompt();
      }
    }
  }

  function follow(id: string): void {
    follower?.stop();
    transcript.reset();
    shown = undefined;
    denying = undefined;
    // From now on only (`/session` prints the last messages itself), with what waits already; the
    // worker's own approvals (MCP server starts) belong to no session and are followed too.
    follower = followSession(client, {
      sessionId: id,
      workerId,
      onEvent,
      onBackfill: (state) => {
        busy = state.busy;
        if (shown !== undefined && !state.approvals.some((approval) => approval.approvalId === shown)) {
          shown = undefined;
        }
        showFirstApproval(state);
      },
      onError: (error: unknown) => out(`! event stream: ${(error as Error).message}\n`),
    });
  }

  async function abortTurn(): Promise<void> {
    if (!busy) return;
    await client.rpc.sessions.abort.mutate({ sessionId });
    out('\n(aborting)\n');
  }

  async function answerApproval(line: string): Promise<void> {
    const approval = waiting()[0];
    if (approval === undefined) return;
    // A worker's approval names its own session id (`worker:<id>`), a subagent's its child session: not the chat's.
    const { sessionId } = approval;
    if (denying !== undefined) {
      const feedback = line.trim();
      denying = undefined;
      await client.rpc.approvals.deny.mutate({
        sessionId,
        approvalId: approval.approvalId,
        ...(feedback === '' ? {} : { feedback }),
      });
      return;
    }
    const choice = line.trim().toLowerCase();
    const scope =
      choice === 'o' || choice === 'once'
        ? 'once'
        : choice === 's' || choice === 'session'
          ? 'session'
          : choice === 'a' || choice === 'always'
            ? 'always'
            : undefined;
    if (scope === 'session' && isServerStart(approval)) {
      out('  "session" is not offered for starting a server: o (this worker process), a (always) or d\n');
      showPrompt();
      return;
    }
    if (scope !== undefined) {
      if (scope !== 'once' && approval.alwaysPatterns === null) {
        out('  "session" and "always" are not offered for this call: o or d\n');
        showPrompt();
        return;
      }
      await client.rpc.approvals.approve.mutate({ sessionId, approvalId: approval.approvalId, scope });
    } else if ((choice === 'd' || choice === 'deny') && isServerStart(approval)) {
      // No reason to ask for: no model reads it.
      await client.rpc.approvals.deny.mutate({ sessionId, approvalId: approval.approvalId });
    } else if (choice === 'd' || choice === 'deny') {
      denying = approval;
      showPrompt();
    } else {
      out('  answer o (once), s (session), a (always) or d (deny)\n');
      showPrompt();
    }
  }

  /** The skills and agents of the session's worker as the server last reported them; undefined while it is offline. */
  let catalog: WorkerInfo['catalog'];
  /** Asks the server again: the worker reports its skills and agents anew whenever their files change. */
  async function loadCatalog(): Promise<WorkerInfo['catalog']> {
    const workers = await client.rpc.workers.list.query();
    catalog = workers.find((worker) => worker.workerId === sessionWorkerId && worker.state === 'online')?.catalog;
    return catalog;
  }
  /** Whether the worker offers this skill, asking the server again before saying no (one may have just been added). */
  async function isSkill(name: string): Promise<boolean> {
    if (!CATALOG_NAME_PATTERN.test(name)) return false;
    if (catalog?.skills.some((skill) => skill.name === name) === true) return true;
    return (await loadCatalog())?.skills.some((skill) => skill.name === name) === true;
  }

  async function sendPrompt(text: string, skills?: string[]): Promise<void> {
    busy = true;
    try {
      await client.rpc.sessions.prompt.mutate({
        sessionId,
        text,
        ...(model === undefined ? {} : { model }),
        ...(skills === undefined ? {} : { skills }),
      });
    } catch (error) {
      // Refused (a bad model id, a full queue, a skill just removed): nothing runs, so the prompt is ours again.
      busy = false;
      throw error;
    }
  }

  async function command(line: string): Promise<boolean> {
    const [name = '', ...rest] = line.trim().split(/\s+/);
    const argument = rest.join(' ');
    switch (name) {
      case '/help':
        out(HELP);
        return true;
      case '/exit':
      case '/quit':
        return false;
      case '/new': {
        sessionId = (await client.rpc.sessions.create.mutate({ workerId })).sessionId;
        sessionWorkerId = workerId;
        follow(sessionId);
        out(`new session ${sessionId}\n`);
        return true;
      }
      case '/sessions': {
        const { sessions, total } = await client.rpc.sessions.list.query({ workerId, limit: 20 });
        for (const session of sessions) {
          out(
            `${session.sessionId === sessionId ? '*' : ' '} ${session.sessionId}  ${session.updatedAt.slice(0, 16)}  ${session.messageCount} msgs  ${session.name}\n`,
          );
        }
        if (total > sessions.length) out(`  (${total - sessions.length} more)\n`);
        return true;
      }
      case '/session': {
        const { session, messages } = await client.rpc.sessions.get.query({ sessionId: argument });
        sessionId = session.sessionId;
        sessionWorkerId = session.workerId;
        catalog = undefined;
        out(`session ${session.name} (${messages.length} messages)\n`);
        for (const message of messages.slice(-6)) {
          if (message.role === 'tool') continue;
          out(`${message.role === 'user' ? '>' : ' '} ${message.text.slice(0, 300)}\n`);
        }
        follow(sessionId);
        return true;
      }
      case '/model':
        if (argument !== '') model = argument;
        out(`model: ${model ?? 'the session default or the server default'}\n`);
        return true;
      case '/abort':
        await abortTurn();
        return true;
      case '/skills': {
        const skills = (await loadCatalog())?.skills;
        if (skills === undefined) out('the worker reports no skills (it is offline, or older than skills)\n');
        else if (skills.length === 0) out('no skills on this worker (a skill is .agents/skills/<name>/SKILL.md)\n');
        else {
          out('skills (/<name> [text] sends text with the skill loaded):\n');
          for (const skill of skills) out(`  ${formatCatalogEntry(skill)}\n`);
        }
        return true;
      }
      case '/agents': {
        const agents = (await loadCatalog())?.agents;
        if (agents === undefined) out('the worker reports no agents (it is offline, or older than agents)\n');
        else {
          out('agents (the model hands them a task with its task tool):\n');
          for (const agent of agents) out(`  ${formatCatalogEntry(agent)}\n`);
        }
        return true;
      }
      default: {
        // The commands above come first: a skill named like one is loaded by the model only.
        const skill = name.slice(1);
        if (await isSkill(skill)) {
          // The text as typed, spaces kept.
          const text = line.trim().slice(name.length).trim();
          await sendPrompt(text === '' ? `Use the ${skill} skill.` : text, [skill]);
          return true;
        }
        out(`unknown command ${name}; /help lists them\n`);
        return true;
      }
    }
  }

  follow(sessionId);
  out(`molf chat — session ${sessionId}. /help for commands.\n`);
  if (process.stdin.isTTY) {
    emitKeypressEvents(process.stdin, rl);
    process.stdin.on('keypress', (_text: string, key: { name?: string } | undefined) => {
      if (key?.name === 'escape') void abortTurn();
    });
  }
  showPrompt();

  const closed = new Promise<void>((resolvePromise) => rl.once('close', resolvePromise));
  // A token refused after a server restart: the client has stopped (the line saying so is out).
  void stack.refused.then(() => {
    process.exitCode = 1;
    rl.close();
  });
  const onInterrupt = () => {
    if (busy) {
      void abortTurn();
      return;
    }
    if (Date.now() - lastInterrupt < 2_000) {
      rl.close();
      return;
    }
    lastInterrupt = Date.now();
    out('\n(Ctrl-C again to exit)\n');
    showPrompt();
  };
  // On a terminal readline turns Ctrl-C into this event; otherwise it arrives as a signal.
  rl.on('SIGINT', onInterrupt);
  process.on('SIGINT', onInterrupt);
  rl.on('line', (line) => {
    void (async () => {
      try {
        if (waiting().length > 0) {
          await answerApproval(line);
        } else if (line.trim().startsWith('/')) {
          if (!(await command(line))) rl.close();
          else if (!busy) showPrompt();
        } else if (line.trim() !== '') {
          await sendPrompt(line);
        } else if (!busy) {
          showPrompt();
        }
      } catch (error) {
        out(`! ${(error as Error).message}\n`);
        showPrompt();
      }
    })();
  });
  await closed;
  process.off('SIGINT', onInterrupt);
  follower?.stop();
  // Leaving aborts nothing: a running turn finishes on the server and is there on the next /session.
}
