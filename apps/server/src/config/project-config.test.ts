import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTempDir } from '../testing/test-link.ts';
import { type ServerConfigFile, toModelSettings } from './load-server-config.ts';
import { loadProjectConfigFile, projectConfigPath, withProjectConfig } from './project-config.ts';

async function projectWith(text: string | undefined): Promise<AsyncDisposable & { path: string }> {
  const dir = await createTempDir();
  const path = projectConfigPath(dir.path);
  if (text !== undefined) {
    await mkdir(join(dir.path, '.molf'), { recursive: true });
    await writeFile(path, text);
  }
  return { path, [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose]() };
}

describe("a project's .molf/config.jsonc", () => {
  it("reads the project's model and agent limits, and nothing when there is no file", async () => {
    await using project = await projectWith(
      '{\n  // this repo\n  "model": "fake/big",\n  "agent": { "maxSteps": 3 },\n}\n',
    );
    expect(await loadProjectConfigFile(project.path)).toEqual({ model: 'fake/big', agent: { maxSteps: 3 } });
    await using empty = await projectWith(undefined);
    expect(await loadProjectConfigFile(empty.path)).toEqual({});
  });

  it.each([
    [
      '{ "model": "fake/m",\n  "keys": { "openai": "sk-…" } }',
      '"keys": a project config holds only "model" and "agent" (its limits); "keys" belongs in the user config (line 2, column 3)',
    ],
    [
      '{ "agent": {\n    "maxSteps": 0 } }',
      '"agent.maxSteps": Too small: expected number to be >=1 (line 2, column 17)',
    ],
    ['{ "agent": { "maxStep": 5 } }', '"agent": Unrecognized key: "maxStep" (line 1, column 14)'],
    ['{ "model": "gpt-4.1" }', '"model": use provider/model, e.g. openai/gpt-4.1 (line 1, column 12)'],
    ['{ "model": "fake/m"\n  "agent": {} }', 'line 2, column 3: a comma is missing between two entries'],
  ])('refuses %j, naming the file, the setting, the line and the column', async (text, message) => {
    await using project = await projectWith(text);
    await expect(loadProjectConfigFile(project.path)).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringContaining(`${project.path}: ${message}`),
    });
  });
});

describe('the precedence of a model and agent limits: flag > env > project > user > default', () => {
  const user: ServerConfigFile = { model: 'fake/user', agent: { maxSteps: 5, maxQueue: 7 } };

  it.each<[string, { flagOrEnv?: string; project?: string; user?: string }, string | undefined]>([
    [
      'a flag or the environment (MOLF_MODEL) wins over both files',
      { flagOrEnv: 'fake/flag', project: 'fake/project', user: 'fake/user' },
      'fake/flag',
    ],
    ["the project's model wins over the user's", { project: 'fake/project', user: 'fake/user' }, 'fake/project'],
    ["the user's model is used when the project names none", { user: 'fake/user' }, 'fake/user'],
    ['no model at all when nothing names one', {}, undefined],
  ])('%s', (_title, given, expected) => {
    const file = withProjectConfig(
      given.user === undefined ? {} : { model: given.user },
      given.project === undefined ? {} : { model: given.project },
    );
    expect(toModelSettings(file, { model: given.flagOrEnv }).models.defaultModel).toBe(expected);
  });

  it("takes each agent limit the project sets over the user's, keeping the user's others and the defaults for the rest", () => {
    const file = withProjectConfig(user, { agent: { maxSteps: 2, turnTimeoutMs: 60_000 } });
    expect(toModelSettings(file, {}).agent).toEqual({ maxSteps: 2, maxQueue: 7, turnTimeoutMs: 60_000 });
    expect(withProjectConfig(user, {})).toEqual(user);
  });
});
