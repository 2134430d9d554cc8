import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A temp workdir (canonical) with a helper that writes a file, folders included; removed on dispose. */
export async function createCatalogWorkdir(): Promise<
  AsyncDisposable & { path: string; write(relative: string, text: string | Buffer): Promise<string> }
> {
  const path = await realpath(await mkdtemp(join(tmpdir(), 'molf-catalog-')));
  return {
    path,
    async write(relative, text) {
      const absolute = join(path, relative);
      await mkdir(dirname(absolute), { recursive: true });
      await writeFile(absolute, text);
      return absolute;
    },
    [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true, maxRetries: 3 }),
  };
}

/** A SKILL.md or agent file with the given frontmatter lines and body. */
export function markdown(frontmatter: string, body = ''): string {
  return `---\n${frontmatter}\n---\n${body}`;
}

/** Resolves once `predicate` holds, checking every 10 ms; fails after a generous deadline (120 s). */
export async function waitFor(predicate: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
