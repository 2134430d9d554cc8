// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the test scripts are shell, whose own syntax is ${…}
import { existsSync } from 'node:fs';
import { mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCommand, spawnMolf } from '../testing/cli-test-kit.ts';

/** `molf` on PATH as users install it: scripts/molf linked into a bin directory. */
const LAUNCHER = fileURLToPath(new URL('../../../../scripts/molf', import.meta.url));

let bin: string;
let env: Record<string, string>;

beforeAll(async () => {
  bin = await realpath(await mkdtemp(join(tmpdir(), 'molf-completion-')));
  await symlink(LAUNCHER, join(bin, 'molf'));
  env = { PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` };
});
afterAll(async () => {
  await rm(bin, { recursive: true, force: true });
});

/** Where a shell lives, if this machine has it. Under CI every shell must be there (.ci/run installs them). */
function findShell(name: string): string | undefined {
  const found = ['/usr/bin', '/bin', '/usr/local/bin'].map((dir) => join(dir, name)).find((path) => existsSync(path));
  if (found === undefined && process.env.CI === 'true') throw new Error(`CI=true, but ${name} is not installed`);
  return found;
}

/** The long options a `molf … --help` lists, and its subcommands: what completion must offer. */
async function helpOf(args: string[]): Promise<{ options: string[]; commands: string[] }> {
  const help = (await spawnMolf([...args, '--help'])).stdout;
  const section = (title: string) => help.split(`${title}:\n`)[1]?.split('\n\n')[0] ?? '';
  return {
    options: [...section('Options').matchAll(/^ {2}(?:-\w, )?(--[\w-]+)/gm)].map((match) => match[1] as string),
    commands: [...section('Commands').matchAll(/^ {2}([\w-]+)/gm)].map((match) => match[1] as string),
  };
}

/** What bash's completion function puts in COMPREPLY for `line` (the cursor at its end), after `source <(molf completion bash)`. */
async function completeInBash(line: string): Promise<string[]> {
  const words = line.split(' ');
  const script = [
    'source <(molf completion bash)',
    // The registration the script makes, printed first, so a test sees it.
    'complete -p molf',
    `COMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')})`,
    `COMP_CWORD=${words.length - 1}`,
    `COMP_LINE='${line}'`,
    `COMP_POINT=${line.length}`,
    '_molf',
    'printf "%s\\n" "${COMPREPLY[@]}"',
  ].join('\n');
  const result = await spawnCommand('bash', ['--norc', '--noprofile', '-c', script], { env });
  expect(result.stderr).toBe('');
  const [registration, ...candidates] = result.stdout.split('\n');
  expect(registration).toBe('complete -o default -F _molf molf');
  return candidates.filter((candidate) => candidate !== '');
}

describe('molf completion bash, loaded in a real bash', () => {
  it('completes a command name: molf ch<TAB> is chat', async () => {
    expect(await completeInBash('molf ch')).toEqual(['chat']);
  });

  it('offers every command (and help) for a new word after molf', async () => {
    const candidates = await completeInBash('molf ');
    expect(candidates).toEqual([...(await helpOf([])).commands]);
    expect(candidates).toContain('completion');
  });

  it('completes molf run --<TAB> to exactly the options molf run --help lists', async () => {
    const candidates = await completeInBash('molf run --');
    expect(candidates).toContain('--on-ask');
    expect(candidates.toSorted()).toEqual((await helpOf(['run'])).options.toSorted());
  });

  it("completes molf cron <TAB> to cron's subcommands, and an option of a subcommand after it", async () => {
    const { commands } = await helpOf(['cron']);
    expect(commands).toContain('add');
    expect(await completeInBash('molf cron ')).toEqual(commands);
    expect(await completeInBash('molf cron add --ev')).toEqual(['--every']);
  });

  it("completes an argument's choices: molf completion <TAB> is the three shells", async () => {
    expect(await completeInBash('molf completion ')).toEqual(['bash', 'zsh', 'fish']);
    expect(await completeInBash('molf completion z')).toEqual(['zsh']);
  });

  it('offers nothing where it knows no candidates (an option value, an unknown command), so bash completes file names', async () => {
    expect(await completeInBash('molf cron add --every 5m --mi')).toEqual(['--missed']);
    expect(await completeInBash('molf tool --workdir ')).toEqual([]);
    expect(await completeInBash('molf no-such-command ')).toEqual([]);
  });
});

describe('molf completion zsh and fish', () => {
  const zsh = findShell('zsh');
  const fish = findShell('fish');

  it.skipIf(zsh === undefined)('the zsh script parses, and its function offers what molf __complete says', async () => {
    const file = join(bin, '_molf');
    await writeFile(file, (await spawnMolf(['completion', 'zsh'])).stdout);
    const parse = await spawnCommand(zsh as string, ['-n', file], { env });
    expect(parse.exitCode, parse.stderr).toBe(0);
    // The completion system's own functions stand in as printers: the script's part is the rest.
    const script = [
      'compdef() { print -r -- "compdef $*"; }',
      '_describe() { print -rl -- "${(@P)4}"; }',
      '_files() { print -r -- "(files)"; }',
      `source ${file}`,
      'words=(molf ch); CURRENT=2; _molf',
      'words=(molf completion ""); CURRENT=3; _molf',
      'words=(molf tool --workdir ""); CURRENT=4; _molf',
    ].join('\n');
    const result = await spawnCommand(zsh as string, ['-f', '-c', script], { env });
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n')).toEqual([
      'compdef _molf molf',
      expect.stringMatching(/^chat:interactive session in the terminal/),
      'bash',
      'zsh',
      'fish',
      '(files)',
    ]);
  });

  it.skipIf(fish === undefined)('the fish script parses and completes in a real fish', async () => {
    const file = join(bin, 'molf.fish');
    await writeFile(file, (await spawnMolf(['completion', 'fish'])).stdout);
    const parse = await spawnCommand(fish as string, ['--no-execute', file], { env });
    expect(parse.exitCode, parse.stderr).toBe(0);
    const script = `source ${file}; complete -C 'molf ch'; complete -C 'molf cron '`;
    const result = await spawnCommand(fish as string, ['--no-config', '-c', script], { env });
    expect(result.stderr).toBe('');
    const lines = result.stdout.split('\n').filter((line) => line !== '');
    expect(lines[0]).toMatch(/^chat\tinteractive session in the terminal/);
    expect(
      lines
        .slice(1)
        .map((line) => line.split('\t')[0])
        .toSorted(),
    ).toEqual((await helpOf(['cron'])).commands.toSorted());
  });
});
