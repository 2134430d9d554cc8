import type { Approval, SessionEvent } from '@molf/protocol';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { addStackOptions, openStack, sessionWorker } from '../embedded-stack.ts';

type OnAsk = 'deny' | 'allow' | 'fail';
type RunOptions = {
  model?: string;
  onAsk: OnAsk;
  json?: boolean;
  session?: string;
  server?: string;
  token?: string;
  worker?: string;
  dataDir?: string;
  config?: string;
};

/** Exit codes: 0 the turn completed; 1 it failed (error, step limit, loop); 2 an ask under --on-ask fail; 130 interrupted. */
const EXIT = { failed: 1, asked: 2, interrupted: 130 } as const;

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
    .argument('<prompt>', 'what to ask')
    .addOption(new Option('--model <provider/model>', 'model for this prompt').env('MOLF_MODEL'))
    .addOption(
      new Option(
        '--on-ask <policy>',
        "what to answer when the approval gate asks (subagents' calls too): deny, allow or fail (exit 2)",
      )
        .argParser(parseOnAsk)
        .default('deny'),
    )
    .option('--json', 'print one JSON event per line instead of the answer text')
    .option('--session <id>', 'continue this session (default: a new one)');
  addStackOptions(command).action(run);
}

async function run(prompt: string, options: RunOptions): Promise<void> {
  await using stack = await openStack({ ...options, logName: 'run' });
  const { client } = stack;
  let sessionId = options.session;
  if (sessionId === undefined) {
    const workerId = await sessionWorker(stack);
    sessionId = (await client.rpc.sessions.create.mutate({ workerId, name: prompt.slice(0, 60) })).sessionId;
  }
  const id = sessionId;
  const print = (line: string) => process.stdout.write(line);
  let exitCode = 0;
  let wroteText = false;
  /** Set once the prompt is accepted: only that prompt's turn is followed. */
  let ourMessageId: string | undefined;
  let ourTurnId: string | undefined;
  const early: SessionEvent[] = [];
  let settle: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  const ended = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // Handled where it is awaited; this keeps an early failure from counting as unhandled meanwhile.
  ended.catch(() => undefined);
  // A token refused after a server restart: the client has stopped (the line saying so is out),
  // so the turn can't be followed to its end.
  void stack.refused.then(() => {
    exitCode = EXIT.failed;
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
      process.stderr.write(`[approved by --on-ask allow] ${what}\n`);
      void client.rpc.approvals.approve.mutate({ sessionId: askingSession, approvalId, scope: 'once' });
      return;
    }
    if (options.onAsk === 'fail') exitCode = EXIT.asked;
    process.stderr.write(`[denied by --on-ask ${options.onAsk}] ${what}\n`);
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
      process.stderr.write(`[approved by --on-ask allow] ${what}\n`);
      void client.rpc.approvals.approve.mutate({ sessionId: workerSession, approvalId, scope: 'once' });
      return;
    }
    process.stderr.write(`[denied by --on-ask ${options.onAsk}] ${what}\n`);
    void client.rpc.approvals.deny.mutate({ sessionId: workerSession, approvalId });
    if (options.onAsk === 'fail') {
      exitCode = EXIT.asked;
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
    if (event.type === 'turn.started' && event.messageId === ourMessageId) ourTurnId = event.turnId;
    if (event.type === 'session.resync') {
      // The server restarted (or we fell far behind): if the session is idle, our turn is over.
      void client.rpc.sessions.get.query({ sessionId: id }).then(({ session }) => {
        if (session.status === 'idle') {
          process.stderr.write('\nmolf run: the server lost track of this turn (restarted?); see the session\n');
          exitCode = EXIT.failed;
          settle?.resolve();
        }
      }, settle?.reject);
      return;
    }
    // Another client's turn before ours (queued behind it) is not ours to print or answer.
    if (ourTurnId === undefined) return;
    if (options.json === true) print(`${JSON.stringify(event)}\n`);
    switch (event.type) {
      case 'message.delta':
        if (event.turnId === ourTurnId && options.json !== true) {
          print(event.text);
          wroteText = true;
        }
        break;
      case 'tool-call.started':
        if (options.json !== true)
          process.stderr.write(`\n[${event.toolName}] ${JSON.stringify(event.args).slice(0, 200)}\n`);
        break;
      case 'approval.requested':
        // One turn runs at a time: an approval asked during our turn belongs to it.
        answer(event.approval);
        break;
      case 'subagent.event':
        // A subagent of our turn: its tool calls tagged with its agent; its question is ours to
        // answer too (unanswered, it would hold the turn until the task's time limit).
        if (event.event.type === 'tool-call.started' && options.json !== true) {
          process.stderr.write(
            `\n[${event.agent} › ${event.event.toolName}] ${JSON.stringify(event.event.args).slice(0, 200)}\n`,
          );
        }
        if (event.event.type === 'approval.requested') answer(event.event.approval);
        break;
      case 'error':
        process.stderr.write(`\nmolf run: ${event.message} (${event.code})\n`);
        break;
      case 'turn.ended':
        if (event.turnId !== ourTurnId) break;
        if (event.reason !== 'completed' && exitCode === 0) {
          exitCode = event.reason === 'aborted' ? EXIT.interrupted : EXIT.failed;
        }
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
        onError: (error: unknown) => {
          failed(error);
          settle?.reject(error);
        },
      },
    );
    const stop = () => subscription.unsubscribe();
    ended.then(stop, stop);
  });

  const interrupt = () => {
    process.stderr.write('\ninterrupted: aborting the turn\n');
    void client.rpc.sessions.abort.mutate({ sessionId: id });
  };
  process.once('SIGINT', interrupt);
  try {
    const accepted = await client.rpc.sessions.prompt.mutate({
      sessionId: id,
      text: prompt,
      ...(options.model === undefined ? {} : { model: options.model }),
    });
    ourMessageId = accepted.messageId;
    for (const event of early.splice(0)) handle(event);
    await ended;
  } finally {
    process.off('SIGINT', interrupt);
    serverStarts?.unsubscribe();
  }
  if (wroteText) print('\n');
  if (options.json !== true) process.stderr.write(`session: ${id}\n`);
  process.exitCode = exitCode;
}
