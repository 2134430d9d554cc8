import { type Approval, ErrorDataSchema, isMolfError, type SessionEvent, type WorkerId } from '@molf/protocol';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { assertMayPrompt } from '../assert-may-prompt.ts';
import { addStackOptions, openStack, type Stack, sessionWorker } from '../embedded-stack.ts';
import { USAGE_EXIT_CODE } from '../exit-codes.ts';
import { composeRunPrompt } from '../run/compose-run-prompt.ts';
import { readPipedStdin } from '../run/read-piped-stdin.ts';
import { RUN_EXIT_CODES, type RunExitReason } from '../run/run-exit.ts';
import { createRunRecorder, type RunRecorder } from '../run/run-recorder.ts';
import { findSessionToContinue } from '../sessions/find-session-to-continue.ts';
import { createFirstPromptSession, type FirstPromptSession } from '../sessions/first-prompt-session.ts';
import { showControlCharacters } from '../terminal/show-control-characters.ts';

type OnAsk = 'deny' | 'allow' | 'fail';
type RunOptions = {
  model?: string;
  onAsk: OnAsk;
  json?: boolean;
  quiet?: boolean;
  session?: string;
  continue?: boolean;
  server?: string;
  token?: string;
  worker?: string;
  dataDir?: string;
  config?: string;
};

type TurnEnd = Extract<SessionEvent, { type: 'turn.ended' }>['reason'];

function parseOnAsk(value: string): OnAsk {
  if (value !== 'deny' && value !== 'allow' && value !== 'fail') {
    throw new InvalidArgumentError('use deny, allow or fail');
  }
  return value;
}

export function registerRunCommand(program: Command): void {
  const command = program
    .command('run')
    .description(
      'run one prompt headless and stream the answer (for scripts and CI); without --server it starts a ' +
        'server and a worker on the current directory for the run',
    )
    .argument('[prompt]', 'what to ask (default: piped stdin); with a prompt, piped stdin is added as context')
    .addOption(new Option('--model <provider/model>', 'model for this prompt').env('MOLF_MODEL'))
    .addOption(
      new Option(
        '--on-ask <policy>',
        "what to answer when the approval gate asks (subagents' calls too): deny, allow or fail (exit 2)",
      )
        .argParser(parseOnAsk)
        .default('deny'),
    )
    .option('--json', 'print one JSON event per line, then one result object (answer, tool calls, usage, exit)')
    .addOption(
      new Option('-q, --quiet', 'print only the answer (the last assistant message); stderr only for errors').conflicts(
        'json',
      ),
    )
    .addOption(new Option('--session <id>', 'continue this session (default: a new one)').conflicts('continue'))
    .option('-c, --continue', 'continue the last active session of this directory');
  addStackOptions(command).action(run);
}

/**
 * Text for `stream`: on a terminal, the control characters of what the model, a tool or the server
 * wrote are shown as text (an escape sequence could set the title, write the clipboard, hide text);
 * a pipe gets it as it is, for the script reading it.
 */
function forStream(stream: NodeJS.WriteStream, text: string): string {
  return stream.isTTY === true ? showControlCharacters(text) : text;
}

/** What the run writes, by mode: the answer or events on stdout, notes and errors on stderr. */
function createRunOutput(options: RunOptions) {
  const quiet = options.quiet === true;
  const json = options.json === true;
  return {
    json,
    quiet,
    /** Streamed answer text (plain mode only). */
    text: (text: string) => {
      if (!json && !quiet) process.stdout.write(forStream(process.stdout, text));
    },
    /** The answer alone (--quiet). */
    answer: (text: string) => process.stdout.write(forStream(process.stdout, text)),
    event: (event: SessionEvent) => {
      if (json) process.stdout.write(`${JSON.stringify(event)}\n`);
    },
    /** A line for the person watching (tool calls, approvals answered, the session id); not with --quiet. */
    note: (line: string) => {
      if (!quiet) process.stderr.write(forStream(process.stderr, line));
    },
    error: (line: string) => process.stderr.write(forStream(process.stderr, line)),
  };
}
type RunOutput = ReturnType<typeof createRunOutput>;

/** The error's code and message for the result object: a MolfError's, an RPC error's, else `internal`. */
function describeError(error: unknown): { code: string; message: string } {
  if (isMolfError(error)) return { code: error.code, message: error.message };
  const data = ErrorDataSchema.safeParse((error as { data?: unknown } | undefined)?.data);
  return { code: data.success ? data.data.code : 'internal', message: (error as Error).message };
}

async function run(promptArgument: string | undefined, options: RunOptions, command: Command): Promise<void> {
  const piped = await readPipedStdin();
  if (piped.type === 'too_large') {
    command.error(
      `molf run: stdin is larger than ${piped.limitBytes.toLocaleString('en')} bytes, more than molf run takes: ` +
        'pipe a part of it, or name the file in the prompt for the agent to read',
      { exitCode: USAGE_EXIT_CODE },
    );
  }
  if (piped.type === 'binary')
    command.error('molf run: stdin holds binary data (a NUL byte): pipe text', { exitCode: USAGE_EXIT_CODE });
  const composed = composeRunPrompt({ prompt: promptArgument, stdin: piped.type === 'text' ? piped.text : undefined });
  if (!composed.ok) command.error(`molf run: ${composed.error}`, { exitCode: USAGE_EXIT_CODE });

  const output = createRunOutput(options);
  const recorder = createRunRecorder();
  /** The session the prompt went into, once known; null once removed. */
  let sessionId: string | null = null;
  try {
    await using stack = await openStack({ ...options, logName: 'run', quiet: output.quiet });
    assertMayPrompt(stack.role);
    let created: FirstPromptSession | undefined;
    if (options.session !== undefined) {
      sessionId = (await stack.client.rpc.sessions.info.query({ sessionId: options.session })).sessionId;
    } else if (options.continue === true) {
      sessionId = (
        await findSessionToContinue({ client: stack.client, workerId: stack.workerId, directory: process.cwd() })
      ).sessionId;
    } else {
      created = await createFirstPromptSession(stack.client, { workerId: (await sessionWorker(stack)) as WorkerId });
      sessionId = created.sessionId;
    }
    const ended = await runTurn({ stack, sessionId, prompt: composed.value, options, output, recorder, created });
    if (ended.removedNote !== undefined) sessionId = null;
    finish({ output, recorder, sessionId, exitReason: ended.exitReason, error: ended.error });
  } catch (error) {
    // Refused before the turn (no server, no such session, no worker): main tells the error itself.
    if (output.json) {
      const result = recorder.toResult({ sessionId, exitReason: 'error', error: describeError(error) });
      process.stdout.write(`${JSON.stringify(result)}\n`);
    }
    throw error;
  }
}

function finish(options: {
  output: RunOutput;
  recorder: RunRecorder;
  sessionId: string | null;
  exitReason: RunExitReason;
  error: { code: string; message: string } | undefined;
}): void {
  const { output, recorder, sessionId, exitReason } = options;
  if (output.json) {
    const result = recorder.toResult({ sessionId, exitReason, error: options.error });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else if (output.quiet) {
    const answer = recorder.answer();
    if (answer !== '') output.answer(answer.endsWith('\n') ? answer : `${answer}\n`);
  }
  if (sessionId !== null && !output.json) output.note(`session: ${sessionId}\n`);
  process.exitCode = RUN_EXIT_CODES[exitReason];
}

/** How the prompt's turn ended, as the run reports it. */
type TurnOutcome = {
  exitReason: RunExitReason;
  error: { code: string; message: string } | undefined;
  /** Set when the session made for the prompt was removed (the prompt never reached the model). */
  removedNote: string | undefined;
};

/**
 * Sends the prompt into the session and follows its turn to the end: prints it by the output mode,
 * records it for the result, answers the approvals of the turn by `--on-ask`. Another client's turn
 * (before ours, queued) is not followed.
 */
async function runTurn(context: {
  stack: Stack;
  sessionId: string;
  prompt: string;
  options: RunOptions;
  output: RunOutput;
  recorder: RunRecorder;
  created: FirstPromptSession | undefined;
}): Promise<TurnOutcome> {
  const { stack, sessionId: id, options, output, recorder, created } = context;
  const { client } = stack;
  let exitReason: RunExitReason | undefined;
  let error: { code: string; message: string } | undefined;
  let turnEnd: TurnEnd | undefined;
  /** Set once the prompt is accepted: only that prompt's turn is followed. */
  let ourMessageId: string | undefined;
  let ourTurnId: string | undefined;
  /** Whether the assistant message being streamed has printed text. */
  let openText = false;
  /** Whether the turn's messages so far printed text (the next message's starts after a blank line). */
  let printedText = false;
  /** Whether the last answer text printed left its line unfinished. */
  let lineOpen = false;
  const early: SessionEvent[] = [];
  let settle: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  const ended = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // Handled where it is awaited; this keeps an early failure from counting as unhandled meanwhile.
  ended.catch(() => undefined);
  const fail = (reason: { code: string; message: string }) => {
    exitReason ??= 'error';
    error ??= reason;
  };
  // A token refused after a server restart: the client has stopped (the line saying so is out,
  // except with --quiet), so the turn can't be followed to its end.
  void stack.refused.then((refusal) => {
    if (output.quiet) output.error(`molf: ${refusal.message}\n`);
    fail({ code: refusal.code, message: refusal.message });
    settle?.resolve();
  });

  /**
   * Answers an approval of our turn by --on-ask: the session's own, or a subagent's (whose session
   * id is the child's: the answer must name it).
   */
  const answer = (approval: Approval) => {
    const { approvalId, sessionId: askingSession } = approval;
    const who = approval.subagent === undefined ? '' : `${approval.subagent.agent} › `;
    const what = `${who}${approval.tool}: ${approval.subjects.map((subject) => subject.label).join('; ')}`;
    if (options.onAsk === 'allow') {
      output.note(`[approved by --on-ask allow] ${what}\n`);
      void client.rpc.approvals.approve.mutate({ sessionId: askingSession, approvalId, scope: 'once' });
      return;
    }
    if (options.onAsk === 'fail') {
      exitReason ??= 'denied';
      output.error(`[denied by --on-ask fail] ${what}\n`);
    } else output.note(`[denied by --on-ask ${options.onAsk}] ${what}\n`);
    void client.rpc.approvals.deny.mutate({
      sessionId: askingSession,
      approvalId,
      feedback: `denied: molf run answers every approval with "${options.onAsk}" (no person is watching)`,
    });
    // Aborting our turn also stops the subagent that asked.
    if (options.onAsk === 'fail') void client.rpc.sessions.abort.mutate({ sessionId: id });
  };

  /** The start of a server new or changed in .mcp.json: a question of the worker, outside the session. */
  const answerServerStart = (approval: Approval) => {
    const { approvalId, sessionId: workerSession } = approval;
    const what = `MCP server ${approval.subjects[0]?.label ?? String(approval.args.name)}`;
    if (options.onAsk === 'allow') {
      output.note(`[approved by --on-ask allow] ${what}\n`);
      void client.rpc.approvals.approve.mutate({ sessionId: workerSession, approvalId, scope: 'once' });
      return;
    }
    if (options.onAsk === 'fail') output.error(`[denied by --on-ask fail] ${what}\n`);
    else output.note(`[denied by --on-ask ${options.onAsk}] ${what}\n`);
    void client.rpc.approvals.deny.mutate({ sessionId: workerSession, approvalId });
    if (options.onAsk === 'fail') {
      exitReason ??= 'denied';
      void client.rpc.sessions.abort.mutate({ sessionId: id });
    }
  };
  // Only when the worker is this run's own (embedded) does --on-ask answer its server starts too;
  // a server's workers (--server, or a live `molf up`) belong to the people watching that server.
  const serverStarts =
    stack.ownWorker && stack.workerId !== undefined
      ? client.rpc.approvals.events.subscribe(
          { workerId: stack.workerId },
          {
            onData: (event) => {
              if (event.type === 'approval.requested' && event.approval.kind === 'mcp_server') {
                answerServerStart(event.approval);
              }
            },
          },
        )
      : undefined;

  let finished = false;
  function handle(event: SessionEvent): void {
    // Nothing after our turn's end is ours (the next status, another client's turn).
    if (finished) return;
    if (event.type === 'turn.started' && event.messageId === ourMessageId) {
      if (ourTurnId !== undefined && ourTurnId !== event.turnId) {
        // Our turn was cut off (its server died, or lost the session) and runs again from the
        // start: what stopped it is past, and its text starts a paragraph of its own.
        error = undefined;
        openText = false;
        output.note('\n[the turn runs again]\n');
      }
      ourTurnId = event.turnId;
    }
    if (event.type === 'session.resync') {
      // The server restarted (or we fell far behind): if the session is idle, our turn is over.
      void client.rpc.sessions.get.query({ sessionId: id, limit: 1 }).then(({ session }) => {
        if (session.status === 'idle') {
          const message = 'the server lost track of this turn (restarted?); see the session';
          output.error(`\nmolf run: ${message}\n`);
          fail({ code: 'internal', message });
          settle?.resolve();
        }
      }, settle?.reject);
      return;
    }
    // Another client's turn before ours (queued behind it) is not ours to print or answer.
    if (ourTurnId === undefined) return;
    output.event(event);
    created?.observe(event);
    recorder.observe(event);
    switch (event.type) {
      case 'message.delta':
        if (event.turnId === ourTurnId) {
          // Each message of the turn starts a paragraph of its own.
          if (!openText && printedText) output.text('\n\n');
          output.text(event.text);
          if (event.text !== '') lineOpen = !event.text.endsWith('\n');
          openText = true;
          printedText = true;
        }
        break;
      case 'message.completed':
        if (openText && event.message.role === 'assistant') openText = false;
        break;
      case 'tool-call.started':
        if (!output.json) output.note(`\n[${event.toolName}] ${JSON.stringify(event.args).slice(0, 200)}\n`);
        break;
      case 'approval.requested':
        // One turn runs at a time: an approval asked during our turn belongs to it.
        answer(event.approval);
        break;
      case 'subagent.event':
        // A subagent of our turn: its tool calls tagged with its agent; its question is ours to
        // answer too (unanswered, it would hold the turn until the task's time limit).
        if (event.event.type === 'tool-call.started' && !output.json) {
          output.note(
            `\n[${event.agent} › ${event.event.toolName}] ${JSON.stringify(event.event.args).slice(0, 200)}\n`,
          );
        }
        if (event.event.type === 'approval.requested') answer(event.event.approval);
        break;
      case 'error':
        output.error(`\nmolf run: ${event.message} (${event.code})\n`);
        if (error === undefined) error = { code: String(event.code), message: event.message };
        break;
      case 'turn.ended':
        if (event.turnId !== ourTurnId) break;
        turnEnd = event.reason;
        finished = true;
        settle?.resolve();
        break;
      default:
        break;
    }
  }

  await new Promise<void>((started, failed) => {
    const subscription = client.rpc.sessions.events.subscribe(
      { sessionId: id, fromNow: true },
      {
        onStarted: () => started(),
        onData: ({ data: event }: { data: SessionEvent }) => {
          if (ourMessageId === undefined) early.push(event);
          else handle(event);
        },
        onError: (subscriptionError: unknown) => {
          failed(subscriptionError);
          settle?.reject(subscriptionError);
        },
      },
    );
    const stop = () => subscription.unsubscribe();
    ended.then(stop, stop);
  });

  const interrupt = () => {
    output.error('\ninterrupted: aborting the turn\n');
    void client.rpc.sessions.abort.mutate({ sessionId: id });
  };
  process.once('SIGINT', interrupt);
  let removedNote: string | undefined;
  try {
    let accepted: { messageId: string };
    try {
      accepted = await client.rpc.sessions.prompt.mutate({
        sessionId: id,
        text: context.prompt,
        ...(options.model === undefined ? {} : { model: options.model }),
      });
    } catch (refusal) {
      // Refused before any turn (a bad model id, a full queue): a session made for it goes again.
      const settled = await created?.settle({ type: 'refused' });
      const described = describeError(refusal);
      const note = settled?.removed === true ? ` (${settled.removedNote})` : '';
      output.error(`molf run: ${described.message}${note}\n`);
      if (settled?.removed === false && settled.failure !== undefined) output.error(`molf run: ${settled.failure}\n`);
      return {
        exitReason: 'error',
        error: described,
        removedNote: settled?.removed === true ? settled.removedNote : undefined,
      };
    }
    ourMessageId = accepted.messageId;
    for (const event of early.splice(0)) handle(event);
    await ended;
  } finally {
    process.off('SIGINT', interrupt);
    serverStarts?.unsubscribe();
  }
  // The answer's last line is ended, so that the session line and the shell's prompt start lines of their own.
  if (lineOpen) output.text('\n');
  if (turnEnd !== undefined) {
    exitReason ??= turnEnd;
    if (turnEnd === 'error') error ??= { code: 'internal', message: 'the turn ended in an error' };
    const settled = await created?.settle({ type: 'ended', reason: turnEnd });
    if (settled?.removed === true) {
      removedNote = settled.removedNote;
      output.error(`molf run: ${removedNote}\n`);
    } else if (settled?.failure !== undefined) output.error(`molf run: ${settled.failure}\n`);
  }
  return { exitReason: exitReason ?? 'error', error, removedNote };
}
