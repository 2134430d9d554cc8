import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createSilentLogger } from '@molf/logging';
import type { ToolCallId } from '@molf/protocol';
import { MolfError } from '@molf/protocol';
import { isProcessAlive } from '@molf/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { pickShell } from './pick-shell.ts';
import { createProcessReaper } from './process-reaper.ts';
import { createReadTracker } from './read-tracker.ts';
import { createPathPolicy } from './resolve-tool-path.ts';
import { isSecretVariable, scrubEnvironment } from './scrub-environment.ts';
import { shellExecTool } from './shell-exec.ts';
import { createToolSandbox } from './tool-test-kit.ts';

const savedEnv = { ...process.env };
afterEach(() => {
  for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name];
  Object.assign(process.env, savedEnv);
});

async function until(predicate: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    if (await predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('shell_exec', () => {
  it('interleaves stdout and stderr and ends with the exit code', async () => {
    await using box = await createToolSandbox();
    const result = await box.run(shellExecTool, { command: 'echo out; echo err >&2; exit 3' });
    expect(result.output).toBe('out\nerr\n\nexit code: 3');
    expect(result.meta).toEqual({ exitCode: 3, truncated: false });
    expect(result.error).toBeUndefined();
  });

  it('reports death by signal as 128 + n', async () => {
    await using box = await createToolSandbox();
    const result = await box.run(shellExecTool, { command: 'kill -TERM $$' });
    expect(result.meta?.exitCode).toBe(143);
  });

  it('runs with stdin closed and in the workdir by default, or in a cwd inside it', async () => {
    await using box = await createToolSandbox();
    expect((await box.run(shellExecTool, { command: 'cat; pwd' })).output).toBe(`${box.workdir}\n\nexit code: 0`);
    await box.run(shellExecTool, { command: 'mkdir sub' });
    expect((await box.run(shellExecTool, { command: 'pwd', cwd: 'sub' })).output).toBe(
      `${join(box.workdir, 'sub')}\n\nexit code: 0`,
    );
    expect((await box.run(shellExecTool, { command: 'pwd', cwd: '..' })).meta?.errorKind).toBe('workdir_escape');
  });

  it("keeps the worker's token and provider keys out of the command's environment", async () => {
    await using box = await createToolSandbox();
    process.env.MOLF_WORKER_TOKEN = 'molf_w_this-must-not-leak-0123456789';
    process.env.OPENAI_API_KEY = 'sk-this-must-not-leak';
    process.env.MY_SERVICE_PASSWORD = 'hunter2';
    const result = await box.run(shellExecTool, { command: 'env' });
    expect(result.output).not.toContain('this-must-not-leak');
    expect(result.output).not.toContain('hunter2');
    expect(result.output).toContain('PATH=');
  });

  it('on timeout kills the whole process group, background grandchildren included', async () => {
    await using box = await createToolSandbox();
    const controller = new AbortController();
    const pending = box.run(
      shellExecTool,
      { command: 'sleep 300 & echo $! > grandchild.pid; echo started; sleep 300' },
      { signal: controller.signal },
    );
    const pidFile = join(box.workdir, 'grandchild.pid');
    await until(async () => (await readFile(pidFile, 'utf8').catch(() => '')).trim() !== '', 'the grandchild');
    const grandchild = Number((await readFile(pidFile, 'utf8')).trim());
    expect(isProcessAlive(grandchild)).toBe(true);

    controller.abort(new MolfError('timeout', 'timed out'));
    const result = await pending;
    expect(result.meta?.errorKind).toBe('timeout');
    expect(result.output).toContain('started');
    await until(() => !isProcessAlive(grandchild), 'the grandchild to die');
  });

  it('returns at once when a background child keeps the output pipe open after the shell exits', async () => {
    await using box = await createToolSandbox();
    const result = await box.run(shellExecTool, { command: '(sleep 60 & echo $! > bg.pid); echo done' });
    expect(result.output).toBe('done\n\nexit code: 0');
    process.kill(Number((await readFile(join(box.workdir, 'bg.pid'), 'utf8')).trim()), 'SIGKILL');
  });

  it('keeps memory bounded for 200 MB of output and spills all of it to the file', async () => {
    await using box = await createToolSandbox();
    const heapBefore = process.memoryUsage().heapUsed;
    const result = await box.run(
      shellExecTool,
      { command: "head -c 200000000 /dev/zero | tr '\\0' a | fold -w 99" },
      { toolCallId: 'big_output' },
    );
    const heapAfter = process.memoryUsage().heapUsed;
    expect(result.meta).toMatchObject({ exitCode: 0, truncated: true, outputId: 'big_output' });
    expect(result.meta?.outputPath).toBe(join('.molf', 'tool-output', 'big_output.txt'));
    const spilled = await stat(join(box.workdir, '.molf', 'tool-output', 'big_output.txt'));
    expect(spilled.size).toBe(200_000_000 + Math.ceil(200_000_000 / 99) - 1);
    expect(result.meta?.outputBytes).toBe(spilled.size);
    expect(Buffer.byteLength(result.output)).toBeLessThan(64 * 1024);
    expect(result.output).toContain('bytes omitted');
    expect(result.output).toContain('read_file {"path": ".molf/tool-output/big_output.txt"');
    expect(heapAfter - heapBefore).toBeLessThan(50 * 1024 * 1024);
  });
});

describe('shell_exec spill file', () => {
  it('finishes normally when the spill file cannot be written, and says so', async () => {
    await using box = await createToolSandbox();
    await mkdir(join(box.workdir, '.molf', 'tool-output', 'blocked.txt'), { recursive: true });
    const result = await box.run(
      shellExecTool,
      { command: 'head -c 300000 /dev/zero | tr "\\0" a | fold -w 99' },
      { toolCallId: 'blocked' },
    );
    expect(result.meta).toEqual({ exitCode: 0, truncated: true });
    expect(result.output).toContain('could not be saved');
    expect(result.error).toBeUndefined();
  });

  it('is cancelled on request, killing the command', async () => {
    await using box = await createToolSandbox();
    const controller = new AbortController();
    const pending = box.run(shellExecTool, { command: 'echo begun; sleep 300' }, { signal: controller.signal });
    await until(
      async () => (await readFile(join(box.workdir, '.molf', 'tool-output'), 'utf8').catch(() => '')) !== 'x',
      'start',
    );
    controller.abort(new MolfError('cancelled', 'stop'));
    const result = await pending;
    expect(result.meta?.errorKind).toBe('cancelled');
  });
});

describe('pickShell', () => {
  const everyShell = () => true;
  it('uses $SHELL, but not fish or nu, then zsh on macOS, then bash, then sh', () => {
    expect(pickShell({ env: { SHELL: '/usr/bin/zsh' }, platform: 'linux', executable: everyShell })).toBe(
      '/usr/bin/zsh',
    );
    expect(pickShell({ env: { SHELL: '/usr/bin/fish' }, platform: 'linux', executable: everyShell })).toBe('/bin/bash');
    expect(pickShell({ env: { SHELL: '/opt/nu' }, platform: 'darwin', executable: everyShell })).toBe('/bin/zsh');
    expect(pickShell({ env: {}, platform: 'linux', executable: () => false })).toBe('/bin/sh');
  });
});

describe('scrubEnvironment', () => {
  it('drops Molf variables and secrets but keeps ordinary ones', () => {
    expect(
      Object.keys(
        scrubEnvironment({
          PATH: '/bin',
          HOME: '/root',
          SSH_AUTH_SOCK: '/tmp/agent',
          MOLF_CLIENT_TOKEN: 'x',
          MOLF_HOME: '/x',
          ANTHROPIC_API_KEY: 'x',
          AWS_SECRET_ACCESS_KEY: 'x',
          DB_PASSWORD: 'x',
          GITHUB_TOKEN: 'x',
        }),
      ),
    ).toEqual(['PATH', 'HOME', 'SSH_AUTH_SOCK']);
    expect(isSecretVariable('TOKENIZERS_PARALLELISM')).toBe(false);
  });

  it("hands a finished command's process group back to the reaper, and keeps one a background child holds", async () => {
    await using box = await createToolSandbox();
    const reaper = createProcessReaper();
    const context = {
      toolCallId: 'call_reaper' as ToolCallId,
      workdir: box.workdir,
      paths: await createPathPolicy({ workdir: box.workdir }),
      sessionId: undefined,
      reads: createReadTracker({}),
      signal: new AbortController().signal,
      reaper,
      logger: createSilentLogger(),
    };
    let background: number | undefined;
    try {
      const done = await shellExecTool.run({ command: 'echo done' }, context);
      expect(done.output).toContain('done');
      expect(reaper.tracked()).toEqual([]);
      const held = await shellExecTool.run({ command: 'sleep 300 & echo $!' }, context);
      background = Number(held.output.split('\n')[0]);
      expect(reaper.tracked()).toHaveLength(1);
    } finally {
      if (background !== undefined) process.kill(background, 'SIGKILL');
      reaper.close();
    }
  });
});
