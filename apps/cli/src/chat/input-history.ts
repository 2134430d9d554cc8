import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** The prompts typed in `molf chat`, oldest first, shared by every chat of this user (Up recalls them). */
export type InputHistory = {
  entries(): readonly string[];
  /** Remembers a prompt (not an empty one, nor a repeat of the last one) and appends it to the file. */
  add(text: string): void;
};

/** How many prompts are kept: the file is cut back to these when it has grown to twice as many. */
export const HISTORY_LIMIT = 1_000;

/**
 * A history kept in `file`, one JSON string per line so a prompt of several lines stays one entry.
 * Appending keeps two chats writing at once from losing each other's lines. A file that can't be read
 * or written costs only the history, never the chat; a damaged line is skipped.
 */
export function openInputHistory(file: string | undefined): InputHistory {
  const entries: string[] = [];
  let lines = 0;
  if (file !== undefined) {
    try {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (line === '') continue;
        lines++;
        try {
          const entry: unknown = JSON.parse(line);
          if (typeof entry === 'string') entries.push(entry);
        } catch {
          // A torn or foreign line: skipped.
        }
      }
    } catch {
      // No history yet (or unreadable): start empty.
    }
    if (lines >= 2 * HISTORY_LIMIT) {
      entries.splice(0, entries.length - HISTORY_LIMIT);
      try {
        writeFileSync(file, entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''), { mode: 0o600 });
      } catch {
        // Kept long: trimmed another time.
      }
    }
  }
  return {
    entries: () => entries,
    add(text) {
      if (text.trim() === '' || entries.at(-1) === text) return;
      entries.push(text);
      if (entries.length > HISTORY_LIMIT) entries.shift();
      if (file === undefined) return;
      try {
        mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
        appendFileSync(file, `${JSON.stringify(text)}\n`, { mode: 0o600 });
      } catch {
        // The prompt stays in this chat's history only.
      }
    },
  };
}
