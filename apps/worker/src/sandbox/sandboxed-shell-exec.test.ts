import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '@molf/logging';
import { isProcessAlive } from '@molf/testkit';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { shellExecTool } from '../tools/shell-exec.ts';
import { createToolSandbox } from '../tools/tool-test-kit.ts';
import { bwrapUnavailable, outsideTmpDir } from './sandbox-test-kit.ts';

const unavailable = await bwrapUnavailable();
if (unavailable !== undefined) process.stderr.write(`SKIPPED sandboxed shell_exec tests: ${unavailable}\n`);

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function until(predicate: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function listenOnLoopback(): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => {
    socket.on('error', () => {});
    socket.end('hello from the host\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  const address = server.address();
  return { server, port: typeof address === 'object' && address !== null ? address.port : 0 };
}

/** git on the host (outside any sandbox), with an identity and local submodules allowed. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    ['-c', 'user.name=Molf Test', '-c', 'user.email=test@molf.invalid', '-c', 'protocol.file.allow=always', ...args],
    { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

/** A git repository with one commit in `path`. */
function makeRepository(path: string): void {
  git(path, 'init', '-q', '-b', 'main');
  execFileSync('sh', ['-c', 'echo one > one.txt'], { cwd: path });
  git(path, 'add', 'one.txt');
  git(path, 'commit', '-q', '-m', 'one');
}

/** A Node one-liner that connects to the host's loopback and prints what it got or why not. */
const connectCommand = (port: number) =>
  `node -e "require('net').connect(${port}, '127.0.0.1').on('data', (d) => process.stdout.write(String(d))).on('error', (e) => { console.log(e.message); process.exit(7) })"`;

describe.skipIf(unavailable !== undefined)('shell_exec in the sandbox (real bwrap)', () => {
  let home: string;
  let outside: string;
  beforeAll(async () => {
    // Outside /tmp, so that only the policy can hide or protect them.
    const homeDir = await outsideTmpDir('molf-sandbox-home-');
    const outsideDir = await outsideTmpDir('molf-sandbox-outside-');
    home = homeDir.path;
    outside = outsideDir.path;
    await mkdir(join(home, '.molf'));
    await writeFile(join(home, '.molf', 'connections.json'), '{"token":"molf_c_must-stay-hidden"}');
    await writeFile(join(outside, 'worker-token'), 'molf_w_must-stay-hidden');
    await writeFile(join(outside, 'plain.txt'), 'readable\n');
    return async () => {
      await homeDir[Symbol.asyncDispose]();
      await outsideDir[Symbol.asyncDispose]();
    };
  });

  it("cannot read the worker's environment: /proc/<worker pid> is out of sight (it can without the sandbox)", async () => {
    const command = `cat /proc/${process.pid}/environ > /dev/null && echo READABLE`;
    await using plain = await createToolSandbox();
    expect((await plain.run(shellExecTool, { command })).output).toContain('READABLE');
    await using box = await createToolSandbox({ sandbox: { home } });
    const result = await box.run(shellExecTool, { command });
    expect(result.output).not.toContain('READABLE');
    expect(result.output).toContain('No such file or directory');
  });

  it('sees ~/.molf as an empty directory and a hidden token file as empty; other files stay readable', async () => {
    await using box = await createToolSandbox({ sandbox: { home, hide: [join(outside, 'worker-token')] } });
    const result = await box.run(shellExecTool, {
      command: `ls -A ${join(home, '.molf')}; cat ${join(home, '.molf', 'connections.json')}; cat ${join(outside, 'worker-token')}; cat ${join(outside, 'plain.txt')}`,
    });
    expect(result.output).not.toContain('must-stay-hidden');
    expect(result.output).toContain('connections.json: No such file or directory');
    expect(result.output).toContain('readable');
  });

  it('cannot write outside the workdir: a sandbox_refused error saying what is writable, the output kept, a log line', async () => {
    const lines: string[] = [];
    const logger = await createLogger({
      name: 'sandbox-test',
      level: 'info',
      console: 'json',
      destination: new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    });
    await using box = await createToolSandbox({ sandbox: { home } });
    const target = join(outside, 'escaped.txt');
    const result = await box.run(
      shellExecTool,
      { command: `echo before; echo x > ${target}` },
      { logger, toolCallId: 'call_refused' },
    );
    expect(existsSync(target)).toBe(false);
    expect(result.meta).toMatchObject({ errorKind: 'sandbox_refused', exitCode: 1 });
    expect(result.output).toContain('before');
    expect(result.output).toContain('Read-only file system');
    expect(result.error).toContain('read-only');
    expect(result.error).toContain(box.workdir);
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged).toContainEqual(
      expect.objectContaining({ msg: 'sandbox refused', toolCallId: 'call_refused', refusal: 'read_only' }),
    );
  });

  it('does not take ordinary failures for refusals: a missing file, /proc, words about a writable path, a fake bwrap line', async () => {
    await using box = await createToolSandbox({ sandbox: { home } });
    for (const command of [
      'cat missing-file',
      'touch /proc/x',
      `printf 'FAIL handles EROFS: read-only file system, open %s/data/x\\n' "$PWD"; exit 1`,
      "python3 -c \"raise OSError(30, 'Read-only file system', '/tmp/x')\"",
      'echo "bwrap: not really"; exit 1',
    ]) {
      const result = await box.run(shellExecTool, { command });
      expect(result.meta?.exitCode, command).not.toBe(0);
      expect(result.meta?.errorKind, `${command}: ${result.output}`).toBeUndefined();
      expect(result.error, command).toBeUndefined();
    }
    const refused = await box.run(shellExecTool, { command: 'mkdir /opt/molf-made-this' });
    expect(refused.meta?.errorKind).toBe('sandbox_refused');
  });

  it("still reports bwrap's own failure to set up a command's sandbox", async () => {
    // Only the commands' sandboxes (those that read bwrap's status) get a mount that cannot be made.
    const unmountable = (args: string[]) =>
      args.includes('--json-status-fd') ? [...args, '--ro-bind', join(outside, 'no-such-path'), '/x'] : args;
    await using box = await createToolSandbox({ sandbox: { home, testOnlyRewriteArguments: unmountable } });
    const result = await box.run(shellExecTool, { command: 'echo ran > ran.txt' });
    expect(result.meta?.errorKind).toBe('internal');
    expect(result.error).toContain("bwrap: Can't find source path");
    expect(existsSync(join(box.workdir, 'ran.txt'))).toBe(false);
  });

  it('writes in the workdir and its private /tmp, but not in .molf, .git/hooks or .git/config', async () => {
    await using box = await createToolSandbox({ sandbox: { home } });
    await mkdir(join(box.workdir, '.molf'));
    await mkdir(join(box.workdir, '.git', 'hooks'), { recursive: true });
    await writeFile(join(box.workdir, '.git', 'config'), '[core]\n');
    const ok = await box.run(shellExecTool, { command: 'echo hi > made.txt && echo t > /tmp/t && cat /tmp/t' });
    expect(ok.meta).toMatchObject({ exitCode: 0 });
    expect(await readFile(join(box.workdir, 'made.txt'), 'utf8')).toBe('hi\n');
    for (const path of ['.molf/x', '.git/hooks/pre-commit']) {
      const refused = await box.run(shellExecTool, { command: `echo evil > ${path}` });
      expect(refused.meta?.errorKind).toBe('sandbox_refused');
      expect(existsSync(join(box.workdir, path))).toBe(false);
    }
    const config = await box.run(shellExecTool, { command: 'echo "[core] hooksPath=/x" >> .git/config' });
    expect(config.meta?.errorKind).toBe('sandbox_refused');
    expect(await readFile(join(box.workdir, '.git', 'config'), 'utf8')).toBe('[core]\n');
  });

  it('cannot move .git (or .git/modules, a submodule, a worktree) aside to plant hooks; git keeps working', async () => {
    await using box = await createToolSandbox({ sandbox: { home } });
    await using library = await outsideTmpDir('molf-sandbox-submodule-');
    makeRepository(library.path);
    makeRepository(box.workdir);
    git(box.workdir, 'submodule', 'add', '-q', library.path, 'lib');
    git(box.workdir, 'commit', '-q', '-m', 'lib');
    git(box.workdir, 'worktree', 'add', '-q', 'wt');
    const gitFiles = () =>
      [
        '.git/hooks/pre-commit',
        '.git/modules/lib/hooks/pre-commit',
        '.git2',
        '.git/m2',
        '.git/modules/lib2',
        '.git/w2',
      ].filter((path) => existsSync(join(box.workdir, path)));
    const configs = async () =>
      Promise.all(
        ['.git/config', '.git/modules/lib/config', '.git/worktrees/wt/commondir'].map((path) =>
          readFile(join(box.workdir, path), 'utf8'),
        ),
      );
    const configsBefore = await configs();
    const attempts = [
      // Renaming the parent of a mount point is allowed: .git itself must be one.
      'mv .git .git2 && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit',
      'mv .git/modules .git/m2 && mkdir -p .git/modules/lib/hooks && echo evil > .git/modules/lib/hooks/pre-commit',
      'mv .git/modules/lib .git/modules/lib2 && mkdir -p .git/modules/lib/hooks && echo evil > .git/modules/lib/hooks/pre-commit',
      'echo evil > .git/modules/lib/hooks/pre-commit',
      'echo "[core] hooksPath=/x" >> .git/modules/lib/config',
      'mv .git/worktrees .git/w2',
      'echo /elsewhere > .git/worktrees/wt/commondir',
    ];
    for (const command of attempts) {
      const result = await box.run(shellExecTool, { command });
      expect(result.meta?.exitCode, command).not.toBe(0);
      expect(gitFiles(), command).toEqual([]);
    }
    expect(await configs()).toEqual(configsBefore);
    const work = await box.run(shellExecTool, {
      command:
        'echo two > two.txt && git status --short && git -C lib status --short && git -C wt status --short && ' +
        'git add two.txt && git -c user.name=t -c user.email=t@t.invalid commit -q -m two && git log --format=%s -1',
    });
    expect(work.meta?.exitCode, work.output).toBe(0);
    expect(work.output).toContain('?? two.txt');
    expect(git(box.workdir, 'log', '--format=%s', '-1').trim()).toBe('two');
  });

  it('cannot rewrite or replace the .git file of a workdir that is a linked worktree', async () => {
    await using box = await createToolSandbox({ sandbox: { home } });
    await using repository = await outsideTmpDir('molf-sandbox-gitdir-');
    makeRepository(repository.path);
    // The workdir becomes the worktree: its .git is a file naming the git directory.
    git(repository.path, 'worktree', 'add', '-q', box.workdir);
    const before = await readFile(join(box.workdir, '.git'), 'utf8');
    for (const command of [
      'mkdir -p evil && echo "gitdir: evil" > .git',
      'mv .git .git-old && echo "gitdir: evil" > .git',
    ]) {
      const result = await box.run(shellExecTool, { command });
      expect(result.meta?.exitCode, command).not.toBe(0);
      expect(await readFile(join(box.workdir, '.git'), 'utf8'), command).toBe(before);
    }
    const work = await box.run(shellExecTool, { command: 'echo two > two.txt && git status --short' });
    expect(work.meta?.exitCode, work.output).toBe(0);
    expect(work.output).toContain('?? two.txt');
  });

  it('runs npm test of a small project in the workdir', async () => {
    await using box = await createToolSandbox({ sandbox: { home } });
    await writeFile(
      join(box.workdir, 'package.json'),
      JSON.stringify({ name: 'small', version: '1.0.0', scripts: { test: 'node test.js' } }),
    );
    await writeFile(
      join(box.workdir, 'test.js'),
      "require('node:fs').writeFileSync('result.txt', 'ok'); console.log('1 passed');\n",
    );
    const result = await box.run(shellExecTool, { command: 'npm test', timeout: 120_000 });
    expect(result.meta?.exitCode).toBe(0);
    expect(result.output).toContain('1 passed');
    expect(await readFile(join(box.workdir, 'result.txt'), 'utf8')).toBe('ok');
  });

  it('with the network cut, a loopback connection to the host fails and the error says the network is cut', async () => {
    const { port } = await listenOnLoopback();
    await using box = await createToolSandbox({ sandbox: { home, network: false } });
    const result = await box.run(shellExecTool, { command: connectCommand(port) });
    expect(result.output).not.toContain('hello from the host');
    expect(result.output).toContain('ECONNREFUSED');
    expect(result.meta?.errorKind).toBe('sandbox_refused');
    expect(result.error).toContain('network');
  });

  it('with the network on, the same connection works', async () => {
    const { port } = await listenOnLoopback();
    await using box = await createToolSandbox({ sandbox: { home } });
    const result = await box.run(shellExecTool, { command: connectCommand(port) });
    expect(result.output).toContain('hello from the host');
    expect(result.error).toBeUndefined();
  });

  it('cannot hard-link a file from outside into the workdir (EXDEV across the workdir mount)', async () => {
    await using box = await createToolSandbox({ sandbox: { home } });
    const result = await box.run(shellExecTool, { command: `ln ${join(outside, 'plain.txt')} linked.txt` });
    expect(result.output).toContain('Invalid cross-device link');
    expect(result.meta?.exitCode).not.toBe(0);
    expect(existsSync(join(box.workdir, 'linked.txt'))).toBe(false);
  });

  it('on timeout kills the sandboxed command and its background children', async () => {
    await using box = await createToolSandbox({ sandbox: { home } });
    const marker = `molf-sandbox-sleep-${process.pid}-${Date.now()}`;
    const controller = new AbortController();
    const pending = box.run(
      shellExecTool,
      { command: `exec -a ${marker} sleep 300 & echo started; sleep 300` },
      { signal: controller.signal },
    );
    // Anchored: bwrap's own command line holds the marker too, and aborting while bwrap still sets
    // the sandbox up would test nothing (and leave its child waiting for a parent that is gone).
    const hostPids = async () => {
      try {
        return execFileSync('pgrep', ['-f', `^${marker}`], { encoding: 'utf8' })
          .split('\n')
          .filter(Boolean)
          .map(Number);
      } catch {
        return [];
      }
    };
    await until(async () => (await hostPids()).length > 0, 'the background child');
    const [grandchild] = await hostPids();
    controller.abort();
    const result = await pending;
    expect(result.meta?.errorKind).toBe('cancelled');
    await until(() => grandchild === undefined || !isProcessAlive(grandchild), 'the background child to end');
  });
});
