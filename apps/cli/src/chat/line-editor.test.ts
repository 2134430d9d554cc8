import { describe, expect, it } from 'vitest';
import { createLineEditor, type EditorAction, type Key, type LineEditor } from './line-editor.ts';

/** Types text key by key, as the keypress parser reports a person typing it. */
function type(editor: LineEditor, text: string): EditorAction[] {
  return [...text].map((char) =>
    char === '\r' ? editor.key(char, { name: 'return', sequence: '\r' }) : editor.key(char, { sequence: char }),
  );
}
const press = (editor: LineEditor, key: Key) => editor.key(undefined, key);

describe('the chat input', () => {
  it('sends the line on Enter and starts empty again', () => {
    const editor = createLineEditor();
    const actions = type(editor, 'hello\r');
    expect(actions.at(-1)).toEqual({ type: 'submit', text: 'hello' });
    expect(editor.text()).toBe('');
  });

  it('keeps a bracketed paste of several lines as one prompt, sent by the Enter after it', () => {
    const editor = createLineEditor();
    press(editor, { name: 'paste-start' });
    const during = type(editor, 'line one\rline two\r\tindented');
    press(editor, { name: 'paste-end' });
    expect(during.some((action) => action.type === 'submit')).toBe(false);
    expect(editor.view().lines).toEqual(['line one', 'line two', '\tindented']);
    expect(press(editor, { name: 'return' })).toEqual({ type: 'submit', text: 'line one\nline two\n\tindented' });
  });

  it('takes a bracketed paste as one edit at its end: nothing to draw again for each of its keys, a CRLF one newline', () => {
    const editor = createLineEditor();
    type(editor, '> ');
    press(editor, { name: 'paste-start' });
    const during = [
      ...type(editor, 'first'),
      editor.key('\r', { name: 'return', sequence: '\r' }),
      editor.key('\n', { name: 'enter', sequence: '\n' }),
      ...type(editor, 'second'),
    ];
    expect(during.every((action) => action.type === 'none')).toBe(true);
    expect(editor.text()).toBe('> ');
    expect(press(editor, { name: 'paste-end' })).toEqual({ type: 'changed' });
    expect(editor.text()).toBe('> first\nsecond');
    expect(editor.view()).toMatchObject({ cursorLine: 1, cursorColumn: 6 });
  });

  it('starts a new line on Shift-Enter, Alt-Enter, or a backslash at the end of the line', () => {
    const editor = createLineEditor();
    type(editor, 'a');
    press(editor, { name: 'return', shift: true });
    type(editor, 'b');
    press(editor, { name: 'return', meta: true });
    type(editor, 'c');
    editor.key(undefined, { sequence: '\u001b[13;2u' });
    type(editor, 'd\\');
    press(editor, { name: 'return' });
    type(editor, 'e');
    expect(editor.view().lines).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(press(editor, { name: 'return' })).toEqual({ type: 'submit', text: 'a\nb\nc\nd\ne' });
  });

  it('walks the history with Up and Down and gives back the draft at its end', () => {
    const history = ['first', 'second'];
    const editor = createLineEditor({ history: () => history });
    type(editor, 'draft');
    press(editor, { name: 'up' });
    expect(editor.text()).toBe('second');
    press(editor, { name: 'up' });
    expect(editor.text()).toBe('first');
    expect(press(editor, { name: 'up' })).toEqual({ type: 'none' });
    press(editor, { name: 'down' });
    press(editor, { name: 'down' });
    expect(editor.text()).toBe('draft');
  });

  it('moves between the lines of a multi-line prompt with Up and Down before reaching the history', () => {
    const editor = createLineEditor({ history: () => ['old'] });
    editor.setText('one\ntwo');
    press(editor, { name: 'up' });
    expect(editor.view()).toMatchObject({ cursorLine: 0, cursorColumn: 3 });
    expect(editor.text()).toBe('one\ntwo');
    press(editor, { name: 'up' });
    expect(editor.text()).toBe('old');
  });

  it('completes a command with Tab, and lists the candidates when several remain', () => {
    const commands = ['/help', '/sessions', '/session', '/skills'];
    const complete = (prefix: string) => commands.filter((command) => command.startsWith(prefix));
    const editor = createLineEditor({ complete });
    type(editor, '/he');
    press(editor, { name: 'tab' });
    expect(editor.text()).toBe('/help ');
    editor.clear();
    type(editor, '/s');
    expect(press(editor, { name: 'tab' })).toEqual({
      type: 'completions',
      candidates: ['/sessions', '/session', '/skills'],
    });
    type(editor, 'e');
    press(editor, { name: 'tab' });
    expect(editor.text()).toBe('/session');
  });

  it('edits like a shell line: arrows, Home/End, Ctrl-W, Ctrl-U, Ctrl-K, Backspace, Delete', () => {
    const editor = createLineEditor();
    type(editor, 'one two three');
    press(editor, { name: 'w', ctrl: true });
    expect(editor.text()).toBe('one two ');
    press(editor, { name: 'home' });
    press(editor, { name: 'delete' });
    expect(editor.text()).toBe('ne two ');
    press(editor, { name: 'right' });
    press(editor, { name: 'k', ctrl: true });
    expect(editor.text()).toBe('n');
    press(editor, { name: 'end' });
    press(editor, { name: 'backspace' });
    expect(editor.text()).toBe('');
    type(editor, 'abc');
    press(editor, { name: 'left' });
    press(editor, { name: 'u', ctrl: true });
    expect(editor.text()).toBe('c');
  });

  it('deletes and steps over a whole emoji, never half of one (a lone surrogate would reach the model)', () => {
    const editor = createLineEditor();
    type(editor, 'ab😀');
    press(editor, { name: 'backspace' });
    expect(editor.text()).toBe('ab');
    // A family emoji is several code points joined: one character to the person.
    type(editor, '👨‍👩‍👧x');
    press(editor, { name: 'left' });
    press(editor, { name: 'left' });
    type(editor, 'y');
    expect(editor.text()).toBe('aby👨‍👩‍👧x');
    press(editor, { name: 'right' });
    press(editor, { name: 'backspace' });
    expect(editor.text()).toBe('abyx');
    type(editor, '😀');
    press(editor, { name: 'left' });
    press(editor, { name: 'delete' });
    expect(editor.text()).toBe('abyx');
    press(editor, { name: 'home' });
    type(editor, '😀');
    press(editor, { name: 'left' });
    press(editor, { name: 'd', ctrl: true });
    expect(editor.text()).toBe('abyx');
  });

  it('keeps the cursor off the middle of an emoji when Up or Down moves it to another line', () => {
    const editor = createLineEditor();
    editor.setText('😀😀\nabc');
    // Column 3 of "abc" falls inside the second emoji of the line above (code units 2–3).
    press(editor, { name: 'up' });
    type(editor, 'x');
    expect(editor.text()).toBe('😀x😀\nabc');
  });

  it('reports Ctrl-C, Escape, and Ctrl-D on an empty line for the chat to act on', () => {
    const editor = createLineEditor();
    expect(press(editor, { name: 'c', ctrl: true })).toEqual({ type: 'interrupt' });
    expect(press(editor, { name: 'escape' })).toEqual({ type: 'escape' });
    expect(press(editor, { name: 'd', ctrl: true })).toEqual({ type: 'eof' });
    type(editor, 'x');
    expect(press(editor, { name: 'd', ctrl: true })).toEqual({ type: 'changed' });
  });

  it('takes no control character as text', () => {
    const editor = createLineEditor();
    editor.key('\u0007', { sequence: '\u0007' });
    editor.key('\u001b[1;5P', { sequence: '\u001b[1;5P', name: 'f1', ctrl: true });
    expect(editor.text()).toBe('');
  });
});
