import { emitKeypressEvents } from 'node:readline';
import type { Approval } from '@molf/protocol';
import stringWidth from 'string-width';
import { showControlCharacters } from '../terminal/show-control-characters.ts';
import type { TerminalStyle } from '../terminal/terminal-style.ts';
import { createApprovalKeyGuard } from './approval-key-guard.ts';
import { type AnswerRights, type ApprovalChoice, approvalChoices, formatChoices } from './approval-view.ts';
import type { LiveRegion } from './chat-screen.ts';
import { createLineEditor, type EditorOptions, type Key, type LineEditor } from './line-editor.ts';
import { expandTabs } from './terminal-rows.ts';

/** What the input is taking: a prompt, one key for an approval, a reason, "always" patterns, a pick. */
export type InputMode =
  | { type: 'prompt' }
  | { type: 'approval'; approval: Approval; rights?: AnswerRights }
  | { type: 'reason' }
  | { type: 'patterns'; patterns: readonly string[] }
  | { type: 'pick'; title: string; items: ReadonlyArray<{ label: string; value: string }> };

export type InputHandlers = {
  /** A prompt or a `/` command. */
  submit(text: string): void;
  answer(choice: ApprovalChoice): void;
  /** The deny reason (empty: none). */
  reason(text: string): void;
  /** The "always" patterns as edited; undefined: Esc, back to the choices. */
  patterns(patterns: string[] | undefined): void;
  /** The picked item's value; undefined: Esc. */
  pick(value: string | undefined): void;
  /** Ctrl-C. */
  interrupt(): void;
  /** Esc while a prompt is edited. */
  escape(): void;
  /** Ctrl-D on an empty prompt. */
  eof(): void;
  /** Tab found several commands. */
  completions(candidates: string[]): void;
  /** Something on the input line changed: draw it again. */
  changed(): void;
};

export type TerminalInput = {
  mode(): InputMode;
  setMode(mode: InputMode): void;
  /** The input's lines for the live region, and the cursor in them (counted from their first line). */
  render(style: TerminalStyle): Pick<LiveRegion, 'lines' | 'cursor'>;
  /** Puts a text into the prompt (the `/edit` result). */
  setPrompt(text: string): void;
  /** Gives the terminal back (an editor runs), then takes it again. */
  suspend(): void;
  resume(): void;
  close(): void;
};

/**
 * An edited line as the live region shows it after `prefix`: a pasted control character as `\xNN`
 * (a pasted escape sequence is not run), tabs as the spaces a terminal would move over. The cursor's
 * column is the width of the same for the text before it.
 */
function shownLine(prefix: string, text: string): string {
  return expandTabs(`${prefix}${showControlCharacters(text)}`);
}

const BRACKETED_PASTE_ON = '\u001b[?2004h';
const BRACKETED_PASTE_OFF = '\u001b[?2004l';
/** Items of a pick shown at once. */
const PICK_ROWS = 10;

/**
 * The chat's keyboard on a terminal: raw mode with bracketed paste, keys parsed by Node's keypress
 * parser into the prompt editor, or into one key for an approval. A paste the terminal does not
 * bracket arrives as many keys in one read: an Enter among them is a new line, not a send.
 */
export function createTerminalInput(
  stdin: NodeJS.ReadStream,
  stdout: { write(text: string): unknown },
  handlers: InputHandlers,
  editorOptions: EditorOptions,
): TerminalInput {
  const prompt = createLineEditor(editorOptions);
  /** The reason or the patterns: a second editor, so the prompt being written is kept meanwhile. */
  const side: LineEditor = createLineEditor();
  let mode: InputMode = { type: 'prompt' };
  const guard = createApprovalKeyGuard();
  let selected = 0;
  /** A prompt sent by Enter, held until the rest of the same read is known to be no paste. */
  let held: string | undefined;
  let heldTimer: NodeJS.Immediate | undefined;

  const releaseHeld = () => {
    heldTimer = undefined;
    const text = held;
    held = undefined;
    if (text !== undefined) handlers.submit(text);
  };

  const onPromptKey = (text: string | undefined, key: Key) => {
    if (held !== undefined) {
      // More keys in the same read as the Enter: a paste. The Enter was a new line.
      clearImmediate(heldTimer);
      prompt.setText(`${held}\n`);
      held = undefined;
    }
    const action = prompt.key(text, key);
    switch (action.type) {
      case 'submit':
        guard.sent();
        held = action.text;
        heldTimer = setImmediate(releaseHeld);
        handlers.changed();
        return;
      case 'changed':
        handlers.changed();
        return;
      case 'interrupt':
        handlers.interrupt();
        return;
      case 'escape':
        handlers.escape();
        return;
      case 'eof':
        handlers.eof();
        return;
      case 'completions':
        handlers.completions(action.candidates);
        return;
      case 'none':
        return;
    }
  };

  const onSideKey = (text: string | undefined, key: Key) => {
    if (key.name === 'escape') {
      if (mode.type === 'patterns') handlers.patterns(undefined);
      else handlers.reason('');
      return;
    }
    // In the patterns editor each line is one pattern; Enter saves them.
    const action = side.key(text, key);
    if (action.type === 'interrupt') handlers.interrupt();
    else if (action.type === 'submit') {
      // Sent, like a prompt: an approval shown again (the answer refused) takes the next key.
      guard.sent();
      if (mode.type === 'patterns') {
        handlers.patterns(
          action.text
            .split('\n')
            .map((line) => line.trim())
            .filter(Boolean),
        );
      } else handlers.reason(action.text.trim());
    } else if (action.type === 'changed') handlers.changed();
  };

  const onKey = (text: string | undefined, key: Key | undefined) => {
    const pressed = key ?? { sequence: text };
    guard.noteKey();
    switch (mode.type) {
      case 'prompt':
        onPromptKey(text, pressed);
        return;
      case 'approval': {
        if (pressed.ctrl === true && pressed.name === 'c') {
          handlers.interrupt();
          return;
        }
        // A key typed for the prompt as the question appeared answers nothing.
        if (!guard.accepts()) return;
        const choices = approvalChoices(mode.approval, mode.rights);
        const name = pressed.name === 'return' || pressed.name === 'enter' ? 'y' : (text ?? '').toLowerCase();
        const choice = choices.find((one) => one.key === name);
        if (choice !== undefined) handlers.answer(choice);
        return;
      }
      case 'reason':
      case 'patterns':
        onSideKey(text, pressed);
        return;
      case 'pick': {
        const items = mode.items;
        if (pressed.name === 'escape' || (pressed.ctrl === true && pressed.name === 'c')) handlers.pick(undefined);
        else if (pressed.name === 'up') selected = (selected - 1 + items.length) % items.length;
        else if (pressed.name === 'down') selected = (selected + 1) % items.length;
        else if (pressed.name === 'return' || pressed.name === 'enter') handlers.pick(items[selected]?.value);
        else if (text !== undefined && /^[1-9]$/.test(text) && Number(text) <= items.length) {
          handlers.pick(items[Number(text) - 1]?.value);
        }
        handlers.changed();
        return;
      }
    }
  };

  emitKeypressEvents(stdin);
  const take = () => {
    stdin.setRawMode(true);
    stdin.resume();
    stdout.write(BRACKETED_PASTE_ON);
  };
  const give = () => {
    stdout.write(BRACKETED_PASTE_OFF);
    stdin.setRawMode(false);
    stdin.pause();
  };
  stdin.on('keypress', onKey);
  take();

  return {
    mode: () => mode,
    setMode(next) {
      if (
        next.type === 'approval' &&
        !(mode.type === 'approval' && mode.approval.approvalId === next.approval.approvalId)
      ) {
        guard.arm();
      }
      mode = next;
      selected = 0;
      if (next.type === 'patterns') side.setText(next.patterns.join('\n'));
      else if (next.type === 'reason') side.clear();
    },
    render(style) {
      switch (mode.type) {
        case 'prompt': {
          const view = prompt.view();
          const prefix = (index: number) => `${index === 0 ? style.user('›') : style.dim('┆')} `;
          const lines = view.lines.map((line, index) => shownLine(prefix(index), line));
          const before = view.lines[view.cursorLine]?.slice(0, view.cursorColumn) ?? '';
          return {
            lines,
            cursor: { line: view.cursorLine, column: stringWidth(shownLine(prefix(view.cursorLine), before)) },
          };
        }
        case 'approval':
          return { lines: [formatChoices(mode.approval, style, mode.rights)] };
        case 'reason':
        case 'patterns': {
          const title =
            mode.type === 'reason'
              ? style.dim('reason for the model (optional; Enter sends, Esc sends none):')
              : style.dim('save as allow rules, one pattern per line (edit them; Enter saves, Esc goes back):');
          const view = side.view();
          const label = mode.type === 'reason' ? 'reason: ' : 'allow: ';
          const prefix = (index: number) => (index === 0 ? label : ' '.repeat(label.length));
          const lines = view.lines.map((line, index) => shownLine(prefix(index), line));
          const before = view.lines[view.cursorLine]?.slice(0, view.cursorColumn) ?? '';
          return {
            lines: [title, ...lines],
            cursor: { line: 1 + view.cursorLine, column: stringWidth(shownLine(prefix(view.cursorLine), before)) },
          };
        }
        case 'pick': {
          const first = Math.max(0, Math.min(selected - PICK_ROWS + 1, mode.items.length - PICK_ROWS));
          const shown = mode.items.slice(first, first + PICK_ROWS).map((item, index) => {
            const at = first + index;
            const number = at < 9 ? `${at + 1}` : ' ';
            return at === selected ? style.bold(`❯ ${number} ${item.label}`) : `  ${number} ${item.label}`;
          });
          return { lines: [style.dim(`${mode.title} (↑/↓, Enter opens, Esc cancels)`), ...shown] };
        }
      }
    },
    setPrompt(text) {
      prompt.setText(text);
    },
    suspend: give,
    resume: take,
    close() {
      clearImmediate(heldTimer);
      stdin.off('keypress', onKey);
      give();
    },
  };
}
