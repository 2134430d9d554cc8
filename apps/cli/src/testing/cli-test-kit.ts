import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, type MolfServer } from '@molf/server';
import { createWorker, type MolfWorker } from '@molf/worker';
import { execaNode, type ResultPromise } from 'execa';

export const CLI = fileURLToPath(new URL('../main.ts', import.meta.url));

/** Cleanups run after each test, last first. */
export type Cleanups = Array<() => Promise<unknown>>;

/** A `config.jsonc` in `home` with the fake LLM as the default model. */
export async function writeFakeModelConfig(home: string, baseURL: string): Promise<void> {
  await writeFile(join(home, 'config.jsonc'), JSON.stringify({ model: 'fake/m', providers: { fake: { baseURL } } }));
}

/** A server on port 0 (the fake LLM as its model) and a worker on `workdir`, in this process. */
export async function startLocalServer(
  cleanups: Cleanups,
  options: { dataDir: string; workdir: string; llmBaseURL: string; tokenSuffix: string },
): Promise<{ server: MolfServer; worker: MolfWorker; tokens: { client: string; worker: string } }> {
  const tokens = { client: `molf_c_${options.tokenSuffix}`, worker: `molf_w_${options.tokenSuffix}` };
  const server = await createServer({
    port: 0,
    dataDir: options.dataDir,
    tokens,
    models: { defaultModel: 'fake/m', custom: { fake: { baseURL: options.llmBaseURL } } },
  });
  cleanups.push(() => server.close());
  const worker = await createWorker({ serverUrl: server.url, token: tokens.worker, workdir: options.workdir });
  cleanups.push(() => worker.close());
  await worker.registered;
  return { server, worker, tokens };
}

/** The CLI as a child with a pipe on stdin; `seen` waits for text on its stdout. */
export function spawnInteractive(
  cleanups: Cleanups,
  args: string[],
  options: { cwd: string; env: Record<string, string>; waitMs?: number },
): { child: ResultPromise; seen: (text: string) => Promise<void>; type: (line: string) => void; output: () => string } {
  const child = execaNode(CLI, args, {
    cwd: options.cwd,
    env: options.env,
    reject: false,
    stdin: 'pipe',
    timeout: 60_000,
  });
  cleanups.push(async () => {
    child.kill('SIGKILL');
    await child;
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const seen = async (text: string) => {
    const deadline = Date.now() + (options.waitMs ?? 20_000);
    while (!output.includes(text)) {
      if (Date.now() > deadline) throw new Error(`no "${text}" in:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { child, seen, type: (line) => void child.stdin?.write(`${line}\n`), output: () => output };
}
