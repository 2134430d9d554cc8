import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { serverForChat } from '../testing/chat-terminal-kit.ts';
import { spawnMolf, useTestScope } from '../testing/cli-test-kit.ts';

const scope = useTestScope('roles');

const VIEWER_REFUSAL =
  'molf: this credential is a viewer: it can read sessions but not prompt; ' +
  'ask an admin for an operator credential (molf pair --role operator)';

describe('molf chat and molf run by role', () => {
  it('stops a viewer at the start of molf chat and molf run with one line and exit 1, making no session', async () => {
    const { llm, dataDir, project, local } = await serverForChat(scope, [{ text: 'never asked' }], {
      tokenSuffix: 'roles-viewer-server-token-01',
    });
    const { token } = await local.server.credentials.create({ role: 'viewer', label: 'screen' });
    const env = { MOLF_LOG_FILE: 'none', MOLF_CLIENT_DIR: dataDir };
    const server = ['--server', local.server.url, '--token', token, '--worker', local.worker.workerId];

    const chat = await spawnMolf(['chat', ...server], { cwd: project, env, input: 'hello\n' });
    expect({ exitCode: chat.exitCode, stderr: chat.stderr, stdout: chat.stdout }).toEqual({
      exitCode: 1,
      stderr: VIEWER_REFUSAL,
      stdout: '',
    });
    const run = await spawnMolf(['run', ...server, 'hello'], { cwd: project, env });
    expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 1, stderr: VIEWER_REFUSAL });

    expect((await local.server.sessions.list({ limit: 10, offset: 0 })).total).toBe(0);
    expect(llm.requests).toHaveLength(0);
  });

  it('offers an operator no "always" in the chat, says it needs an admin, and the a key answers nothing', async () => {
    const { local, openChat } = await serverForChat(
      scope,
      [{ toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo one' } }] }, { text: 'Ran one.' }],
      { tokenSuffix: 'roles-operator-server-token-01' },
    );
    const { token } = await local.server.credentials.create({ role: 'operator', label: 'ops' });
    const terminal = await openChat(token);
    await terminal.type('say one');
    await terminal.press('Enter');
    const asking = await terminal.waitFor('needs an admin credential');
    expect(asking).toContain('session allow: "echo *"');
    expect(asking).toContain('[s] this session');
    expect(asking).not.toContain('[a]');

    // "a" opens no pattern editor: the "y" after it is the answer, not text typed into one.
    await terminal.press('a');
    await terminal.press('y');
    await terminal.waitFor('Ran one.');
    expect(await terminal.screen({ history: true })).not.toContain('save as allow rules');
    const rules = await readFile(local.server.permissions.pathOf(local.worker.workerId), 'utf8');
    expect(rules).not.toContain('"echo *"');
  });
});
