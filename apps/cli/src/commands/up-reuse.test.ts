import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMolfClient } from '@molf/client/node';
import { type FakeTurn, startFakeLlm } from '@molf/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  captureOutput,
  type MolfProcess,
  spawnMolf,
  WAIT_DEADLINE_MS,
  waitForOutput,
  writeFakeModelConfig,
} from '../testing/cli-test-kit.ts';

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-up-reuse-'));
  onTestFinished(() => rm(path, { recursive: true, force: true, maxRetries: 3 }));
  return path;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * A project with `molf up` data (the fake LLM as its model), and env for the commands run in it:
 * their own MOLF_HOME has no model, so a command that started its own server could not answer.
 */
async function setup(turns: FakeTurn[]) {
  const llm = await startFakeLlm({ turns });
  onTestFinished(() => llm.close());
  const upData = await tempDir();
  await writeFakeModelConfig(upData, llm.baseURL);
  const project = join(await tempDir(), 'project');
  await mkdir(project);
  const clientDir = await tempDir();
  const env = {
    HOME: await tempDir(),
    MOLF_HOME: await tempDir(),
    MOLF_CLIENT_DIR: clientDir,
    MOLF_LOG_FILE: 'none',
  };
  const up = async (port = 0) => {
    const child = spawnMolf(['up', '--port', String(port), '--data-dir', upData, '--sandbox', 'off'], {
      cwd: project,
      env,
    });
    const banner = await waitForOutput(child, 'Ctrl-C stops everything');
    return {
      child,
      url: /server: {2}(ws:\/\/\S+)/.exec(banner)?.[1] ?? '',
      token: /client token: (\S+)/.exec(banner)?.[1] ?? '',
    };
  };
  return { llm, project, clientDir, env, up };
}

/** Stops a `molf up` the way Ctrl-C in its terminal does, and waits for it to end. */
async function stopUp(up: MolfProcess): Promise<void> {
  process.kill(-(up.pid as number), 'SIGINT');
  await up;
}

describe('molf run and molf chat where molf up runs', () => {
  it('use the server of the live molf up for this directory, and say so, instead of starting their own', async () => {
    const { project, env, up: startUp, llm } = await setup([{ text: 'answered by molf up' }, { text: 'chat too' }]);
    const up = await startUp();

    const run = await spawnMolf(['run', 'hello'], { cwd: project, env });
    expect(run.stderr).toContain(`molf: using the server of \`molf up\` at ${up.url}`);
    expect(run.stdout).toBe('answered by molf up');
    expect(run.exitCode).toBe(0);
    const sessionId = /session: (\S+)/.exec(run.stderr)?.[1];
    await using client = createMolfClient({ url: up.url, token: up.token });
    await client.ready({ timeoutMs: WAIT_DEADLINE_MS });
    const { session } = await client.rpc.sessions.get.query({ sessionId: sessionId ?? '' });
    expect(session.sessionId).toBe(sessionId);

    const chat = spawnMolf(['chat'], { cwd: join(project), env, stdin: 'pipe' });
    const output = captureOutput(chat);
    await output.seen('molf chat — session');
    expect(output.text()).toContain(`using the server of \`molf up\` at ${up.url}`);
    chat.stdin?.write('hi\n');
    await output.seen('chat too');
    chat.stdin?.end('/exit\n');
    expect((await chat).exitCode).toBe(0);
    expect(llm.requests).toHaveLength(2);
  });

  it('do not use the saved connection of a molf up that is gone: they start their own stack as before', async () => {
    const { project, env, clientDir, llm, up: startUp } = await setup([{ text: 'from my own stack' }]);
    const up = await startUp();
    await stopUp(up.child);
    // The record is still there, pointing at a server that is down; the command's own home has a model.
    expect(await readFile(join(clientDir, 'connections.json'), 'utf8')).toContain(up.url);
    await writeFakeModelConfig(env.MOLF_HOME, llm.baseURL);

    const run = await spawnMolf(['run', 'hello'], { cwd: project, env });
    expect(run.stdout).toBe('from my own stack');
    expect(run.stderr).not.toContain('using the server of `molf up`');
    expect(run.exitCode).toBe(0);
  });
});

describe('molf up restarted under an open molf chat', () => {
  it('keeps its client token (saved 0600), so the chat reconnects once and goes on', async () => {
    const { project, env, clientDir, up: startUp } = await setup([{ text: 'after the restart' }]);
    const port = await freePort();
    const first = await startUp(port);
    const chat = spawnMolf(['chat'], { cwd: project, env, stdin: 'pipe' });
    const output = captureOutput(chat);
    await output.seen('molf chat — session');

    await stopUp(first.child);
    await output.seen('connection to the server');
    const second = await startUp(port);
    expect(second.token).toBe(first.token);
    expect((await stat(join(clientDir, 'connections.json'))).mode & 0o777).toBe(0o600);
    await output.seen('reconnected');

    chat.stdin?.write('still there?\n');
    await output.seen('after the restart');
    // One line per change, however many attempts the reconnect took.
    expect(output.count('connection to the server')).toBe(1);
    expect(output.count('reconnected')).toBe(1);
    expect(output.text()).not.toContain(first.token);
    chat.stdin?.end('/exit\n');
    expect((await chat).exitCode).toBe(0);
  });

  it('a chat whose token the new server refuses stops retrying, says why and exits 1', async () => {
    const { project, env, clientDir, up: startUp } = await setup([]);
    const port = await freePort();
    const first = await startUp(port);
    const chat = spawnMolf(['chat'], { cwd: project, env, stdin: 'pipe' });
    const output = captureOutput(chat);
    await output.seen('molf chat — session');

    await stopUp(first.child);
    // Without the saved connection the next molf up makes new tokens: the chat's is unknown to it.
    await writeFile(join(clientDir, 'connections.json'), '{}');
    const second = await startUp(port);
    expect(second.token).not.toBe(first.token);

    const result = await chat;
    expect(result.exitCode).toBe(1);
    expect(output.text()).toContain(`the server at ${first.url} refused this client's token`);
  });
});
