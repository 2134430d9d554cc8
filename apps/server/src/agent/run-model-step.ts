import { type LanguageModel, type ModelMessage, streamText, type ToolSet } from 'ai';

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
  usage: { inputTokens?: number; outputTokens?: number } | undefined;
  end: ModelStepEnd;
};

/**
 * One model step: one request to the model, streamed. It neither stores nor runs anything; the
 * turn decides what the outcome means.
 */
export async function runModelStep(request: ModelStepRequest): Promise<ModelStepOutcome> {
  const { signal, streamIdleTimeoutMs } = request;
  const result = streamText({
    model: request.model,
    system: request.system,
    messages: request.messages,
    tools: request.tools,
    abortSignal: signal,
    timeout: { firstChunkMs: streamIdleTimeoutMs * 5, chunkMs: streamIdleTimeoutMs },
    maxRetries: 1,
    // Errors arrive as stream parts below; the SDK's default handler would print them.
    onError: () => {},
  });

  let text = '';
  const toolCalls: ModelToolCall[] = [];
  let failure: unknown;
  let finishReason: string | undefined;
  let usage: ModelStepOutcome['usage'];
  try {
    for await (const part of result.fullStream) {
      switch (part.type) {
        case 'text-delta':
          text += part.text;
          request.onTextDelta(part.text);
          break;
        case 'tool-call':
          toolCalls.push({ toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
          break;
        case 'finish-step':
          finishReason = part.finishReason;
          usage = {
            ...(part.usage.inputTokens === undefined ? {} : { inputTokens: part.usage.inputTokens }),
            ...(part.usage.outputTokens === undefined ? {} : { outputTokens: part.usage.outputTokens }),
          };
          break;
        case 'error':
          failure = part.error;
          break;
        case 'abort':
          // Not our abort: the SDK's stream timeout fired on a stalled provider.
          if (!signal.aborted) {
            failure ??= new Error(
              `the model stream stalled: nothing arrived for ${Math.round(streamIdleTimeoutMs / 1000)} s`,
            );
          }
          break;
        default:
          break;
      }
    }
  } catch (error) {
    // A connection broken mid-stream surfaces as a thrown error rather than an error part.
    if (!signal.aborted) failure ??= error;
  }
  const end: ModelStepEnd = signal.aborted
    ? { type: 'aborted' }
    : failure === undefined
      ? { type: 'finished' }
      : { type: 'failed', error: failure };
  return { text, toolCalls, finishReason, usage, end };
}
