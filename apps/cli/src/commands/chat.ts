import { createInterface, emitKeypressEvents, type Interface } from 'node:readline';
import { followSession, type SessionFollower, type SessionState } from '@molf/client';
import type { Approval, SessionEvent } from '@molf/protocol';
import { type Command, Option } from 'commander';
import { addStackOptions, openStack, sessionWorker } from '../embedded-stack.ts';

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
  /help             this help
  /exit             leave (also Ctrl-D, or Ctrl-C twice)
While a tool call waits for approval, answer: o = once, s = this session, a = always (saved for the
worker), d = deny (then a reason for the model, optional).
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
  const lines = [
    `? ${approval.tool} asks for approval: ${subjects.join('; ') || approval.tool}`,
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
  let busy = false;
  let midLine = false;
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
  const newline = () => {
    if (midLine) out('\n');
    midLine = false;
  };
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
    switch (event.type) {
      case 'status':
        busy = state.busy;
        if (!busy) {
          newline();
          showPrompt();
        }
        break;
      case 'message.delta':
        out(event.text);
        midLine = !event.text.endsWith('\n');
        break;
      case 'tool-call.started':
        newline();
        out(`⚙ ${event.toolName} ${JSON.stringify(event.args).slice(0, 300)}\n`);
        break;
      case 'tool-call.ended': {
        const first = (event.error ?? event.output).split('\n')[0]?.slice(0, 200) ?? '';
        out(
          `${event.error === undefined ? '✓' : '✗'} ${event.toolName}: ${first}${event.truncated ? ' (truncated)' : ''}\n`,
        );
        break;
      }
      case 'approval.requested':
        showFirstApproval(state);
        break;
      case 'approval.resolved': {
        if (denying?.approvalId === event.approvalId) denying = undefined;
        if (shown === event.approvalId) {
          shown = undefined;
          out(`  → ${event.outcome}${event.by.startsWith('rule') ? ' (by a rule)' : ''}\n`);
        }
        showFirstApproval(state);
        showPrompt();
        break;
      }
      case 'message.queued':
        out(`(queued, position ${event.position})\n`);
        break;
      case 'error':
        newline();
        out(`! ${event.message}\n`);
        break;
      case 'turn.ended':
        if (event.reason !== 'completed') {
          newline();
          out(`(turn ended: ${event.reason})\n`);
        }
        break;
      case 'session.resync':
        out('(reconnected: some events were missed; /session to reload)\n');
        break;
      default:
        break;
    }
  }

  function follow(id: string): void {
    follower?.stop();
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
    // A worker's approval names its own session id (`worker:<id>`), not the chat's.
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

  async function command(line: string): Promise<boolean> {
    const [name, ...rest] = line.trim().split(/\s+/);
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
      default:
        out(`unknown command ${name}; /help lists them\n`);
        return true;
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
          busy = true;
          try {
            await client.rpc.sessions.prompt.mutate({
              sessionId,
              text: line,
              ...(model === undefined ? {} : { model }),
            });
          } catch (error) {
            // Refused (a bad model id, a full queue): nothing runs, so the prompt is ours again.
            busy = false;
            throw error;
          }
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
