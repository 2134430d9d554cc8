import { readFile } from 'node:fs/promises';
import { type SessionMessage, SessionMessageSchema } from '@molf/protocol';
import { z } from 'zod';

/**
 * The first line of a history file: what the session is, written once when it is created. With it
 * the history alone is enough to rebuild a session's metadata.
 */
export const HistoryHeaderSchema = z.object({
  kind: z.literal('session'),
  sessionId: z.string(),
  workerId: z.string(),
  name: z.string(),
  model: z.string().optional(),
  parent: z.object({ sessionId: z.string(), toolCallId: z.string(), agent: z.string() }).optional(),
  createdAt: z.string(),
});
export type HistoryHeader = z.infer<typeof HistoryHeaderSchema>;

export type HistoryFile = {
  header: HistoryHeader | undefined;
  messages: SessionMessage[];
  /** Characters of the message lines, for the history cache's budget. */
  size: number;
  /** Line numbers (1-based) skipped as unreadable: a line torn by a crash, or damage. */
  skipped: number[];
};

/** Reads a history file; a missing file is an empty history. Unreadable lines are skipped and reported. */
export async function readHistoryFile(path: string): Promise<HistoryFile> {
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  const history: HistoryFile = { header: undefined, messages: [], size: 0, skipped: [] };
  let lineNumber = 0;
  for (const line of text.split('\n')) {
    lineNumber += 1;
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      history.skipped.push(lineNumber);
      continue;
    }
    if (lineNumber === 1 && (value as { kind?: unknown }).kind === 'session') {
      const header = HistoryHeaderSchema.safeParse(value);
      if (header.success) history.header = header.data;
      else history.skipped.push(lineNumber);
      continue;
    }
    const message = SessionMessageSchema.safeParse(value);
    if (message.success) {
      history.messages.push(message.data);
      history.size += line.length + 1;
    } else {
      history.skipped.push(lineNumber);
    }
  }
  return history;
}
