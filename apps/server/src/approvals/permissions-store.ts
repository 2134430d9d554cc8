import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@molf/logging';
import { addAllowRules, type PermissionRule, safeParsePermissionsFile } from '@molf/permissions';
import { readDefaultPermissionsText } from '@molf/permissions/default-file';
import { MolfError, type PermissionsProblem, type WorkerId } from '@molf/protocol';
import writeFileAtomic from 'write-file-atomic';

export type WorkerRules = {
  rules: readonly PermissionRule[];
  /** Set while the file on disk is broken; `rules` are then the last good ones (or none: ask everything). */
  problem: PermissionsProblem | undefined;
};

type Cached = {
  /** Identity of the file version last read: mtime, size and inode. */
  stamp: string;
  rules: readonly PermissionRule[] | undefined;
  lastGood: readonly PermissionRule[] | undefined;
  problem: PermissionsProblem | undefined;
};

export type PermissionsStore = {
  pathOf(workerId: WorkerId): string;
  /** The rules in force now; re-reads the file when it changed since the last call. Never throws. */
  load(workerId: WorkerId): Promise<WorkerRules>;
  readText(workerId: WorkerId): Promise<string>;
  /** Replaces the file after validating it; a text that does not parse is refused with its line and column. */
  writeText(workerId: WorkerId, text: string): Promise<void>;
  /** Appends allow rules ("always" answers), keeping comments; returns the patterns really added. */
  appendAllow(workerId: WorkerId, options: { tool: string; patterns: readonly string[] }): Promise<string[]>;
};

/**
 * One `permissions.jsonc` per worker under `{dataDir}/workers/{workerId}/`, seeded with the
 * commented default on first use. A broken file never means allow: the last rules that parsed stay
 * in force, or none (everything asks) if there never were any, and the problem is reported once
 * per file version.
 */
export function createPermissionsStore(options: {
  dataDir: string;
  logger: Logger;
  onProblem: (problem: PermissionsProblem) => void;
}): PermissionsStore {
  const { logger } = options;
  const cache = new Map<WorkerId, Cached>();
  /** Writes per worker run one after another, so two "always" answers can't lose each other's rule. */
  const writes = new Map<WorkerId, Promise<unknown>>();

  const pathOf = (workerId: WorkerId) => join(options.dataDir, 'workers', workerId, 'permissions.jsonc');

  async function seed(workerId: WorkerId): Promise<void> {
    await mkdir(join(options.dataDir, 'workers', workerId), { recursive: true, mode: 0o700 });
    try {
      await writeFileAtomic(pathOf(workerId), readDefaultPermissionsText(), { mode: 0o600 });
      logger.info({ workerId, path: pathOf(workerId) }, 'permissions file created with the default rules');
    } catch (error) {
      logger.error({ err: error, workerId }, 'cannot create the permissions file; asking for every call');
    }
  }

  async function load(workerId: WorkerId): Promise<WorkerRules> {
    const path = pathOf(workerId);
    let info = await stat(path).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? undefined : error));
    if (info === undefined) {
      await serialize(workerId, async () => {
        if ((await stat(path).catch(() => undefined)) === undefined) await seed(workerId);
      });
      info = await stat(path).catch((error: NodeJS.ErrnoException) => error);
    }
    const previous = cache.get(workerId);
    if (info instanceof Error) {
      return fail(workerId, previous, 'unreadable', {
        line: 1,
        column: 1,
        message: `cannot read the file: ${info.message}`,
      });
    }
    const stamp = `${info.mtimeMs}:${info.size}:${info.ino}`;
    if (previous !== undefined && previous.stamp === stamp) {
      return { rules: previous.rules ?? previous.lastGood ?? [], problem: previous.problem };
    }
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      return fail(workerId, previous, stamp, {
        line: 1,
        column: 1,
        message: `cannot read the file: ${(error as Error).message}`,
      });
    }
    const parsed = safeParsePermissionsFile(text);
    if (!parsed.ok) return fail(workerId, previous, stamp, parsed.error);
    if (previous?.problem !== undefined) logger.info({ workerId, path }, 'permissions file is valid again');
    cache.set(workerId, { stamp, rules: parsed.rules, lastGood: parsed.rules, problem: undefined });
    return { rules: parsed.rules, problem: undefined };
  }

  function fail(
    workerId: WorkerId,
    previous: Cached | undefined,
    stamp: string,
    error: { line: number; column: number; message: string },
  ): WorkerRules {
    const lastGood = previous?.lastGood;
    const problem: PermissionsProblem = {
      workerId,
      file: pathOf(workerId),
      line: error.line,
      column: error.column,
      message: error.message,
      fallback: lastGood === undefined ? 'ask_everything' : 'last_good_rules',
    };
    if (previous?.stamp !== stamp || previous.problem === undefined) {
      logger.error(
        { workerId, file: problem.file, line: problem.line, column: problem.column, fallback: problem.fallback },
        `permissions file is invalid: ${problem.message}`,
      );
      options.onProblem(problem);
    }
    cache.set(workerId, { stamp, rules: undefined, lastGood, problem });
    return { rules: lastGood ?? [], problem };
  }

  function serialize<T>(workerId: WorkerId, task: () => Promise<T>): Promise<T> {
    const previous = writes.get(workerId) ?? Promise.resolve();
    const next = previous.then(task, task);
    const settled = next.catch(() => undefined);
    writes.set(workerId, settled);
    void settled.then(() => {
      if (writes.get(workerId) === settled) writes.delete(workerId);
    });
    return next;
  }

  async function readText(workerId: WorkerId): Promise<string> {
    await load(workerId);
    return readFile(pathOf(workerId), 'utf8');
  }

  return {
    pathOf,
    load,
    readText,
    writeText: (workerId, text) =>
      serialize(workerId, async () => {
        const parsed = safeParsePermissionsFile(text);
        if (!parsed.ok) {
          throw new MolfError(
            'permissions_invalid',
            `line ${parsed.error.line}, column ${parsed.error.column}: ${parsed.error.message}`,
          );
        }
        await mkdir(join(options.dataDir, 'workers', workerId), { recursive: true, mode: 0o700 });
        await writeFileAtomic(pathOf(workerId), text, { mode: 0o600 });
      }),
    appendAllow: (workerId, rule) =>
      serialize(workerId, async () => {
        const text = await readFile(pathOf(workerId), 'utf8');
        const updated = addAllowRules(text, rule);
        if (!updated.ok) {
          throw new MolfError(
            'permissions_invalid',
            `the permissions file cannot take the new rule: ${updated.message}`,
          );
        }
        if (updated.added.length > 0) await writeFileAtomic(pathOf(workerId), updated.text, { mode: 0o600 });
        return updated.added;
      }),
  };
}
