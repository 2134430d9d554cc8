import { createHash } from 'node:crypto';
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
import type { StateDocuments } from '../state/index.ts';

export type WorkerRules = {
  rules: readonly PermissionRule[];
  /** Set while the file on disk is broken; `rules` are then the last good ones (or none: ask everything). */
  problem: PermissionsProblem | undefined;
};

type Cached = {
  /** The version of the document last read (the documents' own: a file's mtime, size and inode, a row's number). */
  version: string;
  rules: readonly PermissionRule[] | undefined;
  lastGood: readonly PermissionRule[] | undefined;
  problem: PermissionsProblem | undefined;
};

export type PermissionsStore = {
  /** Where the worker's rules are, for people: the file's path, or the document in the database. */
  pathOf(workerId: WorkerId): string;
  /** The rules in force now; reads the document again when it changed since the last call. Never throws. */
  load(workerId: WorkerId): Promise<WorkerRules>;
  /** Whether `load` has read the worker's file since the server started (then a missing file is a problem). */
  hasRead(workerId: WorkerId): boolean;
  /** Whether the worker has a rules document now, as this process knows it. */
  exists(workerId: WorkerId): boolean;
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
   * Calls `onChange` when the worker's file may have changed (edited by hand, replaced, written by
   * another server on the database), once the changes have settled; returns the function that
   * stops watching. Never throws: a directory that cannot be watched is logged and changes are
   * then noticed at the next call.
   */
  watch(workerId: WorkerId, onChange: () => void): () => void;
};

export function versionOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

/** The document that holds a worker's rules. */
export const permissionsDocument = (workerId: WorkerId) => `workers/${workerId}/permissions.jsonc`;

/**
 * One `permissions.jsonc` per worker (`workers/{workerId}/` in the state documents: the data
 * directory, or the database), seeded with the commented default on first use. A broken file
 * never means allow: the last rules that parsed stay in force, or none (everything asks) if there
 * never were any, and the problem is reported once per file version. A file deleted while the
 * server runs is a problem too, not a reason to start over from the (more permissive) defaults.
 * Every change is a read-change-write under the document's lock, so two "always" answers (on this
 * server or on two servers sharing the database) never lose each other's rule.
 */
export function createPermissionsStore(options: {
  documents: StateDocuments;
  logger: Logger;
  onProblem: (problem: PermissionsProblem) => void;
  /** The file parses again after a problem. */
  onValid: (workerId: WorkerId) => void;
}): PermissionsStore {
  const { documents, logger } = options;
  const cache = new Map<WorkerId, Cached>();

  const pathOf = (workerId: WorkerId) => documents.where(permissionsDocument(workerId));

  /** Creates the default file unless one exists (an exclusive create: never overwrites a user's save). */
  async function seed(workerId: WorkerId): Promise<void> {
    if (await documents.create(permissionsDocument(workerId), readDefaultPermissionsText())) {
      logger.info({ workerId, path: pathOf(workerId) }, 'permissions file created with the default rules');
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

  const missing = { line: 1, column: 1, message: 'the file was deleted; write it again with `molf permissions edit`' };

  async function loadOrThrow(workerId: WorkerId, previous: Cached | undefined): Promise<WorkerRules> {
    const name = permissionsDocument(workerId);
    let current = documents.known(name);
    if (current.text === undefined) {
      if (previous !== undefined) return fail(workerId, previous, 'missing', missing);
      await seed(workerId);
      // Read through: another server may have seeded it first, and its copy may not be here yet.
      await documents.read(name);
      current = documents.known(name);
      if (current.text === undefined) return fail(workerId, previous, 'missing', missing);
    }
    if (previous !== undefined && previous.version === current.version) {
      return { rules: previous.rules ?? previous.lastGood ?? [], problem: previous.problem };
    }
    const parsed = safeParsePermissionsFile(current.text);
    if (!parsed.ok) return fail(workerId, previous, current.version, parsed.error);
    cache.set(workerId, { version: current.version, rules: parsed.rules, lastGood: parsed.rules, problem: undefined });
    if (previous?.problem !== undefined) {
      logger.info({ workerId, path: pathOf(workerId) }, 'permissions file is valid again');
      options.onValid(workerId);
    }
    return { rules: parsed.rules, problem: undefined };
  }

  function fail(
    workerId: WorkerId,
    previous: Cached | undefined,
    version: string,
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
    if (previous?.version !== version || previous.problem === undefined) {
      logger.error(
        { workerId, file: problem.file, line: problem.line, column: problem.column, fallback: problem.fallback },
        `permissions file is invalid: ${problem.message}`,
      );
      options.onProblem(problem);
    }
    cache.set(workerId, { version, rules: undefined, lastGood, problem });
    return { rules: lastGood ?? [], problem };
  }

  /** Runs a read-change-write of the worker's file under its lock (across processes and servers). */
  function change<T>(workerId: WorkerId, task: (name: string) => Promise<T>): Promise<T> {
    const name = permissionsDocument(workerId);
    return documents.lock(name, () => task(name));
  }

  async function readText(workerId: WorkerId): Promise<{ text: string; version: string }> {
    await load(workerId);
    const text = (await documents.read(permissionsDocument(workerId))) ?? readDefaultPermissionsText();
    return { text, version: versionOf(text) };
  }

  return {
    pathOf,
    load,
    hasRead: (workerId) => cache.has(workerId),
    exists: (workerId) => documents.known(permissionsDocument(workerId)).text !== undefined,
    readText,
    watch: (workerId, onChange) => documents.watch(permissionsDocument(workerId), onChange),
    writeText: (workerId, text, writeOptions = {}) =>
      change(workerId, async (name) => {
        const parsed = safeParsePermissionsFile(text);
        if (!parsed.ok) {
          throw new MolfError(
            'permissions_invalid',
            `line ${parsed.error.line}, column ${parsed.error.column}: ${parsed.error.message}`,
          );
        }
        if (writeOptions.baseVersion !== undefined) {
          const current = (await documents.read(name).catch(() => undefined)) ?? readDefaultPermissionsText();
          if (versionOf(current) !== writeOptions.baseVersion) {
            throw new MolfError(
              'conflict',
              'the permissions file changed since it was read (an "always" answer or another edit): read it again and redo the change',
            );
          }
        }
        await documents.write(name, text);
      }),
    appendAllow: (workerId, rule) =>
      change(workerId, async (name) => {
        const text = await documents.read(name);
        if (text === undefined) {
          throw new MolfError(
            'permissions_invalid',
            `the permissions file ${pathOf(workerId)} was deleted: write it again with \`molf permissions edit\``,
          );
        }
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
        if (updated.added.length > 0) await documents.write(name, updated.text);
        return updated.added;
      }),
    removeGrant: (workerId, grantId) =>
      change(workerId, async (name) => {
        const text = (await documents.read(name)) ?? readDefaultPermissionsText();
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
        await documents.write(name, removed.text);
        return removed.rule;
      }),
  };
}
