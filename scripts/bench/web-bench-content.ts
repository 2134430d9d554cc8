/**
 * What the web benchmark shows the page: a stored history shaped like a coding session (prompts,
 * Markdown answers with lists, code and tables, tool calls with their output) and a long streamed
 * answer in token-sized chunks.
 */
import type { SessionMessage } from '@molf/protocol';

const ANSWER = [
  '## Step {n}: what changed\n\n',
  'The **session store** keeps the parsed history of live sessions, so a turn no longer re-reads ',
  '`messages.jsonl`. Idle ones are evicted after a while; see [the notes](https://example.com/notes).\n\n',
  '- the append path syncs one line\n- the list is sorted once and kept\n- `get` returns a copy\n\n',
  '```ts\nexport function findLast(items: readonly Item[], key: string): number {\n',
  '  for (let index = items.length - 1; index >= 0; index -= 1) {\n',
  '    if (items[index]?.key === key) return index;\n  }\n  return -1;\n}\n```\n\n',
  '| file | lines | change |\n| --- | ---: | --- |\n| session-store.ts | 214 | cache |\n| list.ts | 88 | sort |\n\n',
].join('');

const PROMPTS = [
  'Why does opening a long session take so long? Look at the store.',
  'Run the tests for the sessions folder and tell me what fails.',
  'Refactor `findLast` so it does not allocate, and keep the tests green.',
];

const OUTPUT = Array.from(
  { length: 24 },
  (_, line) => `src/sessions/file-${line}.ts:${line * 7 + 3}:  const entry = await readEntry(path, { line: ${line} });`,
).join('\n');

function at(index: number): string {
  return new Date(Date.UTC(2026, 10, 1) + index * 1_000).toISOString();
}

/**
 * A history of exactly `count` messages (even, ≥ 2), oldest first: exchanges with a tool call
 * (prompt, the call, its output, the answer) alternate with plain ones (prompt, answer). The last
 * message is an answer containing `marker`.
 */
export function createHistory(options: { count: number; marker: string; model: string }): SessionMessage[] {
  const { count, marker, model } = options;
  if (count < 2 || count % 2 !== 0) throw new Error(`a history has an even count of messages, not ${count}`);
  const messages: SessionMessage[] = [];
  const next = () => ({ id: `bench-${messages.length}`, at: at(messages.length) });
  const answer = (text: string) =>
    messages.push({ ...next(), role: 'assistant', text, toolCalls: [], model, finishReason: 'stop' });
  for (let exchange = 0; messages.length < count - 2; exchange += 1) {
    messages.push({ ...next(), role: 'user', text: `${PROMPTS[exchange % PROMPTS.length]} (#${exchange})` });
    if (exchange % 2 === 0 && messages.length + 3 <= count - 2) {
      const toolCallId = `call-${exchange}`;
      const args = { command: `pnpm vitest run src/sessions --reporter dot # ${exchange}` };
      messages.push({
        ...next(),
        role: 'assistant',
        text: 'Let me run the tests first.',
        toolCalls: [{ toolCallId, toolName: 'shell_exec', args }],
        model,
        finishReason: 'tool-calls',
      });
      messages.push({ ...next(), role: 'tool', toolCallId, toolName: 'shell_exec', output: OUTPUT });
    }
    answer(ANSWER.replaceAll('{n}', String(exchange)));
  }
  messages.push({ ...next(), role: 'user', text: 'Summarise what you did.' });
  answer(`All done. ${marker}`);
  return messages;
}

/**
 * A Markdown answer in `count` chunks of a word or so each (as a model streams tokens), the
 * last one being `marker`.
 */
export function createStreamChunks(options: { count: number; marker: string }): string[] {
  const chunks: string[] = [];
  for (let section = 0; chunks.length < options.count - 1; section += 1) {
    for (const token of ANSWER.replaceAll('{n}', String(section)).split(/(?<=[\s|`])/)) {
      if (chunks.length === options.count - 1) break;
      chunks.push(token);
    }
  }
  chunks.push(` ${options.marker}`);
  return chunks;
}
