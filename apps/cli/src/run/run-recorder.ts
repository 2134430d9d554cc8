import { addCallUsage, emptyUsageTotals, type SessionEvent, type UsageTotals } from '@molf/protocol';
import { type ToolCallOutcome, toolCallOutcome } from '../sessions/tool-call-outcome.ts';
import { RUN_EXIT_CODES, type RunExitReason } from './run-exit.ts';

/** One tool call of the run's turn, and how it ended. */
export type RunToolCall = {
  name: string;
  args: Record<string, unknown>;
  /** `denied`: the approval gate (a rule or `--on-ask`) refused it; `cancelled`: the turn ended first. */
  outcome: ToolCallOutcome;
  /** Why it failed, as the model was told. */
  error?: string;
};

/** The last line of `molf run --json`: what scripts read instead of the events. */
export type RunResult = {
  type: 'result';
  /** The session the prompt went into; null when none is left (it was removed, or none was made). */
  sessionId: string | null;
  /** The text of the turn's last assistant message (what `--quiet` prints). */
  answer: string;
  toolCalls: RunToolCall[];
  /**
   * The turn's model calls, its subagents' included (as `turn.ended` counts them; the turn's own
   * answers' when the server is older): tokens, and `costUsd` where the provider or the server's
   * prices tell it.
   */
  usage: UsageTotals;
  exitReason: RunExitReason;
  exitCode: number;
  /** Set when the run failed: the error's code and message. */
  error?: { code: string; message: string };
};

/** Collects what the result tells from the events of one turn. */
export type RunRecorder = {
  /** An event of the run's own turn (the caller leaves out everything else). */
  observe(event: SessionEvent): void;
  /** The text of the turn's last assistant message so far. */
  answer(): string;
  toResult(end: {
    sessionId: string | null;
    exitReason: RunExitReason;
    error?: { code: string; message: string } | undefined;
  }): RunResult;
};

export function createRunRecorder(): RunRecorder {
  const calls = new Map<string, RunToolCall>();
  let answer = '';
  let usage = emptyUsageTotals();
  let turnUsage: UsageTotals | undefined;
  return {
    observe(event) {
      switch (event.type) {
        case 'tool-call.started':
          // Until it ends it counts as cancelled: a turn cut short reports no end for its calls.
          calls.set(event.toolCallId, { name: event.toolName, args: event.args, outcome: 'cancelled' });
          break;
        case 'tool-call.ended': {
          const call = calls.get(event.toolCallId) ?? { name: event.toolName, args: {}, outcome: 'cancelled' };
          call.outcome = toolCallOutcome(event);
          if (event.error !== undefined) call.error = event.error;
          calls.set(event.toolCallId, call);
          break;
        }
        case 'message.completed': {
          const { message } = event;
          if (message.role !== 'assistant') break;
          answer = message.text;
          usage = addCallUsage(usage, message.usage);
          break;
        }
        case 'turn.ended':
          turnUsage = event.usage;
          break;
        default:
          break;
      }
    },
    answer: () => answer,
    toResult({ sessionId, exitReason, error }) {
      return {
        type: 'result',
        sessionId,
        answer,
        toolCalls: [...calls.values()],
        usage: turnUsage ?? usage,
        exitReason,
        exitCode: RUN_EXIT_CODES[exitReason],
        ...(error === undefined ? {} : { error }),
      };
    },
  };
}
