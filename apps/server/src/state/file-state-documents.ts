import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, watch as watchDirectory } from 'node:fs';
import { link, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { Logger } from '@molf/logging';
import writeFileAtomic from 'write-file-atomic';
import { withFileLock } from '../auth/with-file-lock.ts';
import type { StateDocuments } from './state-documents.ts';

/** A file is re-read this long after its last change event, so that an editor's write is complete. */
const WATCH_SETTLE_MS = 100;

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * The files under `directory`, as paths relative to it; none when it is missing. Lock directories
 * are not entered, and a directory that goes while it is read (a lock let go) is passed over.
 */
async function listFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true }).catch((error: unknown) => {
    if (isMissing(error)) return [];
    throw error;
  });
  const files: string[] = [];
  for (const entry of entries) {
    if (entry.isFile()) files.push(entry.name);
    else if (entry.isDirectory() && !entry.name.endsWith('.lock')) {
      for (const file of await listFiles(join(directory, entry.name))) files.push(join(entry.name, file));
    }
  }
  return files;
}

/**
 * Documents as files under the data directory (0600 in 0700 directories), written atomically and
 * synced; locks are `{file}.lock` directories that every Molf process honours (the server,
 * `molf token`, `molf pair`); changes are seen by watching each file's directory.
 */
export function openFileStateDocuments(options: { dataDir: string; logger?: Logger }): StateDocuments {
  const pathOf = (name: string) => join(options.dataDir, ...name.split('/'));
  const knownCache = new Map<string, { stamp: string; text: string }>();
  const watchers = new Set<() => void>();

  async function ensureDirectory(name: string): Promise<void> {
    await mkdir(dirname(pathOf(name)), { recursive: true, mode: 0o700 });
  }

  return {
    where: pathOf,

    async read(name) {
      return readFile(pathOf(name), 'utf8').catch((error: unknown) => {
        if (isMissing(error)) return undefined;
        throw error;
      });
    },

    async readBytes(name) {
      return readFile(pathOf(name)).catch((error: unknown) => {
        if (isMissing(error)) return undefined;
        throw error;
      });
    },

    known(name) {
      const path = pathOf(name);
      let stamp: string;
      try {
        const info = statSync(path);
        stamp = `${info.mtimeMs}:${info.size}:${info.ino}`;
      } catch (error) {
        if (isMissing(error)) {
          knownCache.delete(name);
          return { text: undefined, version: 'none' };
        }
        throw error;
      }
      const cached = knownCache.get(name);
      if (cached?.stamp === stamp) return { text: cached.text, version: stamp };
      const text = readFileSync(path, 'utf8');
      knownCache.set(name, { stamp, text });
      return { text, version: stamp };
    },

    async write(name, content) {
      await ensureDirectory(name);
      await writeFileAtomic(pathOf(name), typeof content === 'string' ? content : Buffer.from(content), {
        mode: 0o600,
      });
    },

    async create(name, content) {
      await ensureDirectory(name);
      const path = pathOf(name);
      // Written whole under a temporary name, then linked into place: a link fails if the file
      // exists, so two processes never replace or half-read each other's document.
      const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
      try {
        await writeFile(temporary, content, { flag: 'wx', mode: 0o600 });
        await link(temporary, path);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw error;
      } finally {
        await rm(temporary, { force: true });
      }
    },

    async remove(name) {
      await rm(pathOf(name), { force: true });
    },

    async lock(name, task) {
      await ensureDirectory(name);
      return withFileLock(pathOf(name), task);
    },

    async list(prefix) {
      const top = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
      const root = join(options.dataDir, ...top.split('/').filter((part) => part !== ''));
      return (await listFiles(root))
        .map((file) => relative(options.dataDir, join(root, file)).split(sep).join('/'))
        .filter((name) => name.startsWith(prefix) && !/\.lock(\/|$)/.test(name))
        .sort();
    },

    watch(name, onChange) {
      const path = pathOf(name);
      const file = path.slice(dirname(path).length + 1);
      let timer: NodeJS.Timeout | undefined;
      try {
        // The directory, not the file: saves replace the file (write-file-atomic, editors), which a
        // watch on the file itself would stop following. So the directory must exist before the file.
        mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
        const watcher = watchDirectory(dirname(path), { persistent: false }, (_event, changed) => {
          if (changed !== null && changed !== file) return;
          clearTimeout(timer);
          timer = setTimeout(onChange, WATCH_SETTLE_MS);
        });
        watcher.on('error', (error) => options.logger?.warn({ err: error, path }, 'watching a file failed'));
        const stop = () => {
          clearTimeout(timer);
          watcher.close();
          watchers.delete(stop);
        };
        watchers.add(stop);
        return stop;
      } catch (error) {
        options.logger?.warn({ err: error, path }, 'cannot watch a file; its changes are seen when it is next read');
        return () => {};
      }
    },

    watchPrefix(prefix, onChange) {
      const top = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
      const directory = join(options.dataDir, ...top.split('/').filter((part) => part !== ''));
      const timers = new Map<string, NodeJS.Timeout>();
      try {
        mkdirSync(directory, { recursive: true, mode: 0o700 });
        const watcher = watchDirectory(directory, { persistent: false, recursive: true }, (_event, changed) => {
          if (changed === null) return;
          const name = [top, ...changed.split(sep)].filter((part) => part !== '').join('/');
          if (!name.startsWith(prefix) || /\.lock(\/|$)/.test(name)) return;
          clearTimeout(timers.get(name));
          timers.set(
            name,
            setTimeout(() => {
              timers.delete(name);
              onChange(name);
            }, WATCH_SETTLE_MS),
          );
        });
        watcher.on('error', (error) => options.logger?.warn({ err: error, directory }, 'watching a directory failed'));
        const stop = () => {
          for (const timer of timers.values()) clearTimeout(timer);
          watcher.close();
          watchers.delete(stop);
        };
        watchers.add(stop);
        return stop;
      } catch (error) {
        options.logger?.warn(
          { err: error, directory },
          'cannot watch a directory; its changes are seen at the next start',
        );
        return () => {};
      }
    },

    async close() {
      for (const stop of [...watchers]) stop();
    },
  };
}
