import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { TEST_RUN_ENV } from '@molf/testkit';
import { execa } from 'execa';
import { CLI, stopWhenTestEnds, waitUntil } from './cli-test-kit.ts';

/**
 * `molf` in a real pseudo-terminal: a tmux server of its own (its own socket), one window of a
 * fixed size running the command, keys sent as a person types them, the screen read back as text.
 */
export type Terminal = {
  /**
   * The screen's text now (trailing blank lines dropped); `escapes` keeps the colour codes, `history`
   * adds the lines scrolled off above it.
   */
  screen(options?: { escapes?: boolean; history?: boolean }): Promise<string>;
  /** Waits until the screen shows `text` (or matches it), with a deadline for a loaded machine. */
  waitFor(text: string | RegExp, options?: { escapes?: boolean; history?: boolean }): Promise<string>;
  /** Types text literally, key by key. */
  type(text: string): Promise<void>;
  /** Presses keys by tmux's names: `Enter`, `Escape`, `C-c`, `Up`, `Tab`, `M-Enter`. */
  press(...keys: string[]): Promise<void>;
  /** Pastes text as a terminal does: bracketed when the program asked for it. */
  paste(text: string): Promise<void>;
  /** The window title the program has set (tmux's pane title), to see that nothing else set it. */
  title(): Promise<string>;
  /** Whether the command still runs. */
  alive(): Promise<boolean>;
  close(): Promise<void>;
};

/**
 * Whether a process of group `pgid` still runs. An exited one the tmux server has not reaped yet
 * (a zombie, which tmux may leave for seconds) does not: it holds no files and writes nothing.
 */
async function groupRuns(pgid: number): Promise<boolean> {
  const entries = await readdir('/proc').catch(() => undefined);
  if (entries === undefined) {
    // No /proc (not Linux): whether the group still has a member, zombies included.
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    // `pid (comm) state ppid pgrp …`: comm may hold spaces and parentheses, so read after the last ')'.
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z') return true;
  }
  return false;
}

/** The environment a terminal starts from: nothing of the test runner's but what finds programs. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' };
  const marker = process.env[TEST_RUN_ENV];
  if (marker !== undefined) env[TEST_RUN_ENV] = marker;
  return env;
}

/**
 * Starts `molf <args>` in a terminal `width`×`height`, with `env` on top of a bare environment
 * (no FORCE_COLOR or NO_COLOR from the test runner) and `TERM=xterm-256color`. Closed when the test
 * ends, before the test scope's cleanups: the command's process group is stopped, then the tmux server.
 */
export async function startTerminal(
  args: string[],
  options: { cwd: string; env?: Record<string, string>; width?: number; height?: number },
): Promise<Terminal> {
  const socket = `molf-test-${randomUUID().slice(0, 8)}`;
  const env = { ...baseEnv(), TERM: 'xterm-256color', ...options.env };
  const tmux = (...words: string[]) =>
    execa('tmux', ['-L', socket, '-f', '/dev/null', ...words], { env, extendEnv: false, reject: false });
  // tmux gives its panes its own TERM whatever the environment says: the command is started with ours.
  const command = ['env', `TERM=${env.TERM}`, process.execPath, CLI, ...args];
  const started = await tmux(
    'new-session',
    '-d',
    '-x',
    String(options.width ?? 100),
    '-y',
    String(options.height ?? 40),
    '-c',
    options.cwd,
    ...Object.entries(env).flatMap(([key, value]) => ['-e', `${key}=${value}`]),
    '--',
    ...command,
  );
  if (started.exitCode !== 0) throw new Error(`tmux did not start: ${started.stderr}`);
  // The pane stays after the command ends, so its last screen can still be read.
  await tmux('set-option', '-g', 'remain-on-exit', 'on');

  const screen = async ({ escapes = false, history = false } = {}) => {
    const captured = await tmux(
      'capture-pane',
      '-p',
      ...(escapes ? ['-e'] : []),
      ...(history ? ['-S', '-'] : []),
      '-t',
      '0',
    );
    return captured.stdout.replace(/\s+$/, '');
  };
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      const pane = await tmux('list-panes', '-t', '0', '-F', '#{pane_pid} #{pane_dead}');
      const [pid, dead] = pane.stdout.trim().split(' ');
      // The pane's command leads its process group: stop it with what it started. (No pane, no pid:
      // a group of 0 would be the test runner's own.)
      const group = Number(pid);
      if (Number.isInteger(group) && group > 0 && dead !== '1') {
        const signal = (name: NodeJS.Signals) => {
          try {
            process.kill(-group, name);
          } catch {
            // ESRCH: the group is gone already.
          }
        };
        signal('SIGTERM');
        const deadline = Date.now() + 10_000;
        while (Date.now() < deadline && (await groupRuns(group))) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        signal('SIGKILL');
      }
      await tmux('kill-server');
    })();
    return closed;
  };
  stopWhenTestEnds(close);

  return {
    screen,
    async waitFor(text, waitOptions = {}) {
      let last = '';
      await waitUntil(
        async () => {
          last = await screen(waitOptions);
          return typeof text === 'string' ? last.includes(text) : text.test(last);
        },
        { what: () => `${String(text)} on the screen:\n${last}` },
      );
      return last;
    },
    async type(text) {
      await tmux('send-keys', '-t', '0', '-l', '--', text);
    },
    async press(...keys) {
      await tmux('send-keys', '-t', '0', ...keys);
    },
    async paste(text) {
      await tmux('set-buffer', '--', text);
      await tmux('paste-buffer', '-p', '-t', '0');
    },
    async title() {
      return (await tmux('display-message', '-p', '-t', '0', '#{pane_title}')).stdout.trim();
    },
    async alive() {
      const pane = await tmux('list-panes', '-t', '0', '-F', '#{pane_dead}');
      return pane.exitCode === 0 && pane.stdout.trim() === '0';
    },
    close,
  };
}
