import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createServer } from '@molf/server';
import type { FakeTurn } from '@molf/testkit';
import { createWorker } from '@molf/worker';
import { describe, expect, it } from 'vitest';
import {
  type ChatInTerminalOptions,
  chatInTerminal as chatInTerminalOf,
  serverForChat,
} from '../testing/chat-terminal-kit.ts';
import { useTestScope, waitUntil } from '../testing/cli-test-kit.ts';
import { startTerminal } from '../testing/terminal-kit.ts';

const scope = useTestScope('tty');
const { cleanups, tempDir } = scope;

/** A colour code (SGR with a colour: 30–37, 90–97, 38;5;n), not tmux's plain resets. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes are what it finds
const COLOUR = /\u001b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|38;5;\d+)m/;

/** `molf chat` in a terminal, its own server and worker on a fresh project, the fake LLM answering `turns`. */
const chatInTerminal = (turns: FakeTurn[], options?: ChatInTerminalOptions) => chatInTerminalOf(scope, turns, options);

/**
 * `molf chat --server` in a terminal, on a server and worker of this test process (the test can stop
 * and start them), the fake LLM answering `turns`.
 */
async function chatWithServer(turns: FakeTurn[]) {
  const made = await serverForChat(scope, turns, { tokenSuffix: 'tty-local-server-token-01' });
  return { ...made, terminal: await made.openChat() };
}

describe('molf chat in a terminal', () => {
  it('renders the answer as markdown: heading, bold, list, highlighted code', async () => {
    const { terminal } = await chatInTerminal([
      { text: ['# Plan\n\nThis is **important**.\n\n', '- first\n- second\n\n```js\nconst answer = 42;\n```\n'] },
    ]);
    await terminal.type('plan it');
    await terminal.press('Enter');
    const screen = await terminal.waitFor('const answer = 42;');
    expect(screen).toContain('This is important.');
    expect(screen).not.toContain('**');
    expect(screen).toMatch(/\* first\n\s*\* second/);
    expect(screen).not.toContain('```');
    // The keyword is painted apart from the rest of the line.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes are what it finds
    expect(await terminal.screen({ escapes: true })).toMatch(/\u001b\[[0-9;]*m\s*const\u001b\[[0-9;]*m/);
  });

  it('shows an edit as a coloured diff in its approval, answered with one key', async () => {
    const project = await tempDir();
    await writeFile(join(project, 'notes.txt'), 'alpha\nbeta\ngamma\n');
    const { terminal, llm } = await chatInTerminal(
      [
        {
          toolCalls: [{ name: 'edit_file', arguments: { path: 'notes.txt', oldString: 'beta', newString: 'BETA' } }],
        },
        { text: 'Edited.' },
      ],
      { project },
    );
    await terminal.type('change beta');
    await terminal.press('Enter');
    // The choices are the last line of the approval: once they show, the whole of it has been drawn.
    const screen = await terminal.waitFor('[e] accept edits for this session');
    expect(screen).toContain('edit_file asks for approval');
    expect(screen).toMatch(/^\s*-beta$/m);
    expect(screen).toMatch(/^\s*\+BETA$/m);
    const coloured = await terminal.screen({ escapes: true });
    // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes are what it finds
    expect(coloured).toMatch(/\u001b\[[0-9;]*3[12]m\s*[-+]/);
    // One key, no Enter.
    await terminal.press('y');
    await terminal.waitFor('Edited.');
    // The tool card after the call shows the same diff again (read with what scrolled off the screen).
    const after = await terminal.screen({ history: true });
    expect(after.match(/^\s*\+BETA$/gm)).toHaveLength(2);
    expect(await readFile(join(project, 'notes.txt'), 'utf8')).toBe('alpha\nBETA\ngamma\n');
    expect(llm.requests).toHaveLength(2);
  });

  it('sends a paste of several lines as one prompt', async () => {
    const { terminal, llm } = await chatInTerminal([{ text: 'Got both lines.' }]);
    await terminal.paste('first line of the paste\nsecond line of the paste');
    await terminal.waitFor('second line of the paste');
    expect(llm.requests).toHaveLength(0);
    await terminal.press('Enter');
    await terminal.waitFor('Got both lines.');
    const users = llm.requests[0]?.messages.filter((message) => message.role === 'user') ?? [];
    expect(users).toHaveLength(1);
    expect(String(users[0]?.content)).toContain('first line of the paste\nsecond line of the paste');
  });

  it('starts a new line with a backslash at its end, and recalls an earlier prompt with Up', async () => {
    const { terminal, llm } = await chatInTerminal([{ text: 'One.' }, { text: 'Two.' }]);
    await terminal.type('top\\');
    await terminal.press('Enter');
    await terminal.type('bottom');
    await terminal.press('Enter');
    await terminal.waitFor('One.');
    expect(String(llm.requests[0]?.messages.at(-1)?.content)).toBe('top\nbottom');
    await terminal.press('Up');
    await terminal.waitFor(/┆ bottom\s*$/);
    await terminal.press('Enter');
    await terminal.waitFor('Two.');
    expect(String(llm.requests[1]?.messages.at(-1)?.content)).toBe('top\nbottom');
  });

  it('shows a status line with the running tool while it runs, and Esc interrupts it', async () => {
    const project = await tempDir();
    const { terminal } = await chatInTerminal(
      [{ toolCalls: [{ name: 'shell_exec', arguments: { command: 'sleep 300' } }] }, { text: 'Stopped.' }],
      { project },
    );
    await terminal.type('wait');
    await terminal.press('Enter');
    await terminal.waitFor('shell_exec asks for approval');
    await terminal.press('y');
    const screen = await terminal.waitFor(/running \d+s · shell_exec · .*esc to interrupt/);
    expect(screen).toContain('esc to interrupt');
    await terminal.press('Escape');
    await terminal.waitFor('(turn ended: aborted)');
  });

  it('resumes the last session of the directory with --continue and prints its history', async () => {
    const home = await tempDir();
    const project = await tempDir();
    const first = await chatInTerminal([{ text: 'The first answer.' }], { home, project });
    await first.terminal.type('the first question');
    await first.terminal.press('Enter');
    await first.terminal.waitFor('The first answer.');
    await first.terminal.press('C-d');
    await waitUntil(async () => !(await first.terminal.alive()), { what: 'the first chat to leave' });
    await first.terminal.close();

    const again = await chatInTerminal([], { home, project, args: ['--continue'] });
    const screen = await again.terminal.screen();
    expect(screen).toContain('› the first question');
    expect(screen).toContain('The first answer.');
  });

  it('shows a banner with the line and column of a broken permissions.jsonc', async () => {
    const { terminal, home } = await chatInTerminal([]);
    const workers = join(home, 'workers');
    const [workerId] = await readdir(workers);
    await writeFile(
      join(workers, workerId ?? '', 'permissions.jsonc'),
      '{\n  "shell_exec": { "*": "ask" }\n  "glob": {}\n}\n',
    );
    const screen = await terminal.waitFor('permissions.jsonc is broken at line 3, column 3');
    expect(screen).not.toMatch(/CommaExpected|PropertyNameExpected/);
  });

  it('writes no colour with NO_COLOR set', async () => {
    const { terminal } = await chatInTerminal([{ text: 'Some **bold** and `code`.\n\n```js\nconst a = 1;\n```' }], {
      env: { NO_COLOR: '1' },
    });
    await terminal.type('hi');
    await terminal.press('Enter');
    await terminal.waitFor('const a = 1;');
    expect(await terminal.screen({ escapes: true })).not.toMatch(COLOUR);
  });

  it('colours roles and states on a terminal by default', async () => {
    const { terminal } = await chatInTerminal([{ text: 'Hello.' }]);
    await terminal.type('hi');
    await terminal.press('Enter');
    await terminal.waitFor('Hello.');
    expect(await terminal.screen({ escapes: true })).toMatch(COLOUR);
  });

  it('saves the "always" pattern as the person edited it', async () => {
    const { terminal, home } = await chatInTerminal([
      { toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo one' } }] },
      { text: 'Ran one.' },
    ]);
    await terminal.type('say one');
    await terminal.press('Enter');
    await terminal.waitFor('shell_exec asks for approval');
    await terminal.press('a');
    await terminal.waitFor('allow: echo *');
    // Narrow the offered pattern to the exact command before saving it.
    await terminal.press('BSpace');
    await terminal.type('one');
    await terminal.press('Enter');
    await terminal.waitFor('Ran one.');
    const [workerId] = await readdir(join(home, 'workers'));
    const rules = await readFile(join(home, 'workers', workerId ?? '', 'permissions.jsonc'), 'utf8');
    expect(rules).toMatch(/"echo one": \{ "action": "allow"/);
    expect(rules).not.toContain('"echo *"');
  });

  it('completes a command with Tab and writes a prompt in $EDITOR with /edit', async () => {
    const project = await tempDir();
    const editor = join(project, 'fake-editor.sh');
    await writeFile(editor, '#!/bin/sh\nprintf "from the editor\\nsecond line\\n" > "$1"\n', { mode: 0o755 });
    const { terminal, llm } = await chatInTerminal([{ text: 'Read it.' }], { project, env: { EDITOR: editor } });
    await terminal.type('/us');
    await terminal.press('Tab');
    await terminal.waitFor(/› \/usage\s*$/);
    await terminal.press('C-u');
    await terminal.type('/edit');
    await terminal.press('Enter');
    await terminal.waitFor(/┆ second line\s*$/);
    await terminal.press('Enter');
    await terminal.waitFor('Read it.');
    expect(String(llm.requests[0]?.messages.at(-1)?.content)).toBe('from the editor\nsecond line');
  });

  it('resumes a session picked from /sessions, printing its history', async () => {
    const { terminal } = await chatInTerminal([{ text: 'Answer in the old session.' }]);
    await terminal.type('question in the old session');
    await terminal.press('Enter');
    await terminal.waitFor('Answer in the old session.');
    await terminal.type('/new');
    await terminal.press('Enter');
    await terminal.waitFor('new session');
    await terminal.type('/sessions');
    await terminal.press('Enter');
    await terminal.waitFor('resume a session');
    await terminal.press('Enter');
    // The session is titled from its first prompt; its history follows its name.
    const screen = await terminal.waitFor(/session question in the old session · [\s\S]*Answer in the old session\./);
    expect(screen.split('Answer in the old session.').length).toBe(3);
  });

  it('says when the link is lost, and that it resumed once the server is back', async () => {
    const { llm, dataDir, local, terminal } = await chatWithServer([
      { text: 'Before the restart.' },
      { text: 'Still here.' },
    ]);
    await terminal.type('hello');
    await terminal.press('Enter');
    await terminal.waitFor('Before the restart.');
    const { port } = local.server;
    await local.server.close();
    await terminal.waitFor('reconnecting to the server…');
    const again = await createServer({
      port,
      dataDir,
      tokens: local.tokens,
      models: { defaultModel: 'fake/m', custom: { fake: { baseURL: llm.baseURL } } },
    });
    cleanups.push(() => again.close());
    await terminal.waitFor('(server restarted, resumed)');
    expect(await terminal.screen()).not.toContain('reconnecting to the server…');
    await waitUntil(() => again.registry.list().some((worker) => worker.state === 'online'), {
      what: 'the worker back',
    });
    await terminal.type('still there?');
    await terminal.press('Enter');
    await terminal.waitFor('Still here.');
  });

  it('says at start that the model has no key, naming the variable to set', async () => {
    const home = await tempDir();
    const project = await tempDir();
    await writeFile(join(home, 'config.jsonc'), JSON.stringify({ model: 'anthropic/claude-sonnet-4-5' }));
    const terminal = await startTerminal(['chat'], {
      cwd: project,
      env: { MOLF_HOME: home, MOLF_LOG_FILE: 'none' },
    });
    await terminal.waitFor(/the model anthropic\/claude-sonnet-4-5 has no key — .*ANTHROPIC_API_KEY/);
  });

  it('tells when its worker goes offline while it runs, and when it is back', async () => {
    const { project, local, terminal } = await chatWithServer([]);
    await local.worker.close();
    await terminal.waitFor(/! worker \S+ \(.*\) is offline — prompts wait for it/);
    const again = await createWorker({ serverUrl: local.server.url, token: local.tokens.worker, workdir: project });
    cleanups.push(() => again.close());
    await terminal.waitFor(/✓ worker \S+ is online again/);
  });

  it('leaves no empty session behind when the terminal closes or it is killed', async () => {
    const { terminal, home } = await chatInTerminal([]);
    const sessions = join(home, 'sessions');
    await waitUntil(async () => (await readdir(sessions).catch(() => [])).length > 0, {
      what: 'the chat session to exist',
    });
    // SIGTERM to the chat's process group, as a closed terminal or a service manager sends.
    await terminal.close();
    const left = (await readdir(sessions)).filter((name) => !name.startsWith('.') && !name.endsWith('.json'));
    expect(left).toEqual([]);
  });
});
