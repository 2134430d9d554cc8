import type { LanguageModel, ModelMessage, ToolSet } from 'ai';
import {
  asLanguageModelUsage,
  convertToLanguageModelPrompt,
  prepareRetries,
  prepareTools,
  resolveLanguageModel,
  standardizePrompt,
} from 'ai/internal';
import { type ReportedUsage, toReportedUsage } from '../providers/to-call-usage.ts';

/** A tool call as the model made it; `input` is whatever the model sent. */
export type ModelToolCall = { toolCallId: string; toolName: string; input: unknown };

export type ModelStepRequest = {
  model: LanguageModel;
  system: string;
  messages: ModelMessage[];
  tools: ToolSet;
  signal: AbortSignal;
  /**
   * A stream that sends nothing for this long fails (a stalled provider); the first chunk may take
   * five times as long (a local model loading).
   */
  streamIdleTimeoutMs: number;
  /** Each piece of text as it streams in. */
  onTextDelta(text: string): void;
};

/** How a model step ended: the model finished, the turn was aborted, or the model call failed. */
export type ModelStepEnd = { type: 'finished' } | { type: 'aborted' } | { type: 'failed'; error: unknown };

/** What one model step produced, also when it ended early (text and calls that came before). */
export type ModelStepOutcome = {
  text: string;
  toolCalls: ModelToolCall[];
  finishReason: string | undefined;
  /** Absent when the stream ended before the provider reported usage. */
  usage: ReportedUsage | undefined;
  end: ModelStepEnd;
};

/**
 * One model step: one request to the model, streamed. It neither stores nor runs anything; the
 * turn decides what the outcome means.
 *
 * It reads the provider's own stream (`doStream`) and prepares the request with the AI SDK's prompt,
 * tool and retry functions, as `streamText` does, without `streamText`'s further stream stages (tool
 * call transforms, step bookkeeping, teeing), which a step that runs no tools itself does not need:
 * they cost 2.5 ms of server CPU per turn and 0.016 ms per chunk (docs/benchmarks.md, events).
 */
export async function runModelStep(request: ModelStepRequest): Promise<ModelStepOutcome> {
  const { signal, streamIdleTimeoutMs } = request;
  let text = '';
  const toolCalls: ModelToolCall[] = [];
  let failure: unknown;
  let finishReason: string | undefined;
  let usage: ModelStepOutcome['usage'];

  // A stalled provider: nothing for `streamIdleTimeoutMs` (five times that before the first part).
  const stall = new AbortController();
  let stallTimer: NodeJS.Timeout | undefined;
  const awaitNextPart = (ms: number) => {
    clearTimeout(stallTimer);
    stallTimer = setTimeout(() => stall.abort(), ms);
  };
  const abortSignal = AbortSignal.any([signal, stall.signal]);
  awaitNextPart(streamIdleTimeoutMs * 5);
  try {
    const model = resolveLanguageModel(request.model);
    const prompt = await standardizePrompt({ system: request.system, messages: request.messages });
    const { retry } = prepareRetries({ maxRetries: 1, abortSignal });
    const tools = await prepareTools({ tools: request.tools });
    const languageModelPrompt = await convertToLanguageModelPrompt({
      prompt,
      supportedUrls: await model.supportedUrls,
      download: undefined,
      abortSignal,
      provider: model.provider.split('.')[0],
    });
    const { stream } = await retry(() =>
      model.doStream({
        prompt: languageModelPrompt,
        ...(tools === undefined ? {} : { tools, toolChoice: { type: 'auto' as const } }),
        abortSignal,
      }),
    );
    const reader = stream.getReader();
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      awaitNextPart(streamIdleTimeoutMs);
      switch (part.type) {
        case 'text-delta':
          text += part.delta;
          request.onTextDelta(part.delta);
          break;
        case 'tool-call':
          toolCalls.push({ toolCallId: part.toolCallId, toolName: part.toolName, input: parseToolInput(part.input) });
          break;
        case 'finish':
          finishReason = part.finishReason.unified;
          usage = toReportedUsage(asLanguageModelUsage(part.usage));
          break;
        case 'error':
          failure ??= part.error;
          break;
        default:
          break;
      }
    }
  } catch (error) {
    // A connection broken mid-stream, a refused request or a stall surfaces here as a thrown error.
    if (!signal.aborted) {
      failure ??= stall.signal.aborted
        ? new Error(`the model stream stalled: nothing arrived for ${Math.round(streamIdleTimeoutMs / 1000)} s`)
        : error;
    }
  } finally {
    clearTimeout(stallTimer);
  }
  const end: ModelStepEnd = signal.aborted
    ? { type: 'aborted' }
    : failure === undefined
      ? { type: 'finished' }
      : { type: 'failed', error: failure };
  return { text, toolCalls, finishReason, usage, end };
}

/**
 * A tool call's arguments as the model sent them (JSON text): parsed, `{}` when empty (as the AI SDK
 * reads it), else the text itself, which the tool runner refuses with the schema's message.
 */
function parseToolInput(input: string): unknown {
  if (input.trim() === '') return {};
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return input;
  }
}
