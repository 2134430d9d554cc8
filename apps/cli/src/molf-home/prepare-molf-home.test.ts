import { spawn } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopProcessGroup } from '@molf/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { prepareMolfHome } from './prepare-molf-home.ts';

const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(base = tmpdir()): Promise<string> {
  const dir = await mkdtemp(join(base, 'molf-home-'));
  made.push(dir);
  return dir;
}

/** A file with its mode, made with its directories. */
async function put(path: string, text: string, mode = 0o644): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true, mode: 0o700 });
  await writeFile(path, text, { mode });
}

async function modeOf(path: string): Promise<string> {
  return ((await stat(path)).mode & 0o777).toString(8);
}

/** An old `~/.molf` as Molf left it: config, tokens' hashes, a key, a session, a log, saved connections. */
async function oldHome(home: string): Promise<string> {
  const legacy = join(home, '.molf');
  await put(join(legacy, 'config.jsonc'), '{ "model": "fake/m" }\n');
  await put(join(legacy, 'credentials.json'), '{"credentials":[]}\n', 0o600);
  await put(join(legacy, 'connections.json'), '{"version":1,"connections":{}}\n', 0o600);
  await put(join(legacy, 'secrets', 'link-key'), 'k'.repeat(32), 0o600);
  await put(join(legacy, 'sessions', 'abc', 'messages.jsonl'), '{"header":true}\n');
  await put(join(legacy, 'logs', 'server.log'), 'old log line\n');
  return legacy;
}

async function prepare(home: string, env: NodeJS.ProcessEnv = {}) {
  const notices: string[] = [];
  const outcome = await prepareMolfHome({ env, home, platform: 'linux', notice: (line) => notices.push(line) });
  return { outcome, notices, env };
}

describe('moving ~/.molf to the XDG places', () => {
  it('does nothing on a fresh machine', async () => {
    const home = await tempDir();
    const { outcome, notices } = await prepare(home);
    expect(outcome).toEqual({ type: 'none' });
    expect(notices).toEqual([]);
    expect(await readdir(home)).toEqual([]);
  });

  it('moves an old ~/.molf with its contents and modes, and leaves links to the new places and a README', async () => {
    const home = await tempDir();
    const legacy = await oldHome(home);
    const { outcome, notices, env } = await prepare(home);
    expect(outcome.type).toBe('migrated');
    expect(env).toEqual({});
    expect(notices).toEqual([
      'moved ~/.molf to ~/.config/molf, ~/.local/share/molf and ~/.local/state/molf (XDG); ~/.molf keeps links to the new places for older versions of Molf',
    ]);
    const data = join(home, '.local', 'share', 'molf');
    const state = join(home, '.local', 'state', 'molf');
    expect(await readFile(join(home, '.config', 'molf', 'config.jsonc'), 'utf8')).toBe('{ "model": "fake/m" }\n');
    expect(await readFile(join(data, 'sessions', 'abc', 'messages.jsonl'), 'utf8')).toBe('{"header":true}\n');
    expect(await readFile(join(state, 'logs', 'server.log'), 'utf8')).toBe('old log line\n');
    expect(await readFile(join(data, 'secrets', 'link-key'), 'utf8')).toBe('k'.repeat(32));
    // Secrets stay private to their owner.
    expect(await modeOf(join(data, 'credentials.json'))).toBe('600');
    expect(await modeOf(join(state, 'connections.json'))).toBe('600');
    expect(await modeOf(join(data, 'secrets', 'link-key'))).toBe('600');
    expect(await modeOf(join(data, 'secrets'))).toBe('700');
    // What is left: a link per entry (an older Molf reads through them) and the README.
    expect((await readdir(legacy)).sort()).toEqual([
      'README.md',
      'config.jsonc',
      'connections.json',
      'credentials.json',
      'logs',
      'secrets',
      'sessions',
    ]);
    expect(await readlink(join(legacy, 'credentials.json'))).toBe(join(data, 'credentials.json'));
    expect(await readlink(join(legacy, 'logs'))).toBe(join(state, 'logs'));
    expect(await readFile(join(legacy, 'config.jsonc'), 'utf8')).toBe('{ "model": "fake/m" }\n');
    expect(await readFile(join(legacy, 'README.md'), 'utf8')).toContain(
      `- data (credentials, sessions, workers, cron, audit): ${data}`,
    );

    // Once moved, a start finds nothing to do.
    expect(await prepare(home)).toMatchObject({ outcome: { type: 'none' }, notices: [] });
  });

  it('follows XDG_CONFIG_HOME, XDG_DATA_HOME and XDG_STATE_HOME', async () => {
    const home = await tempDir();
    const xdg = await tempDir();
    await oldHome(home);
    const env = {
      XDG_CONFIG_HOME: join(xdg, 'config'),
      XDG_DATA_HOME: join(xdg, 'data'),
      XDG_STATE_HOME: join(xdg, 'state'),
    };
    const { outcome } = await prepare(home, env);
    expect(outcome.type).toBe('migrated');
    expect((await readdir(join(xdg, 'config', 'molf'))).sort()).toEqual(['config.jsonc']);
    expect((await readdir(join(xdg, 'data', 'molf'))).sort()).toEqual(['credentials.json', 'secrets', 'sessions']);
    expect((await readdir(join(xdg, 'state', 'molf'))).sort()).toEqual(['connections.json', 'logs']);
    expect(await readdir(home)).toEqual(['.molf']);
  });

  it('never replaces what the new place holds: a file whose name is taken is kept beside it, directories are merged', async () => {
    const home = await tempDir();
    const legacy = await oldHome(home);
    const data = join(home, '.local', 'share', 'molf');
    await put(join(data, 'credentials.json'), '{"credentials":["new"]}\n', 0o600);
    await put(join(data, 'sessions', 'new', 'messages.jsonl'), '{"new":true}\n');
    const { outcome, notices } = await prepare(home);
    expect(outcome.type).toBe('migrated');
    expect(await readFile(join(data, 'credentials.json'), 'utf8')).toBe('{"credentials":["new"]}\n');
    expect(await readFile(join(data, 'credentials.json.from-dot-molf'), 'utf8')).toBe('{"credentials":[]}\n');
    expect(await modeOf(join(data, 'credentials.json.from-dot-molf'))).toBe('600');
    expect((await readdir(join(data, 'sessions'))).sort()).toEqual(['abc', 'new']);
    expect(await readlink(join(legacy, 'sessions'))).toBe(join(data, 'sessions'));
    expect(notices).toContain(
      '~/.molf/credentials.json was not moved over ~/.local/share/molf/credentials.json, which was there already: ' +
        'it is ~/.local/share/molf/credentials.json.from-dot-molf now; compare the two and keep one',
    );
  });

  it('moves what an older Molf wrote into ~/.molf after the move, again without replacing anything', async () => {
    const home = await tempDir();
    const legacy = await oldHome(home);
    await prepare(home);
    // An older `molf up` replaces the link with its own file, and starts a cron store.
    await rm(join(legacy, 'connections.json'));
    await put(join(legacy, 'connections.json'), '{"older":true}\n', 0o600);
    await put(join(legacy, 'cron', 'jobs.json'), '[]\n', 0o600);
    const { outcome } = await prepare(home);
    expect(outcome).toMatchObject({
      type: 'migrated',
      migration: {
        moved: [{ from: join(legacy, 'cron'), to: join(home, '.local', 'share', 'molf', 'cron') }],
        setAside: [{ from: join(legacy, 'connections.json') }],
      },
    });
    expect((await lstat(join(legacy, 'cron'))).isSymbolicLink()).toBe(true);
  });

  it.each([
    ['MOLF_HOME', (legacy: string) => ({ MOLF_HOME: legacy })],
    ['MOLF_CLIENT_DIR', (legacy: string) => ({ MOLF_CLIENT_DIR: legacy })],
  ])('leaves ~/.molf where it is while %s names it', async (_name, envOf) => {
    const home = await tempDir();
    const legacy = await oldHome(home);
    expect((await prepare(home, envOf(legacy))).outcome).toEqual({ type: 'none' });
    expect((await lstat(join(legacy, 'credentials.json'))).isFile()).toBe(true);
  });

  it('keeps ~/.molf for this run while another process has a file in it open, and moves it once that has ended', async () => {
    const home = await tempDir();
    const legacy = await oldHome(home);
    // A server of an older Molf, writing its log in ~/.molf.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `require('fs').openSync(${JSON.stringify(join(legacy, 'logs', 'server.log'))}, 'a'); console.log('open'); setInterval(() => {}, 1000)`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'], detached: true },
    );
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    try {
      await new Promise((resolve) => holder.stdout.once('data', resolve));
      const { outcome, notices, env } = await prepare(home);
      expect(outcome).toMatchObject({ type: 'kept', reason: 'in_use', users: [{ pid: holder.pid }] });
      expect(env).toEqual({ MOLF_HOME: legacy, MOLF_CLIENT_DIR: legacy });
      expect(notices).toEqual([
        expect.stringMatching(
          /^~\/\.molf is in use by pid \d+ \(.*\): this run uses it as before; Molf moves it to ~\/\.config\/molf, ~\/\.local\/share\/molf and ~\/\.local\/state\/molf at the first start after that has ended$/,
        ),
      ]);
      expect((await lstat(join(legacy, 'credentials.json'))).isFile()).toBe(true);
      expect(await readdir(home)).toEqual(['.molf']);
    } finally {
      await stopProcessGroup({ pid: holder.pid, exited });
    }
    expect((await prepare(home)).outcome.type).toBe('migrated');
  });
});
