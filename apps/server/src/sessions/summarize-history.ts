import { randomUUID } from 'node:crypto';
import type { SessionMessage } from '@molf/protocol';
import { generateText, type LanguageModel } from 'ai';
import type { ModelPrice } from '../providers/model-prices.ts';
import { toCallUsage, toReportedUsage } from '../providers/to-call-usage.ts';

export const SUMMARIZING = {
  /** Summarise after a turn whose last request used this share of the context window… */
  triggerShare: 0.8,
  /** …when the model sees at least this many messages. */
  minMessages: 6,
  /** The last this-many user turns stay in full after the summary. */
  keepUserTurns: 4,
  /** Each message enters the summary request cut to this many characters. */
  maxCharsPerMessage: 2_000,
  maxOutputTokens: 4_096,
  /** A shorter summary is taken for a failure and dropped. */
  minSummaryChars: 100,
  /** The summary call is given up after this. */
  timeoutMs: 120_000,
} as const;

const INSTRUCTIONS = `You summarise a coding session between a user and an AI coding agent so that the agent can continue
without the full transcript. Write these sections, concise but complete:
Goal — what the user wants overall.
Key instructions — constraints and preferences the user stated.
Progress — what was done, decided or found, in order.
Key findings — facts about the code and environment worth keeping (errors, commands, results).
Relevant files — paths and what they are for.
Write only the summary.`;

function render(message: SessionMessage): string {
  const cut = (text: string) =>
    text.length > SUMMARIZING.maxCharsPerMessage ? `${text.slice(0, SUMMARIZING.maxCharsPerMessage)} […]` : text;
  switch (message.role) {
    case 'user':
      return `USER: ${cut(message.text)}`;
    case 'assistant':
      return `AGENT: ${cut(message.text)}${message.toolCalls.map((call) => `\n  called ${call.toolName} ${cut(JSON.stringify(call.args))}`).join('')}`;
    case 'tool':
      return `TOOL ${message.toolName}: ${cut(message.error === undefined ? message.output : `${message.output}\n${message.error}`)}`;
    case 'summary':
      return `EARLIER SUMMARY:\n${message.text}`;
  }
}

/**
 * Where a summary of `view` would end: just before the user message that starts the last
 * `keepUserTurns` turns; undefined when there is nothing worth summarising.
 */
export function summaryCutoff(view: readonly SessionMessage[]): number | undefined {
  if (view.length < SUMMARIZING.minMessages) return undefined;
  let users = 0;
  for (let index = view.length - 1; index >= 0; index -= 1) {
    if (view[index]?.role === 'user') {
      users += 1;
      if (users === SUMMARIZING.keepUserTurns) return index > 0 ? index : undefined;
    }
  }
  return undefined;
}

/**
 * Summarises the messages of the model's view before the kept turns. Returns the summary message
 * to append (covering up to the last summarised stored message), or undefined.
 */
export async function summarizeHistory(options: {
  view: readonly SessionMessage[];
  model: LanguageModel;
  modelId: string;
  /** The model's price, for the cost the summary message records. Default none (cost unknown). */
  price?: ModelPrice | undefined;
  signal?: AbortSignal;
}): Promise<Extract<SessionMessage, { role: 'summary' }> | undefined> {
  const cutoff = summaryCutoff(options.view);
  if (cutoff === undefined) return undefined;
  const covered = options.view.slice(0, cutoff);
  // The view starts with a summary and its acknowledgement when there was one: the new summary
  // covers up to the last stored message before the cutoff.
  const last = [...covered].reverse().find((message) => !message.id.endsWith('-ack') && message.role !== 'summary');
  if (last === undefined) return undefined;
  const result = await generateText({
    model: options.model,
    system: INSTRUCTIONS,
    prompt: covered
      .filter((message) => !message.id.endsWith('-ack'))
      .map(render)
      .join('\n\n'),
    maxOutputTokens: SUMMARIZING.maxOutputTokens,
    temperature: 0.3,
    maxRetries: 1,
    // A stalled summary must not hold the session busy.
    timeout: { totalMs: SUMMARIZING.timeoutMs },
    ...(options.signal === undefined ? {} : { abortSignal: options.signal }),
  });
  const text = result.text.trim();
  if (text.length < SUMMARIZING.minSummaryChars) return undefined;
  return {
    id: randomUUID(),
    at: new Date().toISOString(),
    role: 'summary',
    text,
    coversUntil: last.id,
    model: options.modelId,
    usage: toCallUsage(toReportedUsage(result.usage), options.price),
  };
}
