import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeLlm, type FakeTurn, startFakeLlm } from '@molf/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnMolf, stopSpawnedProcesses, waitForOutput } from '../testing/cli-test-kit.ts';

const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  // The processes first: the cleanups remove directories they use.
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-project-config-'));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

async function writeJsonc(path: string, value: unknown): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, JSON.stringify(value, null, 2));
}

/**
 * A home whose user config (~/.config/molf/config.jsonc) names the fake LLM and a model and step
 * limit of its own, and a project whose .molf/config.jsonc is `project`.
 */
async function setup(turns: FakeTurn[], project: Record<string, unknown> | string | undefined) {
  const llm: FakeLlm = await startFakeLlm({ turns });
  cleanups.push(() => llm.close());
  const home = await tempDir();
  const projectDir = await tempDir();
  await writeJsonc(join(home, '.config', 'molf', 'config.jsonc'), {
    model: 'fake/user-model',
    providers: { fake: { baseURL: llm.baseURL } },
    agent: { maxSteps: 5 },
  });
  const file = join(projectDir, '.molf', 'config.jsonc');
  if (typeof project === 'string') {
    await mkdir(join(projectDir, '.molf'), { recursive: true });
    await writeFile(file, project);
  } else if (project !== undefined) {
    await writeJsonc(file, project);
  }
  const env = { HOME: home, MOLF_LOG_FILE: 'none', PATH: process.env.PATH ?? '/usr/bin:/bin' };
  return { llm, home, projectDir, file, env };
}

describe("a project's .molf/config.jsonc", () => {
  it('gives molf run its model under a flag and MOLF_MODEL, over the user config', async () => {
    const turns = Array.from({ length: 4 }, () => ({ text: 'ok' }));
    const { llm, projectDir, env } = await setup(turns, { model: 'fake/project-model' });
    const models: string[] = [];
    const run = async (args: string[], extra: Record<string, string> = {}, cwd = projectDir) => {
      const result = await spawnMolf(['run', ...args, 'hello'], { cwd, env: { ...env, ...extra }, extendEnv: false });
      expect(result.exitCode, result.stderr).toBe(0);
      models.push(llm.requests.at(-1)?.model ?? '');
    };
    await run([]);
    await run([], { MOLF_MODEL: 'fake/env-model' });
    await run(['--model', 'fake/flag-model'], { MOLF_MODEL: 'fake/env-model' });
    // Elsewhere, no project config: the user's model.
    await run([], {}, await tempDir());
    expect(models).toEqual(['project-model', 'env-model', 'flag-model', 'user-model']);
  });

  it("gives the embedded server the project's agent limits over the user's", async () => {
    const { projectDir, env } = await setup(
      [{ toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] }, { text: 'never' }],
      { agent: { maxSteps: 1 } },
    );
    const result = await spawnMolf(['run', 'hello'], { cwd: projectDir, env, extendEnv: false });
    expect(result.stderr).toContain('the turn stopped after 1 model steps');
    expect(result.exitCode).toBe(3);
  });

  it('gives the server of molf up its model', async () => {
    const { llm, projectDir, env } = await setup([{ text: 'ok' }], { model: 'fake/project-model' });
    const up = spawnMolf(['up', '--port', '0', '--sandbox', 'off'], { cwd: projectDir, env, extendEnv: false });
    await waitForOutput(up, 'Ctrl-C stops everything');
    // Without a model of its own: the prompt goes to the server of `molf up`, with its default model.
    const result = await spawnMolf(['run', 'hello'], { cwd: projectDir, env, extendEnv: false });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain('using the server of `molf up`');
    expect(llm.requests.at(-1)?.model).toBe('project-model');
  });

  it('refuses a broken one before anything starts, naming the file, the setting, the line and the column', async () => {
    const { projectDir, file, env } = await setup(
      [{ text: 'never' }],
      '{\n  "model": "fake/m",\n  "keys": { "openai": "sk-x" }\n}\n',
    );
    for (const args of [
      ['run', 'hello'],
      ['up', '--port', '0'],
    ]) {
      const result = await spawnMolf(args, { cwd: projectDir, env, extendEnv: false });
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toBe(
        `molf: ${file}: "keys": a project config holds only "model" and "agent" (its limits); "keys" belongs in the user config (line 3, column 3)`,
      );
    }
  });
});
