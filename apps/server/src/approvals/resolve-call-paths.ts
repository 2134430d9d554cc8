import { isAbsolute, relative, resolve as resolvePath } from 'node:path';
import type { PermissionEngine, PermissionRule } from '@molf/permissions';
import { toReadRules } from '@molf/permissions';
import { type ToolErrorKind, toResolvePathsParams, type WorkerId } from '@molf/protocol';
import type { JobDispatcher } from '../workers/job-dispatcher.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';
import type { PermissionsStore } from './permissions-store.ts';

/** What the worker said about a call's paths: where each leads, and what a directory read whole holds. */
export type CallPaths = {
  /** Each path as written → its canonical forms (none: the worker could not tell). */
  paths: ReadonlyMap<string, readonly string[]>;
  /** Each directory read whole → its forms and those of a file under it the read rules deny. */
  trees: ReadonlyMap<string, readonly string[]>;
};

export const NO_CALL_PATHS: CallPaths = { paths: new Map(), trees: new Map() };

export type PathResolutionFailure = {
  ok: false;
  message: string;
  errorKind: Extract<ToolErrorKind, 'permission_denied' | 'cancelled' | 'worker_offline'>;
};

export type CallPathResolver = {
  /**
   * Where a file tool's paths lead if no link is in the way: each path resolved against the workdir
   * as written, with no question to the worker. A call allowed on these runs with them pinned: the
   * worker refuses it (meta.pathMoved) when a path really leads elsewhere, and the call is judged
   * again on what the worker says. Undefined for calls that must ask the worker first (shell lines,
   * patterns, directories read whole, `~`, an offline worker).
   */
  predict(call: { workerId: WorkerId; tool: string; args: Record<string, unknown> }): CallPaths | undefined;
  /** Asks the call's worker where the call's paths lead; a call without paths needs no question. */
  resolve(call: {
    workerId: WorkerId;
    tool: string;
    args: Record<string, unknown>;
    /** A subagent's own rules, applied with the worker's when a directory is looked through. */
    agentRules?: readonly PermissionRule[];
    signal?: AbortSignal;
  }): Promise<{ ok: true; value: CallPaths } | PathResolutionFailure>;
};

/** How long the gate waits for the worker to say where paths lead. */
const RESOLVE_PATHS_TIMEOUT_MS = 10_000;

export const CANCELLED_MESSAGE = 'The tool call was cancelled before it was approved.';

/** The engine's view of the worker's answers. */
export function toPathLookups(callPaths: CallPaths) {
  return {
    canonicalPaths: (given: string) => callPaths.paths.get(given),
    treeContents: (given: string) => callPaths.trees.get(given),
  };
}

export function createCallPathResolver(options: {
  engine: PermissionEngine;
  store: PermissionsStore;
  registry: WorkerRegistry;
  dispatcher: JobDispatcher;
  /** The clock rules are judged by (ms since the epoch): expired rules are left out. */
  now: () => number;
}): CallPathResolver {
  const { engine, store, registry, dispatcher } = options;
  return {
    predict(call) {
      const registration = registry.registration(call.workerId);
      if (registration === undefined || call.tool === 'shell_exec') return undefined;
      const wanted = engine.pathArguments({ tool: call.tool, args: call.args, home: registration.home });
      if (wanted.length === 0) return undefined;
      const paths = new Map<string, readonly string[]>();
      for (const entry of wanted) {
        if (entry.pattern || entry.tree !== undefined) return undefined;
        if (entry.path.includes('\0') || entry.path.startsWith('~')) return undefined;
        const absolute = resolvePath(registration.workdir, entry.path);
        const fromWorkdir = relative(registration.workdir, absolute);
        const inside = fromWorkdir === '' || (!fromWorkdir.startsWith('..') && !isAbsolute(fromWorkdir));
        paths.set(entry.path, inside ? [fromWorkdir || '.', absolute] : [absolute]);
      }
      return { paths, trees: new Map() };
    },

    async resolve(call) {
      const home = registry.registration(call.workerId)?.home;
      // A file tool's path, or the files a shell line reads and writes (its glob patterns expanded there).
      const wanted = engine.pathArguments({ tool: call.tool, args: call.args, home });
      if (wanted.length === 0) return { ok: true, value: NO_CALL_PATHS };
      // At most what one request takes of each kind; the rest is answered with no forms, so the line asks.
      const { params, unsent } = toResolvePathsParams(wanted);
      // A directory read whole is looked through for a file the read_file rules deny.
      const readRules =
        params.trees === undefined && params.visibleTrees === undefined
          ? undefined
          : toReadRules({
              rules: (await store.load(call.workerId)).rules,
              agentRules: call.agentRules,
              home,
              now: options.now(),
            });
      const outcome = await dispatcher.request({
        workerId: call.workerId,
        request: { method: 'paths/resolve', params: { ...params, ...(readRules === undefined ? {} : { readRules }) } },
        timeoutMs: RESOLVE_PATHS_TIMEOUT_MS,
        ...(call.signal === undefined ? {} : { signal: call.signal }),
      });
      if (!outcome.ok) {
        if (outcome.errorKind === 'cancelled' || call.signal?.aborted === true) {
          return { ok: false, errorKind: 'cancelled', message: CANCELLED_MESSAGE };
        }
        const offline = ['worker_offline', 'worker_not_found', 'worker_restarted'].includes(outcome.errorKind);
        return {
          ok: false,
          errorKind: offline ? 'worker_offline' : 'permission_denied',
          message: offline
            ? `${outcome.message} The call was not run.`
            : `The approval gate could not learn where the path leads on the worker (${outcome.message}), so the call was not run.`,
        };
      }
      const paths = new Map<string, readonly string[]>(outcome.result.paths.map((entry) => [entry.given, entry.forms]));
      const trees = new Map<string, readonly string[]>(
        (outcome.result.trees ?? []).map((entry) => [entry.given, entry.forms]),
      );
      for (const path of unsent.paths) paths.set(path, []);
      for (const path of unsent.trees) trees.set(path, []);
      return { ok: true, value: { paths, trees } };
    },
  };
}
