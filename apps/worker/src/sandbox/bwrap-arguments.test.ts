import { describe, expect, it } from 'vitest';
import { toBwrapArguments } from './bwrap-arguments.ts';

/** The option words of an argument list, each with its values, in order. */
function options(args: string[]): string[][] {
  const arity: Record<string, number> = {
    '--ro-bind': 2,
    '--bind': 2,
    '--bind-fd': 2,
    '--ro-bind-fd': 2,
    '--dev': 1,
    '--proc': 1,
    '--tmpfs': 1,
    '--chdir': 1,
    '--cap-drop': 1,
  };
  const grouped: string[][] = [];
  for (let index = 0; index < args.length; ) {
    const word = args[index] as string;
    const count = arity[word] ?? 0;
    grouped.push(args.slice(index, index + 1 + count));
    index += 1 + count;
  }
  return grouped;
}

describe('the bwrap arguments of a sandbox policy', () => {
  const base = { cwd: '/w', network: true, mounts: [] };

  it('always drops every capability, starts a new PID namespace and session, and dies with the worker', () => {
    const args = toBwrapArguments(base);
    expect(options(args)).toEqual(
      expect.arrayContaining([['--die-with-parent'], ['--unshare-pid'], ['--new-session'], ['--cap-drop', 'ALL']]),
    );
    expect(args).not.toContain('--unshare-net');
  });

  it('cuts the network only when the policy says so', () => {
    expect(toBwrapArguments({ ...base, network: false })).toContain('--unshare-net');
  });

  it('mounts the root read-only, then a fresh /dev, /proc and private /tmp, then the mounts, then changes directory', () => {
    const args = toBwrapArguments({
      ...base,
      mounts: [
        { type: 'writable', path: '/tmp/w' },
        { type: 'read-only', path: '/tmp/w/.molf' },
        { type: 'hidden-directory', path: '/home/me/.molf' },
        { type: 'hidden-file', path: '/tmp/w/token' },
      ],
      cwd: '/tmp/w/src',
    });
    expect(options(args).filter((option) => option[0] !== undefined && option.length > 1)).toEqual([
      ['--cap-drop', 'ALL'],
      ['--ro-bind', '/', '/'],
      ['--dev', '/dev'],
      ['--proc', '/proc'],
      ['--tmpfs', '/tmp'],
      ['--bind', '/tmp/w', '/tmp/w'],
      ['--ro-bind', '/tmp/w/.molf', '/tmp/w/.molf'],
      ['--tmpfs', '/home/me/.molf'],
      ['--ro-bind', '/dev/null', '/tmp/w/token'],
      ['--chdir', '/tmp/w/src'],
    ]);
  });

  it('binds from descriptors where the planner gave one, and never pins a directory by its path', () => {
    const args = toBwrapArguments({
      ...base,
      mounts: [
        { type: 'writable', path: '/w' },
        { type: 'pinned', path: '/w/.git', fd: 3 },
        { type: 'pinned', path: '/w/src' },
        { type: 'read-only', path: '/w/.git/config', fd: 4 },
      ],
    });
    expect(options(args).filter((option) => option[0]?.includes('bind') === true && option[1] !== '/')).toEqual([
      ['--bind', '/w', '/w'],
      ['--bind-fd', '3', '/w/.git'],
      ['--ro-bind-fd', '4', '/w/.git/config'],
    ]);
  });
});
