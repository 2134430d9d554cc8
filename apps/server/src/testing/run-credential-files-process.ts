import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./credential-files-process.ts', import.meta.url));

/**
 * Starts `credential-files-process.ts` with `args` and waits until it is ready; `go()` lets it
 * work and resolves to the JSON line it prints. Disposing kills it if it still runs.
 */
export async function startCredentialFilesProcess(
  args: string[],
): Promise<AsyncDisposable & { go(): Promise<unknown> }> {
  const child: ChildProcess = spawn(process.execPath, [SCRIPT, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  let errors = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const exited = once(child, 'exit');
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (output.startsWith('ready\n')) {
        child.stdout?.off('data', onData);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    void exited.then(() => reject(new Error(`the process ended before it was ready: ${errors}`)));
  });
  return {
    async go() {
      child.stdin?.end('go\n');
      const [code] = await exited;
      if (code !== 0) throw new Error(`the process failed (${String(code)}): ${errors}`);
      return JSON.parse(output.slice('ready\n'.length).trim());
    },
    async [Symbol.asyncDispose]() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}
