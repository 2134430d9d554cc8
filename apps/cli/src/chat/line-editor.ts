/**
 * The chat's input: a multi-line text buffer edited by keys as Node's keypress parser reports them
 * (`readline.emitKeypressEvents`). A paste arrives between `paste-start` and `paste-end` (bracketed
 * paste) and stays one prompt, newlines included; Shift-Enter (where the terminal reports it),
 * Alt-Enter and a `\` at the end of a line start a new line; Enter sends. Up and Down walk the
 * history from the first and last line; Tab completes what `complete` offers. Readline's own
 * interface does none of the first three, which is why the chat edits its input itself.
 */

/** A key as `emitKeypressEvents` reports it. */
export type Key = { name?: string; sequence?: string; ctrl?: boolean; meta?: boolean; shift?: boolean };

/** What a key did, for the chat to act on. */
export type EditorAction =
  | { type: 'submit'; text: string }
  | { type: 'changed' }
  | { type: 'interrupt' }
  | { type: 'eof' }
  | { type: 'escape' }
  | { type: 'completions'; candidates: string[] }
  | { type: 'none' };

/** The buffer as lines, and where the cursor is in them. */
export type EditorView = { lines: string[]; cursorLine: number; cursorColumn: number };

export type LineEditor = {
  /** Applies one key. */
  key(text: string | undefined, key: Key | undefined): EditorAction;
  view(): EditorView;
  text(): string;
  /** Replaces the buffer (the `/edit` result), cursor at its end. */
  setText(text: string): void;
  clear(): void;
};

export type EditorOptions = {
  /** Earlier prompts, oldest first; the editor reads it on each Up, so entries added later count. */
  history?: () => readonly string[];
  /** The words that complete `prefix` (the whole buffer up to the cursor); none: Tab does nothing. */
  complete?: (prefix: string) => string[];
};

/** Key sequences some terminals send for Shift-Enter (CSI u, xterm's modifyOtherKeys). */
const SHIFT_ENTER_SEQUENCES = new Set(['\u001b[13;2u', '\u001b[27;2;13~']);

/**
 * The user-perceived characters of a text (an emoji with its modifiers, a letter with its accents):
 * the cursor steps over them and Backspace removes them whole, as a terminal shows them. Half of a
 * surrogate pair left in the prompt would reach the model as a lone surrogate.
 */
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

function commonPrefix(words: readonly string[]): string {
  const [first = '', ...rest] = words;
  let end = first.length;
  for (const word of rest) {
    let index = 0;
    while (index < end && index < word.length && word[index] === first[index]) index++;
    end = index;
  }
  return first.slice(0, end);
}

export function createLineEditor(options: EditorOptions = {}): LineEditor {
  let buffer = '';
  let cursor = 0;
  let pasting = false;
  /** The text of the paste under way, put in at its end as one edit (a paste of 2,000 lines is 100,000 keys). */
  let pasted: string[] = [];
  /** Where Up/Down are in the history: its length means "the buffer being written". */
  let historyIndex: number | undefined;
  /** The buffer being written, kept while the person looks through the history. */
  let draft = '';

  const insert = (text: string) => {
    buffer = buffer.slice(0, cursor) + text + buffer.slice(cursor);
    cursor += text.length;
    historyIndex = undefined;
  };
  const lineStart = () => buffer.lastIndexOf('\n', cursor - 1) + 1;
  const lineEnd = () => {
    const end = buffer.indexOf('\n', cursor);
    return end === -1 ? buffer.length : end;
  };
  /** Where the character before the cursor starts. */
  const previousCharacter = (): number => {
    const start = lineStart();
    if (cursor === start) return Math.max(0, cursor - 1);
    let boundary = start;
    for (const { index } of graphemes.segment(buffer.slice(start, cursor))) boundary = start + index;
    return boundary;
  };
  /** Where the character after the cursor ends. */
  const nextCharacter = (): number => {
    const end = lineEnd();
    if (cursor === end) return Math.min(buffer.length, cursor + 1);
    const first = graphemes.segment(buffer.slice(cursor, end)).containing(0);
    return cursor + (first?.segment.length ?? 1);
  };
  /** `index`, or the start of the character it falls inside. */
  const snapToCharacter = (index: number): number => {
    const start = buffer.lastIndexOf('\n', index - 1) + 1;
    const end = buffer.indexOf('\n', index);
    const within = graphemes.segment(buffer.slice(start, end === -1 ? buffer.length : end)).containing(index - start);
    return within === undefined ? index : start + within.index;
  };
  const replace = (text: string) => {
    buffer = text;
    cursor = text.length;
  };

  /** Up (-1) or Down (+1) through the history; false when there is nowhere to go. */
  const walkHistory = (step: -1 | 1): boolean => {
    const entries = options.history?.() ?? [];
    const current = historyIndex ?? entries.length;
    const next = current + step;
    if (next < 0 || next > entries.length) return false;
    if (historyIndex === undefined) draft = buffer;
    historyIndex = next;
    replace(next === entries.length ? draft : (entries[next] ?? ''));
    if (next === entries.length) historyIndex = undefined;
    return true;
  };

  /** Moves the cursor one line up or down, keeping its column where the line is long enough. */
  const moveLine = (step: -1 | 1): boolean => {
    const start = lineStart();
    const column = cursor - start;
    if (step === -1) {
      if (start === 0) return false;
      const previousStart = buffer.lastIndexOf('\n', start - 2) + 1;
      cursor = snapToCharacter(Math.min(previousStart + column, start - 1));
      return true;
    }
    const end = lineEnd();
    if (end === buffer.length) return false;
    const nextEnd = buffer.indexOf('\n', end + 1);
    cursor = snapToCharacter(Math.min(end + 1 + column, nextEnd === -1 ? buffer.length : nextEnd));
    return true;
  };

  const wordBack = () => {
    let index = cursor;
    while (index > 0 && /\s/.test(buffer[index - 1] ?? '')) index--;
    while (index > 0 && !/\s/.test(buffer[index - 1] ?? '')) index--;
    return index;
  };

  const submitOrNewline = (key: Key): EditorAction => {
    if (key.meta === true || key.shift === true || SHIFT_ENTER_SEQUENCES.has(key.sequence ?? '')) {
      insert('\n');
      return { type: 'changed' };
    }
    if (cursor === lineEnd() && buffer[cursor - 1] === '\\') {
      buffer = `${buffer.slice(0, cursor - 1)}\n${buffer.slice(cursor)}`;
      historyIndex = undefined;
      return { type: 'changed' };
    }
    const text = buffer;
    replace('');
    historyIndex = undefined;
    draft = '';
    return { type: 'submit', text };
  };

  return {
    key(text, key = {}) {
      const sequence = key.sequence ?? text ?? '';
      if (key.name === 'paste-start') {
        pasting = true;
        pasted = [];
        return { type: 'none' };
      }
      if (key.name === 'paste-end') {
        pasting = false;
        const paste = pasted.join('').replace(/\r\n?/g, '\n');
        pasted = [];
        if (paste === '') return { type: 'none' };
        insert(paste);
        return { type: 'changed' };
      }
      if (pasting) {
        // Inside a paste every character is text: Enter a new line, a tab a tab (no completion).
        const char = text ?? key.sequence;
        if (char !== undefined && char !== '') pasted.push(char);
        return { type: 'none' };
      }
      if (SHIFT_ENTER_SEQUENCES.has(sequence)) return submitOrNewline({ ...key, shift: true });
      if (key.name === 'return' || key.name === 'enter') return submitOrNewline(key);
      if (key.ctrl === true) {
        switch (key.name) {
          case 'c':
            return { type: 'interrupt' };
          case 'd':
            if (buffer === '') return { type: 'eof' };
            if (cursor < buffer.length) buffer = buffer.slice(0, cursor) + buffer.slice(nextCharacter());
            return { type: 'changed' };
          case 'a':
            cursor = lineStart();
            return { type: 'changed' };
          case 'e':
            cursor = lineEnd();
            return { type: 'changed' };
          case 'u':
            buffer = buffer.slice(0, lineStart()) + buffer.slice(cursor);
            cursor = lineStart();
            return { type: 'changed' };
          case 'k':
            buffer = buffer.slice(0, cursor) + buffer.slice(lineEnd());
            return { type: 'changed' };
          case 'w': {
            const start = wordBack();
            buffer = buffer.slice(0, start) + buffer.slice(cursor);
            cursor = start;
            return { type: 'changed' };
          }
          case 'left':
            cursor = wordBack();
            return { type: 'changed' };
          default:
            return { type: 'none' };
        }
      }
      switch (key.name) {
        case 'escape':
          return { type: 'escape' };
        case 'backspace':
          if (cursor === 0) return { type: 'none' };
          if (key.meta === true) {
            const start = wordBack();
            buffer = buffer.slice(0, start) + buffer.slice(cursor);
            cursor = start;
          } else {
            const start = previousCharacter();
            buffer = buffer.slice(0, start) + buffer.slice(cursor);
            cursor = start;
          }
          return { type: 'changed' };
        case 'delete':
          if (cursor < buffer.length) buffer = buffer.slice(0, cursor) + buffer.slice(nextCharacter());
          return { type: 'changed' };
        case 'left':
          cursor = previousCharacter();
          return { type: 'changed' };
        case 'right':
          cursor = nextCharacter();
          return { type: 'changed' };
        case 'home':
          cursor = lineStart();
          return { type: 'changed' };
        case 'end':
          cursor = lineEnd();
          return { type: 'changed' };
        case 'up':
          return moveLine(-1) || walkHistory(-1) ? { type: 'changed' } : { type: 'none' };
        case 'down':
          return moveLine(1) || walkHistory(1) ? { type: 'changed' } : { type: 'none' };
        case 'tab': {
          const prefix = buffer.slice(0, cursor);
          const candidates = options.complete?.(prefix) ?? [];
          if (candidates.length === 0) return { type: 'none' };
          const common = commonPrefix(candidates);
          if (common.length > prefix.length) {
            insert(common.slice(prefix.length) + (candidates.length === 1 ? ' ' : ''));
            return { type: 'changed' };
          }
          return candidates.length === 1 ? { type: 'none' } : { type: 'completions', candidates };
        }
        default:
          break;
      }
      // Printable text: a key's own character, or several at once (a paste the terminal did not bracket).
      // biome-ignore lint/suspicious/noControlCharactersInRegex: a control character is what it refuses
      if (text !== undefined && text !== '' && key.meta !== true && !/^[\u0000-\u001f\u007f]$/.test(text)) {
        insert(text.replace(/\r\n?/g, '\n'));
        return { type: 'changed' };
      }
      return { type: 'none' };
    },
    view() {
      const lines = buffer.split('\n');
      const before = buffer.slice(0, cursor).split('\n');
      return { lines, cursorLine: before.length - 1, cursorColumn: (before.at(-1) ?? '').length };
    },
    text: () => buffer,
    setText(text) {
      replace(text);
      historyIndex = undefined;
    },
    clear() {
      replace('');
      historyIndex = undefined;
      draft = '';
      pasting = false;
      pasted = [];
    },
  };
}
