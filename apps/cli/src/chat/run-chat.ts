import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { followSession, type SessionFollower, type SessionState } from '@molf/client';
import {
  type Approval,
  CATALOG_NAME_PATTERN,
  roleAllows,
  type SessionEvent,
  type UsageTotals,
  type WorkerEvent,
  type WorkerInfo,
} from '@molf/protocol';
import { assertMayPrompt } from '../assert-may-prompt.ts';
import { formatCatalogEntry } from '../commands/format-catalog-entry.ts';
import type { LinkChangeKind } from '../connect-client.ts';
import { currentMolfPaths } from '../current-molf-paths.ts';
import { openStack, type StackOptions, sessionWorker } from '../embedded-stack.ts';
import { findSessionToContinue } from '../sessions/find-session-to-continue.ts';
import { createFirstPromptSession, type FirstPromptSession } from '../sessions/first-prompt-session.ts';
import { formatSessionHistory } from '../sessions/format-history.ts';
import { showControlCharacters, showControlCharactersIn } from '../terminal/show-control-characters.ts';
import { styleFor } from '../terminal/terminal-style.ts';
import {
  type AnswerRights,
  type ApprovalChoice,
  choiceFor,
  describeApproval,
  formatChoices,
  isServerStart,
} from './approval-view.ts';
import { completeCommand, formatChatHelp } from './chat-commands.ts';
import { createChatScreen } from './chat-screen.ts';
import { createChatTranscript } from './chat-transcript.ts';
import { openInputHistory } from './input-history.ts';
import { isLiveTerminal } from './is-live-terminal.ts';
import { createPlainInput } from './plain-input.ts';
import { describeProblems, formatPermissionsProblem, workerChangeNotices } from './problem-notices.ts';
import { formatStatusLine, formatUsage, SPINNER, type Usage } from './status-line.ts';
import { createTerminalInput, type InputHandlers, type InputMode } from './terminal-input.ts';

export type ChatOptions = Omit<StackOptions, 'logName' | 'onLinkChange' | 'quiet'> & {
  session?: string;
  continue?: boolean;
};

/** Messages of a resumed session printed before the prompt; older ones are counted. */
const RESUME_MESSAGES = 60;
/** How long leaving waits for the server to remove the chat's unused session. */
const DROP_SESSION_TIMEOUT_MS = 5_000;
/** Lines of the answer being written shown in the live region (the rest is above, or comes). */
const PENDING_LINES = 8;

/** Adds a call's usage to a running total. */
function addUsage(total: Usage | undefined, usage: { inputTokens?: number; outputTokens?: number; costUsd?: number }) {
  const sum: Usage = {
    inputTokens: (total?.inputTokens ?? 0) + (usage.inputTokens ?? 0),
    outputTokens: (total?.outputTokens ?? 0) + (usage.outputTokens ?? 0),
  };
  const cost =
    total?.costUsd === undefined && usage.costUsd === undefined
      ? undefined
      : (total?.costUsd ?? 0) + (usage.costUsd ?? 0);
  if (cost !== undefined) sum.costUsd = cost;
  return sum;
}

function usageOf(totals: UsageTotals | undefined): Usage | undefined {
  return totals === undefined
    ? undefined
    : { inputTokens: totals.inputTokens, outputTokens: totals.outputTokens, costUsd: totals.costUsd };
}

/**
 * `molf chat`: a session in the terminal. On a terminal it draws a live region under what it prints
 * (the answer being written, a status line while work runs, the input), renders answers as
 * markdown and takes approvals with one key; on a pipe it reads lines and prints plain text, so
 * scripts can drive it.
 */
export async function runChat(options: ChatOptions): Promise<void> {
  const stdout = process.stdout;
  const interactive = isLiveTerminal(process.stdin, stdout);
  const style = styleFor(stdout);
  const screen = createChatScreen(stdout, { interactive });
  // marked-terminal and its highlighter are loaded only for a terminal: a chat on a pipe prints plain text.
  const markdown = interactive
    ? (await import('./render-markdown.ts')).createMarkdownRenderer(style, Math.min(stdout.columns ?? 80, 100))
    : undefined;
  const paths = currentMolfPaths(options);
  const history = openInputHistory(paths.chatHistoryFile);

  /** The link to the server: a lost link shows in the status line until it is back. */
  let linkLost = false;
  let everLost = false;
  let renderLive = () => {};
  /** A line of the chat's own (notices, answers to commands); on a pipe it ends the open line first. */
  let say = (text: string) => screen.print(text);
  const onLink = (line: string, kind: LinkChangeKind) => {
    if (kind === 'lost') {
      linkLost = true;
      everLost = true;
    } else if (kind === 'connected') linkLost = false;
    say(kind === 'lost' || kind === 'refused' ? style.warn(`! ${line}`) : style.dim(line));
    renderLive();
  };

  await using stack = await openStack({ ...options, logName: 'chat', onLinkChange: onLink });
  assertMayPrompt(stack.role);
  const { client } = stack;
  /** "always" saves a rule: offered only to an admin credential. */
  const rights: AnswerRights = { always: roleAllows(stack.role, 'admin') };
  // A session resumed by --session or --continue runs on its own worker: with several online, no
  // --worker is needed to name it (--continue finds the worker of this directory, as molf run does).
  const resumed =
    options.session !== undefined
      ? await client.rpc.sessions.info.query({ sessionId: options.session })
      : options.continue === true
        ? await findSessionToContinue({ client, workerId: stack.workerId, directory: process.cwd() })
        : undefined;
  /** The worker of the chat: new sessions run on it, /sessions lists its sessions. */
  const workerId = resumed?.workerId ?? (await sessionWorker(stack));

  let model = options.model;
  /** The worker of the session shown: its skills are the ones `/<skill>` loads. */
  let sessionWorkerId: string = workerId;
  /** A session made by this chat that no prompt has reached the model in yet: removed if it stays so. */
  let fresh: FirstPromptSession | undefined;
  /** Sessions this chat removed (or may have: a first prompt's session is removed if it never reached the model). */
  const removedHere = new Set<string>();
  let sessionId = '';
  let follower: SessionFollower | undefined;
  const waiting = (): Approval[] => follower?.state().approvals ?? [];

  // What runs, for the status line.
  let busy = false;
  let turnStartedAt = 0;
  const runningTools = new Map<string, string>();
  let turnUsage: Usage | undefined;
  let lastTurnUsage: Usage | undefined;
  let sessionUsage: Usage | undefined;
  let queued = 0;
  /** The approval whose question is on the screen. */
  let shown: string | undefined;
  /** The approval being denied (its reason is typed) or saved "always" (its patterns are edited). */
  let answering: Approval | undefined;
  /** Approvals this chat answered: an answer from elsewhere is named as such. */
  const answeredHere = new Set<string>();
  let lastInterrupt = 0;
  /** An editor has the terminal (/edit). */
  let editing = false;
  let left = false;
  const leave = Promise.withResolvers<void>();
  // A closed terminal or a kill leaves as /exit does, from the start on (a session may be made any
  // moment now), so the chat's unused session is not left behind.
  const onHangup = () => finish();
  process.on('SIGHUP', onHangup);
  process.on('SIGTERM', onHangup);
  /** Settles once the chat has its session: a line typed or piped before waits for it. */
  const ready = Promise.withResolvers<void>();
  /** Lines (prompts, commands, answers) still being handled, and the last one. */
  const handling = new Set<Promise<void>>();
  let lastLine: Promise<void> = Promise.resolve();
  /** Stdin ended on a pipe: the chat leaves once what it was asked is done. */
  let draining = false;
  /** Prompts sent from here whose turn has not ended, by message id; the message each turn answers; those answered. */
  const unanswered = new Set<string>();
  const turnMessages = new Map<string, string>();
  const endedMessages = new Set<string>();

  const transcript = createChatTranscript((text) => (interactive ? screen.print(text) : stdout.write(text)), {
    style,
    ...(markdown === undefined ? {} : { markdown }),
    outputLines: interactive ? 3 : 0,
  });
  if (!interactive) {
    say = (text) => {
      transcript.endLine();
      stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    };
  }

  /** The catalog of the session's worker as last reported; undefined while it is offline. */
  let catalog: WorkerInfo['catalog'];
  const skillNames = () => catalog?.skills.map((skill) => skill.name) ?? [];

  /** A call the server refused, or a link that failed, under a key: said, not a rejection that ends the chat. */
  const sayFailure = (error: unknown) => say(style.fail(`! ${showControlCharacters((error as Error).message)}`));
  const handlers: InputHandlers = {
    // One line after the other, as typed or piped: a prompt after /new goes to the new session.
    submit: (text) => {
      const handled: Promise<void> = lastLine
        .then(() => onSubmit(text))
        .finally(() => {
          handling.delete(handled);
          leaveIfDone();
        });
      lastLine = handled;
      handling.add(handled);
    },
    answer: (choice) => void onAnswer(choice).catch(sayFailure),
    reason: (text) => void onReason(text).catch(sayFailure),
    patterns: (patterns) => void onPatterns(patterns).catch(sayFailure),
    pick: (value) => void onPick(value).catch(sayFailure),
    interrupt: onInterrupt,
    escape: () => void abortTurn().catch(sayFailure),
    // On a pipe, the end of stdin is the script's last line: its prompts are answered first.
    eof: () => {
      if (interactive) finish();
      else {
        draining = true;
        leaveIfDone();
      }
    },
    completions: (candidates) => say(style.dim(showControlCharacters(candidates.join('  ')))),
    changed: () => renderLive(),
  };
  const input = interactive
    ? createTerminalInput(process.stdin, stdout, handlers, {
        history: () => history.entries(),
        complete: (prefix) => completeCommand(prefix, skillNames()),
      })
    : createPlainInput(process.stdin, stdout, handlers, { busy: () => busy, style });

  const setMode = (mode: InputMode) => {
    input.setMode(mode);
    renderLive();
  };

  renderLive = () => {
    if (!interactive || left) return;
    const lines: string[] = [];
    const pending = transcript.pendingText().replace(/\n+$/, '');
    if (pending !== '') lines.push(...pending.split('\n').slice(-PENDING_LINES), '');
    if (linkLost) lines.push(style.warn('⚠ reconnecting to the server…'));
    // While an approval waits, its question is what the person looks at.
    if (busy && input.mode().type !== 'approval') {
      const tool = [...runningTools.values()].at(-1);
      lines.push(
        formatStatusLine({ startedAt: turnStartedAt, now: Date.now(), tool, usage: turnUsage, queued }, style),
      );
    }
    const region = input.render(style);
    const offset = lines.length;
    screen.setLive({
      lines: [...lines, ...region.lines],
      ...(region.cursor === undefined
        ? {}
        : { cursor: { line: offset + region.cursor.line, column: region.cursor.column } }),
    });
  };
  const spinner = setInterval(() => {
    if (busy || linkLost) renderLive();
  }, SPINNER.interval);
  spinner.unref();

  /** Puts the oldest waiting approval's question on the screen, once, and takes its answer. */
  function showFirstApproval(): void {
    const first = waiting()[0];
    if (first === undefined) {
      if (input.mode().type !== 'prompt' && input.mode().type !== 'pick' && answering === undefined) {
        setMode({ type: 'prompt' });
      }
      return;
    }
    if (first.approvalId === shown) return;
    shown = first.approvalId;
    answering = undefined;
    // What the model, a tool or a file put in it is shown, never written to the terminal as it is.
    say(describeApproval(showControlCharactersIn(first), style, rights));
    if (!interactive) say(formatChoices(first, style, rights));
    setMode({ type: 'approval', approval: first, rights });
  }

  function onEvent(event: SessionEvent, state: SessionState): void {
    fresh?.observe(event);
    // Text from the model, a tool or a file is shown, never written to the terminal as it is.
    transcript.show(showControlCharactersIn(event));
    // A subagent's approvals wait in the same queue as the session's own (see followSession).
    const own = event.type === 'subagent.event' ? event.event : event;
    switch (own.type) {
      case 'approval.requested':
        showFirstApproval();
        break;
      case 'approval.resolved': {
        const mine = answeredHere.delete(own.approvalId);
        if (answering?.approvalId === own.approvalId) answering = undefined;
        if (shown === own.approvalId) {
          shown = undefined;
          const by = own.by.startsWith('rule')
            ? ' (by a rule)'
            : mine
              ? ''
              : own.by === 'server'
                ? ` (${showControlCharacters(own.reason ?? 'by the server')})`
                : ' (answered in another client)';
          say(`  → ${own.outcome === 'approved' ? style.ok(own.outcome) : style.fail(own.outcome)}${by}`);
        }
        showFirstApproval();
        break;
      }
      default:
        break;
    }
    switch (event.type) {
      case 'turn.started':
        turnMessages.set(event.turnId, event.messageId);
        busy = true;
        turnStartedAt = Date.now();
        turnUsage = undefined;
        queued = Math.max(0, queued - 1);
        break;
      case 'tool-call.started':
        runningTools.set(event.toolCallId, event.toolName);
        break;
      case 'tool-call.ended':
        runningTools.delete(event.toolCallId);
        break;
      case 'message.completed':
        if (event.message.role === 'assistant' && event.message.usage !== undefined) {
          turnUsage = addUsage(turnUsage, event.message.usage);
        }
        break;
      case 'message.queued':
        queued = Math.max(queued, event.position);
        break;
      case 'turn.ended': {
        const answered = turnMessages.get(event.turnId);
        if (answered !== undefined) {
          unanswered.delete(answered);
          endedMessages.add(answered);
        }
        runningTools.clear();
        lastTurnUsage = usageOf(event.usage) ?? turnUsage;
        sessionUsage =
          usageOf(event.sessionUsage) ??
          (lastTurnUsage === undefined ? sessionUsage : addUsage(sessionUsage, lastTurnUsage));
        if (lastTurnUsage !== undefined && (lastTurnUsage.inputTokens > 0 || lastTurnUsage.outputTokens > 0)) {
          say(
            style.dim(
              `turn ${formatUsage(lastTurnUsage)}${sessionUsage === undefined ? '' : ` · session ${formatUsage(sessionUsage)}`}`,
            ),
          );
        }
        void settleFresh(event.reason);
        break;
      }
      case 'session.resync':
        say(style.warn(everLost ? '(server restarted, resumed)' : '(events were missed; resumed from the server)'));
        break;
      case 'status':
        busy = state.busy;
        break;
      default:
        break;
    }
    renderLive();
    leaveIfDone();
  }

  /** The first turn of a session this chat made ended: if the prompt never reached the model, the session goes. */
  async function settleFresh(reason: Extract<SessionEvent, { type: 'turn.ended' }>['reason']): Promise<void> {
    const session = fresh;
    if (session === undefined) return;
    fresh = undefined;
    removedHere.add(session.sessionId);
    const settled = await session.settle({ type: 'ended', reason });
    if (!settled.removed) removedHere.delete(session.sessionId);
    if (settled.removed) {
      say(style.dim(`(${settled.removedNote}; your next prompt starts a new one)`));
      await startSession();
    }
  }

  function follow(id: string): void {
    follower?.stop();
    // The turns of another session are not followed any more: they end on the server, unwatched.
    unanswered.clear();
    turnMessages.clear();
    endedMessages.clear();
    leaveIfDone();
    transcript.reset();
    shown = undefined;
    answering = undefined;
    busy = false;
    runningTools.clear();
    follower = followSession(client, {
      sessionId: id,
      workerId,
      onEvent,
      onBackfill: (state) => {
        busy = state.busy;
        if (shown !== undefined && !state.approvals.some((approval) => approval.approvalId === shown)) {
          shown = undefined;
        }
        showFirstApproval();
        renderLive();
      },
      onError: (error: unknown) =>
        say(style.fail(`! event stream: ${showControlCharacters((error as Error).message)}`)),
      // A session this chat removed itself (unused, or its first prompt never reached the model) is not news.
      onEnded: () => {
        if (!removedHere.has(id)) say(style.warn('(this session was deleted; /new starts another)'));
      },
      onPermissionsChange: (event) =>
        say(
          event.type === 'permissions.invalid'
            ? formatPermissionsProblem(event.problem, style)
            : style.ok('✓ permissions.jsonc parses again; its rules apply'),
        ),
    });
  }

  /** A new session of this chat's worker, removed again if no prompt reaches the model in it. */
  async function startSession(): Promise<void> {
    await dropFreshSession();
    fresh = await createFirstPromptSession(client, { workerId, model });
    sessionId = fresh.sessionId;
    sessionWorkerId = workerId;
    sessionUsage = undefined;
    lastTurnUsage = undefined;
    follow(sessionId);
  }

  /** A session this chat made and never used is not left behind. */
  async function dropFreshSession(): Promise<void> {
    const session = fresh;
    fresh = undefined;
    if (session !== undefined && !session.reached && !busy) {
      removedHere.add(session.sessionId);
      // Bounded: leaving must not wait on a link that is down (the session then stays, empty).
      await client.rpc.sessions.delete
        .mutate({ sessionId: session.sessionId }, { signal: AbortSignal.timeout(DROP_SESSION_TIMEOUT_MS) })
        .catch(() => undefined);
    }
  }

  /** Shows a stored session (its last messages, printed as `molf sessions show` does) and follows it. */
  async function resume(id: string): Promise<void> {
    const { session, messages, start } = await client.rpc.sessions.get.query({ sessionId: id, limit: RESUME_MESSAGES });
    await dropFreshSession();
    sessionId = session.sessionId;
    sessionWorkerId = session.workerId;
    catalog = undefined;
    sessionUsage = usageOf(session.usage);
    say(style.bold(`session ${showControlCharacters(session.name)} · ${session.sessionId}`));
    if (start > 0) say(style.dim(`(${start} earlier messages: molf sessions show ${session.sessionId})`));
    const text = formatSessionHistory(messages, style, markdown === undefined ? {} : { renderAnswer: markdown });
    if (text.trim() !== '') say(text);
    follow(sessionId);
  }

  async function abortTurn(): Promise<void> {
    if (!busy) return;
    await client.rpc.sessions.abort.mutate({ sessionId });
    say(style.dim('(aborting)'));
  }

  function onInterrupt(): void {
    // Ctrl-C in an editor that leaves it to the terminal reaches the chat too: it is the editor's.
    if (editing) return;
    if (busy) {
      void abortTurn().catch(sayFailure);
      return;
    }
    if (Date.now() - lastInterrupt < 2_000) {
      finish();
      return;
    }
    lastInterrupt = Date.now();
    say(style.dim('(Ctrl-C again to exit)'));
  }

  async function onAnswer(choice: ApprovalChoice): Promise<void> {
    const approval = waiting()[0];
    if (approval === undefined) return;
    // A worker's approval names its own session id (`worker:<id>`), a subagent's its child session: not the chat's.
    const { sessionId: asking, approvalId } = approval;
    if (choice.scope === 'deny') {
      if (isServerStart(approval)) {
        // No reason to ask for: no model reads it.
        answeredHere.add(approvalId);
        await client.rpc.approvals.deny.mutate({ sessionId: asking, approvalId });
        return;
      }
      answering = approval;
      setMode({ type: 'reason' });
      return;
    }
    if (choice.scope === 'always' && interactive && !isServerStart(approval) && approval.alwaysPatterns !== null) {
      answering = approval;
      setMode({ type: 'patterns', patterns: approval.alwaysPatterns });
      return;
    }
    answeredHere.add(approvalId);
    await client.rpc.approvals.approve.mutate({ sessionId: asking, approvalId, scope: choice.scope });
  }

  async function onReason(text: string): Promise<void> {
    const approval = answering;
    answering = undefined;
    setMode({ type: 'prompt' });
    if (approval === undefined) return;
    answeredHere.add(approval.approvalId);
    try {
      await client.rpc.approvals.deny.mutate({
        sessionId: approval.sessionId,
        approvalId: approval.approvalId,
        ...(text === '' ? {} : { feedback: text }),
      });
    } catch (error) {
      // Refused (a reason longer than the server takes): the question is asked again.
      answeredHere.delete(approval.approvalId);
      if (waiting().some((one) => one.approvalId === approval.approvalId)) {
        setMode({ type: 'approval', approval, rights });
      }
      throw error;
    }
  }

  async function onPatterns(patterns: string[] | undefined): Promise<void> {
    const approval = answering;
    answering = undefined;
    if (approval === undefined) return;
    if (patterns === undefined || patterns.length === 0) {
      // Back to the choices.
      setMode({ type: 'approval', approval, rights });
      return;
    }
    const edited = JSON.stringify(patterns) !== JSON.stringify(approval.alwaysPatterns);
    answeredHere.add(approval.approvalId);
    try {
      await client.rpc.approvals.approve.mutate({
        sessionId: approval.sessionId,
        approvalId: approval.approvalId,
        scope: 'always',
        ...(edited ? { patterns } : {}),
      });
    } catch (error) {
      // A pattern the server refuses (wider than a destructive command allows, not a pattern): say why, ask again.
      say(style.fail(`! ${showControlCharacters((error as Error).message)}`));
      answering = approval;
      setMode({ type: 'patterns', patterns });
    }
  }

  async function onPick(value: string | undefined): Promise<void> {
    setMode({ type: 'prompt' });
    if (value !== undefined) await resume(value);
  }

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
    const wasBusy = busy;
    busy = true;
    if (!wasBusy) turnStartedAt = Date.now();
    renderLive();
    try {
      const { messageId } = await client.rpc.sessions.prompt.mutate({
        sessionId,
        text,
        ...(model === undefined ? {} : { model }),
        ...(skills === undefined ? {} : { skills }),
      });
      // Its turn may have ended before the answer to the call came.
      if (!endedMessages.has(messageId)) unanswered.add(messageId);
    } catch (error) {
      // Refused (a bad model id, a full queue, a skill just removed): nothing runs, so the prompt is ours again.
      busy = wasBusy;
      renderLive();
      throw error;
    }
  }

  /** `/edit`: the prompt written in the person's editor, put back into the input to review and send. */
  async function editInEditor(): Promise<void> {
    if (!interactive) {
      say('/edit needs a terminal');
      return;
    }
    const editor = process.env.VISUAL || process.env.EDITOR || 'vi';
    const dir = mkdtempSync(join(tmpdir(), 'molf-prompt-'));
    const file = join(dir, 'PROMPT.md');
    try {
      writeFileSync(file, '', { mode: 0o600 });
      // The terminal is the editor's meanwhile; the chat goes on (its server and worker may run in
      // this process) and what it prints is shown when the editor is closed.
      screen.pause();
      input.suspend();
      editing = true;
      let ended: { code: number | null; signal: NodeJS.Signals | null };
      try {
        // The editor command may carry its own flags (`code --wait`), as in git.
        const child = spawn('/bin/sh', ['-c', `${editor} "$1"`, 'molf-edit', file], { stdio: 'inherit' });
        ended = await new Promise((resolve) => {
          child.once('error', () => resolve({ code: 127, signal: null }));
          child.once('close', (code, signal) => resolve({ code, signal }));
        });
      } finally {
        editing = false;
        input.resume();
        screen.resume();
      }
      if (ended.code !== 0) {
        say(style.fail(`! the editor (${editor}) exited with ${ended.code ?? ended.signal}; nothing changed`));
        return;
      }
      input.setPrompt(readFileSync(file, 'utf8').replace(/\n+$/, ''));
    } finally {
      rmSync(dir, { recursive: true, force: true });
      renderLive();
    }
  }

  async function command(line: string): Promise<void> {
    const [name = '', ...rest] = line.trim().split(/\s+/);
    const argument = rest.join(' ');
    switch (name) {
      case '/help':
        say(formatChatHelp());
        return;
      case '/exit':
      case '/quit':
        finish();
        return;
      case '/new':
        await startSession();
        say(`new session ${sessionId}`);
        return;
      case '/sessions': {
        const { sessions, total } = await client.rpc.sessions.list.query({ workerId, topLevel: true, limit: 50 });
        const others = sessions.filter((session) => session.sessionId !== sessionId && session.messageCount > 0);
        if (others.length === 0) {
          say('no other session on this worker');
          return;
        }
        const items = others.map((session) => ({
          value: session.sessionId,
          label: `${session.updatedAt.slice(0, 16).replace('T', ' ')}  ${String(session.messageCount).padStart(4)} msgs  ${showControlCharacters(session.name)}`,
        }));
        if (total > sessions.length)
          say(style.dim(`(the newest ${sessions.length} of ${total}; molf sessions list shows all)`));
        setMode({ type: 'pick', title: 'resume a session', items });
        return;
      }
      case '/session':
        if (argument === '') say('/session <id>: which session? /sessions lists them');
        else await resume(argument);
        return;
      case '/model':
        if (argument !== '') model = argument;
        say(`model: ${model ?? 'the session default or the server default'}`);
        return;
      case '/usage':
        say(
          [
            `last turn: ${lastTurnUsage === undefined ? 'none yet' : formatUsage(lastTurnUsage)}`,
            `session:   ${sessionUsage === undefined ? 'none yet' : formatUsage(sessionUsage)}`,
            ...(sessionUsage !== undefined && sessionUsage.costUsd === undefined
              ? [style.dim('(no price known for this model: set prices in the server config to see costs)')]
              : []),
          ].join('\n'),
        );
        return;
      case '/edit':
        await editInEditor();
        return;
      case '/abort':
        await abortTurn();
        return;
      case '/skills': {
        const skills = (await loadCatalog())?.skills;
        if (skills === undefined) say('the worker reports no skills (it is offline, or older than skills)');
        else if (skills.length === 0) say('no skills on this worker (a skill is .agents/skills/<name>/SKILL.md)');
        else {
          say(
            [
              'skills (/<name> [text] sends text with the skill loaded):',
              ...skills.map((skill) => `  ${formatCatalogEntry(showControlCharactersIn(skill))}`),
            ].join('\n'),
          );
        }
        return;
      }
      case '/agents': {
        const agents = (await loadCatalog())?.agents;
        if (agents === undefined) say('the worker reports no agents (it is offline, or older than agents)');
        else
          say(
            [
              'agents (the model hands them a task with its task tool):',
              ...agents.map((agent) => `  ${formatCatalogEntry(showControlCharactersIn(agent))}`),
            ].join('\n'),
          );
        return;
      }
      default: {
        // The commands above come first: a skill named like one is loaded by the model only.
        const skill = name.slice(1);
        if (await isSkill(skill)) {
          const text = line.trim().slice(name.length).trim();
          await sendPrompt(text === '' ? `Use the ${skill} skill.` : text, [skill]);
          return;
        }
        say(`unknown command ${name}; /help lists them`);
      }
    }
  }

  async function onSubmit(text: string): Promise<void> {
    try {
      await ready.promise;
      if (input.mode().type === 'approval') {
        // On a pipe an approval is answered by a line.
        const approval = waiting()[0];
        const choice = approval === undefined ? undefined : choiceFor(approval, text, rights);
        if (choice === undefined) {
          say(approval === undefined ? '' : `  answer with ${formatChoices(approval, style, rights)}`);
        } else await onAnswer(choice);
        return;
      }
      if (text.trim() === '') return;
      history.add(text);
      if (interactive)
        say(
          `${style.user('›')} ${showControlCharacters(text)
            .split('\n')
            .join(`\n${style.dim('┆')} `)}`,
        );
      if (text.trim().startsWith('/') && !text.trim().includes('\n')) await command(text);
      else await sendPrompt(text);
    } catch (error) {
      say(style.fail(`! ${showControlCharacters((error as Error).message)}`));
    } finally {
      renderLive();
    }
  }

  function finish(): void {
    if (left) return;
    left = true;
    leave.resolve();
  }

  /**
   * After stdin ended on a pipe: leaves once no line is being handled and the turns of the prompts
   * sent from here have ended. An approval nobody can answer from here any more is left waiting for
   * another client.
   */
  function leaveIfDone(): void {
    if (!draining || left || handling.size > 0) return;
    if (waiting().length > 0) {
      say('(stdin ended with an approval waiting: another client can answer it, or molf chat --continue)');
      finish();
      return;
    }
    if (unanswered.size === 0) finish();
  }

  // The session: one named, the last of this directory, or a new one.
  try {
    if (resumed !== undefined) await resume(resumed.sessionId);
    else await startSession();
  } catch (error) {
    input.close();
    process.off('SIGHUP', onHangup);
    process.off('SIGTERM', onHangup);
    throw error;
  }
  // The worker going offline or back, an MCP server down or back: told as it happens.
  let workerSeen: WorkerInfo | undefined;
  const workerWatch = client.rpc.workers.events.subscribe(
    { workerId },
    {
      onData: (event: WorkerEvent) => {
        for (const line of workerChangeNotices(workerSeen, event, style)) say(line);
        workerSeen = event.worker;
        renderLive();
      },
      onError: (error: unknown) =>
        say(style.dim(`(no notices about the worker: ${showControlCharacters((error as Error).message)})`)),
    },
  );
  say(style.dim(`molf chat — session ${sessionId}. /help for commands, Esc interrupts, Ctrl-D leaves.`));
  const problems = await describeProblems(client, { workerId: sessionWorkerId, model }, style);
  for (const line of problems.lines) say(line);
  // The watch's first look is compared with what the notices at start saw.
  workerSeen ??= problems.worker;
  renderLive();
  ready.resolve();

  // A token refused after a server restart: the client has stopped (the line saying so is out).
  void stack.refused.then(() => {
    process.exitCode = 1;
    // The client has stopped: nothing more can be asked of the server, not even to remove the session.
    fresh = undefined;
    finish();
  });
  // Not on a terminal, Ctrl-C arrives as a signal.
  process.on('SIGINT', onInterrupt);
  await leave.promise;
  process.off('SIGINT', onInterrupt);
  process.off('SIGHUP', onHangup);
  process.off('SIGTERM', onHangup);
  clearInterval(spinner);
  workerWatch.unsubscribe();
  follower?.stop();
  input.close();
  screen.close();
  // Leaving aborts nothing: a running turn finishes on the server and is there on the next /session.
  await dropFreshSession();
}
