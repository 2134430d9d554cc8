import type { MolfServer } from '@molf/server';
import { type FakeLlm, type FakeTurn, startFakeLlm } from '@molf/testkit';
import type { MolfWorker } from '@molf/worker';
import { startLocalServer, type TestScope, writeFakeModelConfig } from './cli-test-kit.ts';
import { startTerminal, type Terminal } from './terminal-kit.ts';

export type ChatInTerminalOptions = {
  /** More arguments after `chat` (`--continue`). */
  args?: string[];
  env?: Record<string, string>;
  /** The `MOLF_HOME` to use (to start a second chat on the first one's data). Default: a new one. */
  home?: string;
  /** The project directory. Default: a new empty one. */
  project?: string;
  width?: number;
  height?: number;
};

/**
 * `molf chat` in a real terminal with its own embedded server and worker on a project, the fake LLM
 * answering `turns`; resolves once the chat is ready for a prompt.
 */
export async function chatInTerminal(
  scope: TestScope,
  turns: FakeTurn[],
  options: ChatInTerminalOptions = {},
): Promise<{ llm: FakeLlm; home: string; project: string; terminal: Terminal }> {
  const llm = await startFakeLlm({ turns });
  scope.cleanups.push(() => llm.close());
  const home = options.home ?? (await scope.tempDir());
  const project = options.project ?? (await scope.tempDir());
  await writeFakeModelConfig(home, llm.baseURL);
  const terminal = await startTerminal(['chat', ...(options.args ?? [])], {
    cwd: project,
    env: { MOLF_HOME: home, MOLF_LOG_FILE: 'none', ...options.env },
    ...(options.width === undefined ? {} : { width: options.width }),
    ...(options.height === undefined ? {} : { height: options.height }),
  });
  await terminal.waitFor('molf chat — session');
  return { llm, home, project, terminal };
}

/**
 * A server and worker of the test's own process (the test can stop and start them) with the fake
 * LLM answering `turns`, and a way to open `molf chat --server` on it in a real terminal.
 */
export async function serverForChat(
  scope: TestScope,
  turns: FakeTurn[],
  options: { tokenSuffix: string },
): Promise<{
  llm: FakeLlm;
  dataDir: string;
  project: string;
  local: { server: MolfServer; worker: MolfWorker; tokens: { client: string; worker: string } };
  /** Opens `molf chat --server` on it in a terminal with `token`, ready for a prompt. */
  openChat(token?: string): Promise<Terminal>;
}> {
  const llm = await startFakeLlm({ turns });
  scope.cleanups.push(() => llm.close());
  const dataDir = await scope.tempDir();
  const project = await scope.tempDir();
  const local = await startLocalServer(scope.cleanups, {
    dataDir,
    workdir: project,
    llmBaseURL: llm.baseURL,
    tokenSuffix: options.tokenSuffix,
  });
  return {
    llm,
    dataDir,
    project,
    local,
    async openChat(token = local.tokens.client) {
      const terminal = await startTerminal(
        ['chat', '--server', local.server.url, '--token', token, '--worker', local.worker.workerId],
        { cwd: project, env: { MOLF_LOG_FILE: 'none', MOLF_CLIENT_DIR: dataDir } },
      );
      await terminal.waitFor('molf chat — session');
      return terminal;
    },
  };
}
