import { randomUUID } from 'node:crypto';
import type { SessionMessage, StoredAttachment, ToolCallId, ToolResult, WorkerId } from '@molf/protocol';
import type { RepeatCallWatch } from './repeat-call-watch.ts';
import type { ModelToolCall } from './run-model-step.ts';
import type { TurnRequest } from './run-turn.ts';
import { storeToolResult } from './store-tool-result.ts';
import type { TurnServices } from './turn-services.ts';

export type StepToolCalls = {
  sessionId: string;
  turnId: string;
  workerId: WorkerId;
  /** The model step's assistant message (its id). */
  stepId: string;
  calls: readonly ModelToolCall[];
  /** The turn's history; each result is appended as it is stored. */
  history: SessionMessage[];
  watch: RepeatCallWatch;
  /** Instruction files already shown in this session; nested ones are shown once. */
  shownInstructions: Set<string>;
  /** The turn's model, for server tools that run one (task). */
  modelId: string;
  /** Set when a subagent makes the calls: the gate applies its tools and rules. */
  agent: TurnRequest['agent'];
  /** Set in a cron job's run: what an ask does when nobody answers. */
  unattended: TurnRequest['unattended'];
  signal: AbortSignal;
  /**
   * Set when the calls were made by a run of the turn that was cut off (its server died): a call
   * that reached a worker is not asked again, its outcome is waited for; the others run now.
   */
  reattach?: boolean;
};

/** A tool call's input when it is a JSON object (what every tool takes); undefined otherwise. */
export function toArgs(input: unknown): Record<string, unknown> | undefined {
  return typeof input === 'object' && input !== null && !Array.isArray(input)
    ? (input as Record<string, unknown>)
    : undefined;
}

/**
 * Runs the tool calls of one model step in parallel, each through the gate, and stores every
 * result as it arrives. The repeat-call watch judges them in call order: the third identical call
 * in a row gets a warning with its result; a call that repeats it again is not run.
 * Returns whether the watch stopped the turn.
 */
export async function runStepToolCalls(services: TurnServices, step: StepToolCalls): Promise<{ stopped: boolean }> {
  const { events } = services;
  const { sessionId, turnId, signal } = step;
  const verdicts = step.calls.map((call) => step.watch.observe(call.toolName, call.input));
  await Promise.all(
    step.calls.map(async (call, index) => {
      const verdict = verdicts[index];
      const args = toArgs(call.input);
      const kept =
        step.reattach === true
          ? await services.toolCalls.reattach({
              sessionId,
              step: { stepId: step.stepId, sessionToolCallId: call.toolCallId },
              signal,
            })
          : undefined;
      // A call found again was announced when it started.
      if (kept === undefined) {
        events.publish(sessionId, {
          type: 'tool-call.started',
          turnId,
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          args: args ?? {},
        });
      }
      let toolResult: ToolResult =
        kept !== undefined
          ? kept
          : verdict === 'stop'
            ? {
                output: '',
                error: 'Not run: the same call was repeated again after a warning; the turn ends here.',
                meta: { errorKind: 'cancelled' },
              }
            : args === undefined
              ? { output: '', error: 'The arguments must be a JSON object.', meta: { errorKind: 'invalid_arguments' } }
              : await services.toolCalls.run({
                  sessionId,
                  workerId: step.workerId,
                  tool: call.toolName,
                  args,
                  // Our own id: providers may reuse theirs across turns.
                  toolCallId: `tc_${randomUUID()}` as ToolCallId,
                  sessionToolCallId: call.toolCallId,
                  stepId: step.stepId,
                  modelId: step.modelId,
                  ...(step.agent === undefined
                    ? {}
                    : {
                        agent: {
                          name: step.agent.profile.name,
                          rules: step.agent.profile.rules,
                          tools: step.agent.profile.tools,
                          parentSessionId: step.agent.parentSessionId,
                        },
                      }),
                  ...(step.unattended === undefined ? {} : { unattended: step.unattended }),
                  signal,
                });
      if (call.toolName === 'read_file' && toolResult.error === undefined && typeof args?.path === 'string') {
        toolResult = await withNestedInstructions(services, step, { result: toolResult, path: args.path });
      }
      if (verdict === 'warn') {
        toolResult = {
          ...toolResult,
          output: `${toolResult.output}\n\n[Molf: this is the third identical ${call.toolName} call in a row. You appear to be repeating the same action; try a different approach.]`,
        };
      }
      const { attachments, notes } = await storeAttachments(services, sessionId, toolResult);
      if (notes.length > 0) toolResult = { ...toolResult, output: [toolResult.output, ...notes].join('\n') };
      await storeToolResult(services, {
        sessionId,
        turnId,
        history: step.history,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        result: toolResult,
        attachments,
      });
    }),
  );
  return { stopped: verdicts.includes('stop') };
}

/** Keeps a result's attachments beside the history (by content hash), not inside it. */
async function storeAttachments(
  services: TurnServices,
  sessionId: string,
  result: ToolResult,
): Promise<{ attachments: StoredAttachment[]; notes: string[] }> {
  const attachments: StoredAttachment[] = [];
  const notes: string[] = [];
  for (const attachment of result.attachments ?? []) {
    try {
      const sha256 = await services.store.putAttachment(sessionId, Buffer.from(attachment.data, 'base64'));
      attachments.push({
        sha256,
        mimeType: attachment.mimeType,
        size: attachment.size,
        ...(attachment.path === undefined ? {} : { path: attachment.path }),
      });
    } catch (error) {
      services.logger.error({ err: error, sessionId }, 'cannot store a tool attachment');
      notes.push(`[Molf: an attachment (${attachment.mimeType}) could not be stored and is not shown.]`);
    }
  }
  return { attachments, notes };
}

/** The instructions of the directories a read file lives in, each shown once per session, after its text. */
async function withNestedInstructions(
  services: TurnServices,
  step: StepToolCalls,
  read: { result: ToolResult; path: string },
): Promise<ToolResult> {
  const nested = (await services.instructions.read(step.workerId, { forPath: read.path, signal: step.signal })).filter(
    (file) => !step.shownInstructions.has(file.path),
  );
  for (const file of nested) step.shownInstructions.add(file.path);
  if (nested.length === 0) return read.result;
  const notes = nested.map((file) => `[Instructions from ${file.path}]\n${file.text}`).join('\n\n');
  return { ...read.result, output: `${read.result.output}\n\n${notes}` };
}
