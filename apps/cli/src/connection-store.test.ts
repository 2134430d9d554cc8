import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findConnection, loadConnection, parseConnectionsFile, saveConnection } from './connection-store.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function setUp(): Promise<{ env: NodeJS.ProcessEnv; clientDir: string; project: string }> {
  const root = await mkdtemp(join(tmpdir(), 'molf-connections-'));
  dirs.push(root);
  const project = join(root, 'project');
  await mkdir(join(project, 'src'), { recursive: true });
  const clientDir = join(root, 'client');
  return { env: { MOLF_CLIENT_DIR: clientDir }, clientDir, project };
}

describe('the saved connections of molf up', () => {
  it('saves a connection 0600 and finds it from the project and its subdirectories', async () => {
    const { env, clientDir, project } = await setUp();
    const file = await saveConnection({ projectDir: project, url: 'ws://127.0.0.1:7600', token: 'molf_c_abc', env });
    expect(file).toBe(join(clientDir, 'connections.json'));
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await loadConnection(project, env)).toMatchObject({ url: 'ws://127.0.0.1:7600', token: 'molf_c_abc' });
    expect(await findConnection(join(project, 'src'), env)).toMatchObject({ projectDir: project, token: 'molf_c_abc' });
    // Only for the project itself, not its subdirectories, is it "the connection saved here".
    expect(await loadConnection(join(project, 'src'), env)).toBeUndefined();
  });

  it('replaces the file whole, keeps the other projects and leaves no temporary file', async () => {
    const { env, clientDir, project } = await setUp();
    const other = join(project, 'src');
    await saveConnection({ projectDir: other, url: 'ws://127.0.0.1:1', token: 'molf_c_other', env });
    await saveConnection({ projectDir: project, url: 'ws://127.0.0.1:2', token: 'molf_c_first', env });
    await saveConnection({ projectDir: project, url: 'ws://127.0.0.1:3', token: 'molf_c_second', env });
    expect(await readdir(clientDir)).toEqual(['connections.json']);
    expect(await loadConnection(project, env)).toMatchObject({ url: 'ws://127.0.0.1:3', token: 'molf_c_second' });
    expect(await loadConnection(other, env)).toMatchObject({ token: 'molf_c_other' });
  });

  it('reads a damaged or foreign file as no saved connection, and the next save rewrites it', async () => {
    const { env, clientDir, project } = await setUp();
    await mkdir(clientDir, { recursive: true });
    const file = join(clientDir, 'connections.json');
    for (const text of [
      'not json',
      'null',
      '[]',
      '{"version":2,"connections":{}}',
      '{"version":1,"connections":[]}',
      `{"version":1,"connections":{"${project}":{"url":"ws://x","token":7,"savedAt":"now"}}}`,
    ]) {
      await writeFile(file, text);
      expect(await loadConnection(project, env), text).toBeUndefined();
    }
    await saveConnection({ projectDir: project, url: 'ws://127.0.0.1:4', token: 'molf_c_new', env });
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ version: 1 });
  });

  it('parses exactly the version 1 shape', () => {
    const connection = { url: 'ws://127.0.0.1:7600', token: 'molf_c_abc', savedAt: '2026-11-23T00:00:00.000Z' };
    expect(parseConnectionsFile({ version: 1, connections: { '/p': connection } })).toEqual({ '/p': connection });
    expect(parseConnectionsFile({ version: 1, connections: { '/p': { ...connection, url: undefined } } })).toBe(
      undefined,
    );
    expect(parseConnectionsFile({ version: 1 })).toBeUndefined();
  });
});
