import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS, findCommandEntry } from './command-table.ts';
import { createProgram } from './create-program.ts';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
/** What users run: the bundle (rebuilt by the tests' global setup when stale). */
const LAUNCHER = fileURLToPath(new URL('../bin/molf.js', import.meta.url));

/** The module URLs a `molf` run of `entry` loads, as node's module hooks see them. */
async function modulesLoadedBy(args: string[], entry = MAIN): Promise<string[]> {
  const hook = `
    import { registerHooks } from 'node:module';
    const loaded = [];
    registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
    process.on('exit', () => process.stderr.write(JSON.stringify(loaded)));`;
  const { stderr } = await promisify(execFile)(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(hook)}`, entry, ...args],
    { env: { ...process.env, NO_COLOR: '1' } },
  );
  return JSON.parse(stderr) as string[];
}

describe('the command table', () => {
  it('lists every command in molf --help exactly as the modules register them', async () => {
    const eager = new Command('molf');
    for (const entry of COMMANDS) (await entry.load())(eager);
    const listed = await createProgram(['node', 'molf', '--help']);
    // The left column (terms), the descriptions and the order, as commander lays them out.
    const listing = (program: Command) =>
      program.createHelp().formatHelp(program, program.createHelp()).split('Commands:')[1];
    expect(listing(listed)).toBe(listing(eager));
    expect(COMMANDS.map((entry) => entry.name)).toEqual(eager.commands.map((command) => command.name()));
  });

  it('finds the command a line names, after help too, and none for --version or a typo', () => {
    expect(findCommandEntry(['worker', '--server', 'ws://x'])?.name).toBe('worker');
    expect(findCommandEntry(['help', 'token'])?.name).toBe('token');
    expect(findCommandEntry(['--help', 'up'])?.name).toBe('up');
    expect(findCommandEntry(['--version'])).toBeUndefined();
    expect(findCommandEntry(['wrokers'])).toBeUndefined();
  });

  it('registers only the named command, so the others are never imported', async () => {
    const program = await createProgram(['node', 'molf', 'workers', '--help']);
    expect(program.commands.map((command) => command.name())).toEqual(['workers']);
  });

  it.each([['--version'], ['--help']])('molf %s loads no command module and no Molf package', async (flag) => {
    const loaded = await modulesLoadedBy([flag]);
    expect(loaded.some((url) => url.endsWith('/create-program.ts'))).toBe(true);
    expect(loaded.filter((url) => /\/commands\/|\/(apps\/(server|worker)|packages\/[a-z]+)\//.test(url))).toEqual([]);
  });

  it('completing a command name (molf __complete ch, for the shell scripts) loads no command module', async () => {
    const loaded = await modulesLoadedBy(['__complete', 'ch']);
    expect(loaded.some((url) => url.endsWith('/complete-words.ts'))).toBe(true);
    expect(loaded.filter((url) => /\/commands\/|\/(apps\/(server|worker)|packages\/[a-z]+)\//.test(url))).toEqual([]);
  });

  it('molf --version as users run it loads no dependency but commander', async () => {
    const loaded = await modulesLoadedBy(['--version'], LAUNCHER);
    const dependencies = new Set(
      loaded.flatMap((url) => /\/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?([^/]+)/.exec(url)?.[1] ?? []),
    );
    expect([...dependencies]).toEqual(['commander']);
  });
});
