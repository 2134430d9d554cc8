import { randomUUID } from 'node:crypto';
import { isMolfError, MolfError, type OwnSessionEvent, type WorkerId } from '@molf/protocol';
import type { UnattendedAsk } from '../approvals/approval-gate.ts';
import type { AgentProfile } from './agent-profiles.ts';
import { runTurn, type TurnEndReason } from './run-turn.ts';
import { setSessionStatus } from './set-session-status.ts';
import type { TurnLimits, TurnServices } from './turn-services.ts';

export type SubagentRun = {
  /** The parent's session and its `task` call. */
  parentSessionId: string;
  toolCallId: string;
  workerId: WorkerId;
  agent: AgentProfile;
  /** A few words for the child session's name. */
  description: string;
  prompt: string;
  /** The agent's model, else this (the parent turn's). */
  modelId: string | undefined;
  /** The parent's abort, and the task's time limit. */
  signal: AbortSignal;
  /** Told the child session's id once it exists. */
  onStarted?: ((childSessionId: string) => void) | undefined;
  /** The parent turn's unattended ask policy (a cron run's): the child's asks follow it too. */
  unattended?: UnattendedAsk | undefined;
};

export type SubagentOutcome = {
  childSessionId: string;
  reason: TurnEndReason;
  /** The child's last answer (what it had, when it stopped early). */
  text: string;
  /** What the child's stream reported as its last error. */
  error: string | undefined;
};

const MAX_NAME = 200;

/**
 * Runs a subagent: a child session of its own (persisted, listed with its parent), one turn in it
 * with the agent's prompt, tools, rules and model, its every event shown in the parent's stream
 * wrapped with the child's id. The turn is the same `runTurn` a session's prompt gets, running
 * inside the parent's tool call.
 */
export async function runSubagent(
  services: TurnServices,
  limits: TurnLimits,
  run: SubagentRun,
): Promise<SubagentOutcome> {
  const { store, events, logger } = services;
  const child = await store.create({
    workerId: run.workerId,
    name: `${run.agent.name}: ${run.description}`.slice(0, MAX_NAME),
    parent: { sessionId: run.parentSessionId, toolCallId: run.toolCallId, agent: run.agent.name },
    ...(run.agent.model === undefined ? {} : { model: run.agent.model }),
  });
  const childSessionId = child.sessionId;
  run.onStarted?.(childSessionId);
  let error: string | undefined;
  const stopForwarding = events.observe(childSessionId, (event) => {
    if (event.type === 'error') error = event.message;
    if (event.type === 'subagent.event') return; // no nesting: a child has no task tool
    events.publish(run.parentSessionId, {
      type: 'subagent.event',
      toolCallId: run.toolCallId,
      agent: run.agent.name,
      childSessionId,
      event: event as OwnSessionEvent,
    });
  });
  const setStatus = (status: 'busy' | 'idle') => setSessionStatus(services, childSessionId, status);
  let reason: TurnEndReason = 'error';
  try {
    void setStatus('busy');
    const messageId = randomUUID();
    await store.append(childSessionId, { id: messageId, at: new Date().toISOString(), role: 'user', text: run.prompt });
    reason = await runTurn(services, limits, {
      sessionId: childSessionId,
      messageId,
      prompt: run.prompt,
      model: run.agent.model ?? run.modelId,
      signal: run.signal,
      agent: { profile: run.agent, parentSessionId: run.parentSessionId },
      ...(run.unattended === undefined ? {} : { unattended: run.unattended }),
    });
    const history = await store.messages(childSessionId);
    const answers = history.filter((message) => message.role === 'assistant' && message.text.trim() !== '');
    const last = answers.at(-1);
    return { childSessionId, reason, text: last?.role === 'assistant' ? last.text : '', error };
  } catch (failure) {
    if (isMolfError(failure)) throw failure;
    throw new MolfError('internal', `the ${run.agent.name} subagent failed: ${(failure as Error).message}`, {
      cause: failure,
    });
  } finally {
    void setStatus('idle');
    stopForwarding();
    await store.idle(childSessionId).catch((failure: unknown) => {
      logger.warn({ err: failure, sessionId: childSessionId }, 'cannot let go of the subagent session');
    });
  }
}
