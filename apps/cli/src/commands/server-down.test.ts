import { mkdtemp, rm } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { spawnMolf, WAIT_DEADLINE_MS } from '../testing/cli-test-kit.ts';

/** A loopback URL where nothing listens: a port that was free a moment ago. */
async function deadServerUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return `ws://127.0.0.1:${port}`;
}

/** The child's result, or `undefined` if it is still running at the (generous) deadline. */
async function exitOf<T>(child: PromiseLike<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), WAIT_DEADLINE_MS);
  });
  try {
    return await Promise.race([child, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

describe('client commands against a server that is down', () => {
  const commands: Array<[string, string[]]> = [
    ['molf run', ['run', 'hello']],
    ['molf chat', ['chat']],
    ['molf workers', ['workers']],
    ['molf permissions show', ['permissions', 'show']],
  ];

  it.each(commands)('%s --server URL says it cannot reach the server and exits 1', async (_name, args) => {
    const home = await mkdtemp(join(tmpdir(), 'molf-server-down-'));
    onTestFinished(() => rm(home, { recursive: true, force: true }));
    const url = await deadServerUrl();
    const child = spawnMolf([...args, '--server', url, '--token', 'molf_c_a-token-for-a-server-that-is-down'], {
      cwd: home,
      env: { HOME: home, MOLF_HOME: home, MOLF_CLIENT_DIR: home, MOLF_LOG_FILE: 'none' },
      // `molf run` reads a piped stdin to its end as context: it gets none. `molf chat` reads its prompts from it.
      stdin: args[0] === 'run' ? 'ignore' : 'pipe',
    });
    const result = await exitOf(child);
    expect(result, 'still running: it hangs after saying it cannot reach the server').toBeDefined();
    expect(result?.exitCode).toBe(1);
    expect(result?.stderr).toBe(
      `molf: cannot reach the Molf server at ${url} (waited 5000 ms): is it running, and is that its address?`,
    );
  });
});
