import { createHash } from 'node:crypto';
import { watch as watchDirectory } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from '@molf/logging';
import {
  addAllowRules,
  type PermissionRule,
  type RuleGrant,
  removeGrantRule,
  safeParsePermissionsFile,
} from '@molf/permissions';
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
  /** Whether `load` has read the worker's file since the server started (then a missing file is a problem). */
  hasRead(workerId: WorkerId): boolean;
  /** The file's text and version (the default text when the file is missing). */
  readText(workerId: WorkerId): Promise<{ text: string; version: string }>;
  /**
   * Replaces the file after validating it; a text that does not parse is refused with its line and
   * column, and a `baseVersion` that is no longer current with `conflict`.
   */
  writeText(workerId: WorkerId, text: string, options?: { baseVersion?: string | undefined }): Promise<void>;
  /**
   * Adds allow rules ("always" answers), keeping comments; returns the patterns really added. The
   * rules go before the tool's deny entries when `accepts` agrees that the result allows the call,
   * else at the end of the tool's entries; without `accepts`, always before the denies. With
   * `grants`, each pattern is saved with its grant id and expiry.
   */
  appendAllow(
    workerId: WorkerId,
    options: {
      tool: string;
      patterns: readonly string[];
      accepts?: (rules: readonly PermissionRule[]) => boolean;
      grants?: ReadonlyMap<string, RuleGrant>;
    },
  ): Promise<string[]>;
  /**
   * Removes the rule carrying `grantId`, keeping comments and layout; returns that rule. Refused
   * with `grant_not_found` when no rule carries it, and `permissions_invalid` while the file is broken.
   */
  removeGrant(workerId: WorkerId, grantId: string): Promise<PermissionRule>;
  /**
   * Calls `onChange` when the worker's file may have changed on disk (edited by hand, replaced),
   * once the changes have settled; returns the function that stops watching. Never throws: a
   * directory that cannot be watched is logged and changes are then noticed at the next call.
   */
  watch(workerId: WorkerId, onChange: () => void): () => void;
};

/** A file is re-read this long after its last change event, so that an editor's write is complete. */
const WATCH_SETTLE_MS = 100;

export function versionOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

/**
 * One `permissions.jsonc` per worker under `{dataDir}/workers/{workerId}/`, seeded with the
 * commented default on first use. A broken file never means allow: the last rules that parsed stay
 * in force, or none (everything asks) if there never were any, and the problem is reported once
 * per file version. A file deleted while the server runs is a problem too, not a reason to start
 * over from the (more permissive) defaults.
 */
export function createPermissionsStore(options: {
  dataDir: string;
  logger: Logger;
  onProblem: (problem: PermissionsProblem) => void;
  /** The file parses again after a problem. */
  onValid: (workerId: WorkerId) => void;
}): PermissionsStore {
  const { logger } = options;
  const cache = new Map<WorkerId, Cached>();
  /** Writes per worker run one after another, so two "always" answers can't lose each other's rule. */
  const writes = new Map<WorkerId, Promise<unknown>>();

  const pathOf = (workerId: WorkerId) => join(options.dataDir, 'workers', workerId, 'permissions.jsonc');

  /** Creates the default file unless one exists (an exclusive create: never overwrites a user's save). */
  async function seed(workerId: WorkerId): Promise<void> {
    await mkdir(join(options.dataDir, 'workers', workerId), { recursive: true, mode: 0o700 });
    try {
      await writeFile(pathOf(workerId), readDefaultPermissionsText(), { mode: 0o600, flag: 'wx' });
      logger.info({ workerId, path: pathOf(workerId) }, 'permissions file created with the default rules');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }

  async function load(workerId: WorkerId): Promise<WorkerRules> {
    const previous = cache.get(workerId);
    try {
      return await loadOrThrow(workerId, previous);
    } catch (error) {
      return fail(workerId, previous, `error:${(error as Error).message}`, {
        line: 1,
        column: 1,
        message: `cannot read the file: ${(error as Error).message}`,
      });
    }
  }

  async function loadOrThrow(workerId: WorkerId, previous: Cached | undefined): Promise<WorkerRules> {
    const path = pathOf(workerId);
    let info = await stat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (info === undefined) {
      if (previous !== undefined) {
        return fail(workerId, previous, 'missing', {
          line: 1,
          column: 1,
          message: 'the file was deleted; write it again with `molf permissions edit`',
        });
      }
      await serialize(workerId, () => seed(workerId));
      info = await stat(path);
    }
    const stamp = `${info.mtimeMs}:${info.size}:${info.ino}`;
    if (previous !== undefined && previous.stamp === stamp) {
      return { rules: previous.rules ?? previous.lastGood ?? [], problem: previous.problem };
    }
    const parsed = safeParsePermissionsFile(await readFile(path, 'utf8'));
    if (!parsed.ok) return fail(workerId, previous, stamp, parsed.error);
    cache.set(workerId, { stamp, rules: parsed.rules, lastGood: parsed.rules, problem: undefined });
    if (previous?.problem !== undefined) {
      logger.info({ workerId, path }, 'permissions file is valid again');
      options.onValid(workerId);
    }
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

  async function readText(workerId: WorkerId): Promise<{ text: string; version: string }> {
    await load(workerId);
    const text = await readFile(pathOf(workerId), 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return readDefaultPermissionsText();
      throw error;
    });
    return { text, version: versionOf(text) };
  }

  async function write(workerId: WorkerId, text: string): Promise<void> {
    await mkdir(join(options.dataDir, 'workers', workerId), { recursive: true, mode: 0o700 });
    await writeFileAtomic(pathOf(workerId), text, { mode: 0o600 });
  }

  function watch(workerId: WorkerId, onChange: () => void): () => void {
    const file = pathOf(workerId);
    let timer: NodeJS.Timeout | undefined;
    try {
      // The directory, not the file: saves replace the file (write-file-atomic, editors), which a
      // watch on the file itself would stop following.
      const watcher = watchDirectory(dirname(file), { persistent: false }, (_event, name) => {
        if (name !== null && name !== 'permissions.jsonc') return;
        clearTimeout(timer);
        timer = setTimeout(onChange, WATCH_SETTLE_MS);
      });
      watcher.on('error', (error) => logger.warn({ err: error, file }, 'watching the permissions file failed'));
      return () => {
        clearTimeout(timer);
        watcher.close();
      };
    } catch (error) {
      logger.warn({ err: error, file }, 'cannot watch the permissions file; edits apply at the next tool call');
      return () => {};
    }
  }

  return {
    pathOf,
    load,
    hasRead: (workerId) => cache.has(workerId),
    readText,
    watch,
    writeText: (workerId, text, writeOptions = {}) =>
      serialize(workerId, async () => {
        const parsed = safeParsePermissionsFile(text);
        if (!parsed.ok) {
          throw new MolfError(
            'permissions_invalid',
            `line ${parsed.error.line}, column ${parsed.error.column}: ${parsed.error.message}`,
          );
        }
        if (writeOptions.baseVersion !== undefined) {
          const current = await readFile(pathOf(workerId), 'utf8').catch(() => readDefaultPermissionsText());
          if (versionOf(current) !== writeOptions.baseVersion) {
            throw new MolfError(
              'conflict',
              'the permissions file changed since it was read (an "always" answer or another edit): read it again and redo the change',
            );
          }
        }
        await write(workerId, text);
      }),
    appendAllow: (workerId, rule) =>
      serialize(workerId, async () => {
        const text = await readFile(pathOf(workerId), 'utf8');
        let updated = addAllowRules(text, { ...rule, placement: 'before-denies' });
        if (updated.ok && rule.accepts !== undefined) {
          const parsed = safeParsePermissionsFile(updated.text);
          if (!parsed.ok || !rule.accepts(parsed.rules)) updated = addAllowRules(text, { ...rule, placement: 'end' });
        }
        if (!updated.ok) {
          throw new MolfError(
            'permissions_invalid',
            `the permissions file cannot take the new rule: ${updated.message}`,
          );
        }
        if (updated.added.length > 0) await write(workerId, updated.text);
        return updated.added;
      }),
    removeGrant: (workerId, grantId) =>
      serialize(workerId, async () => {
        const text = await readFile(pathOf(workerId), 'utf8').catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return readDefaultPermissionsText();
          throw error;
        });
        const removed = removeGrantRule(text, grantId);
        if (!removed.ok) {
          throw removed.reason === 'not_found'
            ? new MolfError(
                'grant_not_found',
                `worker ${workerId} has no grant ${grantId}: it was revoked, or its rule was deleted from the file (\`molf permissions grants\` lists the grants)`,
                { field: 'grantId' },
              )
            : new MolfError(
                'permissions_invalid',
                `the grant cannot be revoked while the permissions file is broken (${removed.message}): fix the file with \`molf permissions edit\``,
              );
        }
        await write(workerId, removed.text);
        return removed.rule;
      }),
  };
}
