import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type FakeTurn, startFakeLlm } from '@molf/testkit';
import { describe, expect, it } from 'vitest';
import { type ChatInTerminalOptions, chatInTerminal as chatInTerminalOf } from '../testing/chat-terminal-kit.ts';
import { useTestScope, waitUntil, writeFakeModelConfig } from '../testing/cli-test-kit.ts';
import { startTerminal } from '../testing/terminal-kit.ts';

const scope = useTestScope('tty');
const { cleanups, tempDir } = scope;

/** `molf chat` in a terminal `width` columns wide, its own server and worker, the fake LLM answering `turns`. */
const chatInTerminal = (turns: FakeTurn[], options?: ChatInTerminalOptions) => chatInTerminalOf(scope, turns, options);

describe('molf chat in a terminal, against what the model and its tools write', () => {
  it("shows escape sequences in the model's answer and in a tool's output as text: they set no title and clear nothing", async () => {
    const { terminal } = await chatInTerminal([
      {
        text: 'Before.\n\nSee \u001b]0;PWNED\u0007 and \u001b[2J\u001b[H here.\n',
        toolCalls: [{ name: 'shell_exec', arguments: { command: "printf 'out\\033]0;TOOL\\007\\n'" } }],
      },
      { text: 'Done.' },
    ]);
    const title = await terminal.title();
    await terminal.type('hi');
    await terminal.press('Enter');
    await terminal.waitFor('shell_exec asks for approval');
    await terminal.press('y');
    const screen = await terminal.waitFor('Done.');
    expect(screen).toContain('See \\x1b]0;PWNED\\x07 and \\x1b[2J\\x1b[H here.');
    expect(screen).toContain('out\\x1b]0;TOOL\\x07');
    // Nothing was cleared: the prompt and the answer's start are still on the screen.
    expect(screen).toContain('› hi');
    expect(screen).toContain('Before.');
    expect(await terminal.title()).toBe(title);
  });

  it('molf run on a terminal shows the escape sequences of the answer as text', async () => {
    const llm = await startFakeLlm({ turns: [{ text: 'Run \u001b]0;PWNED\u0007 answer.' }] });
    cleanups.push(() => llm.close());
    const home = await tempDir();
    await writeFakeModelConfig(home, llm.baseURL);
    const terminal = await startTerminal(['run', 'hi'], {
      cwd: await tempDir(),
      env: { MOLF_HOME: home, MOLF_LOG_FILE: 'none' },
    });
    const title = await terminal.title();
    // The pane ends with the command: its first lines may have scrolled into the history by then.
    const screen = await terminal.waitFor('session: ', { history: true });
    expect(screen).toContain('Run \\x1b]0;PWNED\\x07 answer.');
    expect(await terminal.title()).toBe(title);
  });
});

describe('molf chat in a terminal, when the server refuses an answer', () => {
  it('says why and asks again when a deny reason is longer than the server takes, instead of crashing', async () => {
    const { terminal, llm } = await chatInTerminal([
      { toolCalls: [{ name: 'shell_exec', arguments: { command: 'touch refused.txt' } }] },
      { text: 'Understood.' },
    ]);
    await terminal.type('make it');
    await terminal.press('Enter');
    await terminal.waitFor('shell_exec asks for approval');
    await terminal.press('n');
    await terminal.waitFor('reason for the model');
    await terminal.paste('x'.repeat(12_000));
    await terminal.press('Enter');
    await terminal.waitFor('invalid input at "feedback"');
    await terminal.waitFor('[n] no (tell the model why)');
    expect(await terminal.alive()).toBe(true);
    await terminal.press('n');
    await terminal.waitFor('reason for the model');
    await terminal.type('not now');
    await terminal.press('Enter');
    await terminal.waitFor('Understood.');
    const tool = llm.requests[1]?.messages.filter((message) => message.role === 'tool').at(-1);
    expect(String(tool?.content)).toContain('not now');
  });
});

describe('molf chat in a terminal, with input that is hard to draw', () => {
  it('draws a prompt with tabs once, however often it is drawn again', async () => {
    const { terminal } = await chatInTerminal([], { width: 60 });
    // Ten tabs take 80 cells: the line wraps, though it has 23 characters.
    await terminal.paste(`${'a\t'.repeat(10)}END`);
    await terminal.type('xyz');
    const screen = await terminal.waitFor('ENDxyz');
    expect(screen.match(/^› a/gm)).toHaveLength(1);
  });

  it('keeps a prompt taller than the terminal to the rows it has, leaving no copies of it above', async () => {
    const { terminal } = await chatInTerminal([{ text: 'Got them.' }], { height: 15 });
    const lines = Array.from({ length: 40 }, (_, index) => `pasted line ${String(index).padStart(2, '0')}`);
    await terminal.paste(lines.join('\n'));
    await terminal.type(' end');
    await terminal.waitFor('pasted line 39 end');
    await terminal.press('Enter');
    await terminal.waitFor('Got them.');
    // Sent, the prompt is printed once above the answer; its drafts drawn while it was edited left nothing.
    const history = await terminal.screen({ history: true });
    expect(history.match(/pasted line 10/g)).toHaveLength(1);
    expect(history.match(/pasted line 39 end/g)).toHaveLength(1);
  });

  it('reads lines on a terminal that moves no cursor (TERM=dumb), drawing no live region', async () => {
    const { terminal } = await chatInTerminal([{ text: 'Hello, dumb terminal.' }], { env: { TERM: 'dumb' } });
    expect(await terminal.screen()).not.toMatch(/^›/m);
    await terminal.type('hi');
    await terminal.press('Enter');
    const screen = await terminal.waitFor('Hello, dumb terminal.');
    expect(screen).not.toMatch(/^›/m);
  });
});

describe('molf chat in a terminal, while /edit lends the terminal to an editor', () => {
  it('goes on with the turn while the editor is open, and prints what came meanwhile once it is closed', async () => {
    const tools = await tempDir();
    const closeEditor = join(tools, 'close-the-editor');
    const editor = join(tools, 'editor.sh');
    // An editor that stays open until the test closes it, then leaves a prompt in the file.
    await writeFile(
      editor,
      `#!/bin/sh\nwhile [ ! -e '${closeEditor}' ]; do sleep 0.1; done\nprintf 'written in the editor\\n' > "$1"\n`,
      { mode: 0o755 },
    );
    const { terminal, llm } = await chatInTerminal(
      [
        {
          text: ['Looking', ' around', '.'],
          chunkDelayMs: 500,
          toolCalls: [{ name: 'glob', arguments: { pattern: '*' } }],
        },
        { text: 'Looked while you wrote.' },
        { text: 'Got it.' },
      ],
      { env: { EDITOR: editor } },
    );
    await terminal.type('look around');
    await terminal.press('Enter');
    await terminal.waitFor('esc to interrupt');
    await terminal.type('/edit');
    await terminal.press('Enter');
    // The tool ran and the model was asked again while the editor had the terminal.
    await waitUntil(() => llm.requests.length === 2, { what: 'the turn to go on while the editor is open' });
    await writeFile(closeEditor, '');
    await terminal.waitFor(/› written in the editor\s*$/);
    expect(await terminal.screen()).toContain('Looked while you wrote.');
    await terminal.press('Enter');
    await terminal.waitFor('Got it.');
  });
});
