import { randomUUID } from 'node:crypto';
import type { Logger } from '@molf/logging';
import {
  MolfError,
  type ProjectCatalog,
  type WorkerId,
  WorkerIdSchema,
  type WorkerInfo,
  type WorkerMcpServers,
  type WorkerRegistration,
  WorkerSandboxSchema,
} from '@molf/protocol';
import { z } from 'zod';
import type { StateDocuments } from '../state/index.ts';

const PersistedWorkerSchema = z.object({
  workerId: WorkerIdSchema,
  name: z.string(),
  workdir: z.string(),
  tools: z.array(z.string()),
  /** The worker's own tools among `tools`; absent from older state files (then all of them). */
  builtinTools: z.array(z.string()).optional(),
  version: z.string(),
  online: z.boolean(),
  /** The credential that registered this worker id; only it may use the id while it exists. */
  ownerCredentialId: z.string().optional(),
  connectedAt: z.string(),
  lastSeenAt: z.string(),
  /** The sandbox reported at the last registration. */
  sandbox: WorkerSandboxSchema.optional(),
  /**
   * The lease of the registration that wrote this state last: the release of an older one (on
   * another server of the database) never overwrites a newer registration's state.
   */
  leaseId: z.string().optional(),
});
type PersistedWorker = z.infer<typeof PersistedWorkerSchema>;

/**
 * Proof that one registration (one job subscription) holds a worker id. Only the current lease
 * may mark the worker offline, so the late close of a replaced socket never unregisters the
 * worker that replaced it.
 */
export type WorkerLease = {
  readonly leaseId: string;
  readonly workerId: WorkerId;
  readonly instanceId: string;
  /** Aborted when a newer registration replaces this one. */
  readonly replaced: AbortSignal;
};

type Entry = {
  info: PersistedWorker;
  registration?: WorkerRegistration;
  lease?: WorkerLease & { controller: AbortController };
};

export type RegisterOutcome =
  | { type: 'registered'; lease: WorkerLease; previousInstanceId: string | undefined }
  | { type: 'owned_by_another_credential'; ownerCredentialId: string };

export type WorkerRegistry = {
  /**
   * Registers (or re-registers) a worker for the credential `credentialId`. A worker id stays
   * bound to the credential that first registered it while that credential exists, so one
   * machine's worker token can't take over another machine's workers. The binding is read and
   * written under the worker state's lock, so two servers sharing the database agree on it.
   */
  register(
    registration: WorkerRegistration,
    owner: {
      credentialId: string;
      /** Whether a credential still exists: a revoked owner's ids are free again. */
      isActive: (credentialId: string) => boolean;
      /** The server's own fixed worker token may claim any id (e.g. `molf up` on a project). */
      mayClaimAny: boolean;
    },
  ): Promise<RegisterOutcome>;
  /** The credential a worker id is bound to, as this server last registered or loaded it. */
  ownerOf(workerId: WorkerId): string | undefined;
  /** Marks the worker offline if `lease` is still the current one; returns whether it was. */
  release(lease: WorkerLease): boolean;
  isCurrent(lease: WorkerLease): boolean;
  get(workerId: WorkerId): WorkerInfo | undefined;
  /**
   * As `get`, and a worker this server does not know yet is looked for in the stored states: it
   * may have registered with another server a moment ago, before the change reached this one.
   */
  find(workerId: WorkerId): Promise<WorkerInfo | undefined>;
  /**
   * The worker's registration while it is connected: here, or to another server on the database
   * (its tool calls are then routed there).
   */
  registration(workerId: WorkerId): WorkerRegistration | undefined;
  /** The worker's registration while it is connected to this server. */
  connectedHere(workerId: WorkerId): WorkerRegistration | undefined;
  /** A connected worker's tools changed (MCP servers came or went); false when it is not connected. */
  updateTools(workerId: WorkerId, tools: WorkerRegistration['tools']): boolean;
  /**
   * A connected worker sent a new snapshot of its skills and agents. `stale`: the registration is
   * another process's, or the registry already holds a newer snapshot (messages crossed).
   */
  updateCatalog(
    workerId: WorkerId,
    snapshot: { instanceId: string; catalog: ProjectCatalog },
  ): 'updated' | 'stale' | 'not_connected';
  /**
   * A connected worker sent a new snapshot of its MCP servers' states. `stale` as for the catalog:
   * another process's, or older than the one held.
   */
  updateMcpServers(
    workerId: WorkerId,
    snapshot: { instanceId: string; mcp: WorkerMcpServers },
  ): 'updated' | 'stale' | 'not_connected';
  list(): WorkerInfo[];
  /** Resolves once every pending state write has been stored. */
  flush(): Promise<void>;
};

/** The document that keeps a worker's state. */
export const workerStateDocument = (workerId: string) => `workers/${workerId}/state.json`;
const STATE_DOCUMENT = /^workers\/([^/]+)\/state\.json$/;

/**
 * Known workers: each one's state (`workers/{id}/state.json` in the state documents: who owns the
 * id, how it last registered) is kept there; who is connected now, and with which lease, only in
 * this server's memory.
 */
export async function loadWorkerRegistry(options: {
  documents: StateDocuments;
  logger: Logger;
  /**
   * The registration of a worker connected to another server on the database, if it is: the
   * worker is then listed online, and turns may run here with its tool calls routed there.
   * Default: none.
   */
  elsewhere?: (workerId: WorkerId) => WorkerRegistration | undefined;
}): Promise<WorkerRegistry> {
  const { documents, logger } = options;
  const entries = new Map<WorkerId, Entry>();
  const pendingWrites = new Set<Promise<void>>();

  /** The stored state, or undefined when there is none or it cannot be used (then it is named in the log). */
  async function readStored(name: string): Promise<PersistedWorker | undefined> {
    const text = await documents.read(name);
    if (text === undefined) return undefined;
    try {
      return PersistedWorkerSchema.parse(JSON.parse(text));
    } catch (error) {
      logger.warn({ err: error, file: documents.where(name) }, 'skipping unreadable worker state');
      return undefined;
    }
  }

  for (const name of await documents.list('workers/')) {
    if (!STATE_DOCUMENT.test(name)) continue;
    try {
      const parsed = await readStored(name);
      // Whatever the file says, nobody is connected to a server that just started.
      if (parsed !== undefined) entries.set(parsed.workerId, { info: { ...parsed, online: false } });
    } catch (error) {
      logger.warn({ err: error, file: documents.where(name) }, 'skipping unreadable worker state');
    }
  }

  // Workers that registered with another process or server after this one started: their state
  // appears among the documents, and they are known here too (connected elsewhere, not here).
  // (The watch ends when the documents are closed.)
  documents.watchPrefix('workers/', (name) => {
    const match = STATE_DOCUMENT.exec(name);
    const workerId = match?.[1] as WorkerId | undefined;
    if (workerId === undefined || entries.get(workerId)?.lease !== undefined) return;
    readStored(name)
      .then((stored) => {
        if (entries.get(workerId)?.lease !== undefined) return;
        if (stored === undefined) entries.delete(workerId);
        else entries.set(workerId, { info: { ...stored, online: false } });
      })
      .catch((error: unknown) => logger.warn({ err: error, workerId }, 'cannot read a worker state changed elsewhere'));
  });

  const snapshot = (info: PersistedWorker) => `${JSON.stringify(info, null, 2)}\n`;

  /**
   * Stores a change of a registration's state (offline, new tools), unless the state stored now
   * is another registration's: a newer one, here or on another server.
   */
  function persist(info: PersistedWorker): void {
    const name = workerStateDocument(info.workerId);
    const write = documents
      .lock(name, async () => {
        const stored = await readStored(name);
        if (stored?.leaseId !== undefined && stored.leaseId !== info.leaseId) return;
        await documents.write(name, snapshot(info));
      })
      .catch((error: unknown) => {
        logger.error({ err: error, workerId: info.workerId }, 'could not persist worker state');
      })
      .finally(() => pendingWrites.delete(write));
    pendingWrites.add(write);
  }

  function toInfo(entry: Entry): WorkerInfo {
    const { online, ownerCredentialId: _owner, leaseId: _lease, builtinTools, ...rest } = entry.info;
    const remote = entry.lease === undefined ? options.elsewhere?.(entry.info.workerId) : undefined;
    const mcp = entry.lease === undefined ? remote?.mcp : entry.registration?.mcp;
    return {
      ...rest,
      builtinTools: builtinTools ?? rest.tools,
      state: online || remote !== undefined ? 'online' : 'offline',
      ...(mcp === undefined ? {} : { mcpServers: mcp.servers }),
    };
  }

  /** The worker's own tools among `tools`: those it names as built-in (all, for a worker that names none). */
  function builtinOf(registration: WorkerRegistration, tools: readonly string[]): string[] {
    if (registration.builtinTools === undefined) return [...tools];
    const builtin = new Set(registration.builtinTools);
    return tools.filter((name) => builtin.has(name));
  }

  function connectedHere(workerId: WorkerId): WorkerRegistration | undefined {
    const entry = entries.get(workerId);
    return entry?.lease === undefined ? undefined : entry.registration;
  }

  return {
    async register(incoming, owner) {
      const name = workerStateDocument(incoming.workerId);
      const registered = documents.lock(name, async (): Promise<RegisterOutcome> => {
        let registration = incoming;
        const now = new Date().toISOString();
        const existing = entries.get(registration.workerId);
        const stored = await readStored(name);
        // The stored binding is the one every server shares; this server's memory stands in for
        // a state that was deleted or damaged meanwhile.
        const currentOwner = stored?.ownerCredentialId ?? existing?.info.ownerCredentialId;
        if (
          currentOwner !== undefined &&
          currentOwner !== owner.credentialId &&
          !owner.mayClaimAny &&
          owner.isActive(currentOwner)
        ) {
          return { type: 'owned_by_another_credential', ownerCredentialId: currentOwner };
        }
        const previousInstanceId = existing?.registration?.instanceId;
        // tRPC re-subscribes with the registration it first sent: a newer snapshot the same process
        // sent since must not be replaced by that older one.
        const kept = existing?.registration?.catalog;
        if (
          previousInstanceId === registration.instanceId &&
          kept !== undefined &&
          kept.version > (registration.catalog?.version ?? -1)
        ) {
          registration = { ...registration, catalog: kept };
        }
        // The same for the MCP servers' states.
        const keptMcp = existing?.registration?.mcp;
        if (
          previousInstanceId === registration.instanceId &&
          keptMcp !== undefined &&
          keptMcp.version > (registration.mcp?.version ?? -1)
        ) {
          registration = { ...registration, mcp: keptMcp };
        }
        const toolNames = registration.tools.map((tool) => tool.name);
        const controller = new AbortController();
        const lease = {
          leaseId: randomUUID(),
          workerId: registration.workerId,
          instanceId: registration.instanceId,
          replaced: controller.signal,
          controller,
        };
        const info: PersistedWorker = {
          workerId: registration.workerId,
          name: registration.name,
          workdir: registration.workdir,
          tools: toolNames,
          builtinTools: builtinOf(registration, toolNames),
          version: registration.version,
          online: true,
          ownerCredentialId: owner.credentialId,
          connectedAt: now,
          lastSeenAt: now,
          ...(registration.sandbox === undefined ? {} : { sandbox: registration.sandbox }),
          leaseId: lease.leaseId,
        };
        try {
          await documents.write(name, snapshot(info));
        } catch (error) {
          // A binding that is not stored is not one the other servers know: refused. The same
          // owner again loses only the registration's details, as before.
          if (stored?.ownerCredentialId !== owner.credentialId) {
            if (error instanceof MolfError) throw error;
            throw new MolfError(
              'internal',
              `cannot store which credential owns worker id ${registration.workerId} (${documents.where(name)}): ${(error as Error).message}`,
              { cause: error },
            );
          }
          logger.error({ err: error, workerId: registration.workerId }, 'could not persist worker state');
        }
        // The reason names the new instance, so the old stream can tell a rival process from itself.
        entries.get(registration.workerId)?.lease?.controller.abort(registration.instanceId);
        entries.set(registration.workerId, { info, registration, lease });
        return { type: 'registered', lease, previousInstanceId };
      });
      const write = registered.then(
        () => undefined,
        () => undefined,
      );
      pendingWrites.add(write);
      void write.finally(() => pendingWrites.delete(write));
      return registered;
    },
    release(lease) {
      const entry = entries.get(lease.workerId);
      if (entry?.lease?.leaseId !== lease.leaseId) return false;
      entry.lease = undefined;
      entry.info = { ...entry.info, online: false, lastSeenAt: new Date().toISOString() };
      persist(entry.info);
      return true;
    },
    ownerOf(workerId) {
      return entries.get(workerId)?.info.ownerCredentialId;
    },
    isCurrent(lease) {
      return entries.get(lease.workerId)?.lease?.leaseId === lease.leaseId;
    },
    get(workerId) {
      const entry = entries.get(workerId);
      return entry === undefined ? undefined : toInfo(entry);
    },
    async find(workerId) {
      const known = entries.get(workerId);
      if (known !== undefined) return toInfo(known);
      // Anything but a worker id names no document (and no path).
      if (!WorkerIdSchema.safeParse(workerId).success) return undefined;
      const stored = await readStored(workerStateDocument(workerId));
      if (stored === undefined) return undefined;
      // Kept as the watch would keep it, unless it registered here meanwhile.
      const entry = entries.get(workerId) ?? { info: { ...stored, online: false } };
      if (!entries.has(workerId)) entries.set(workerId, entry);
      return toInfo(entry);
    },
    registration: (workerId) => connectedHere(workerId) ?? options.elsewhere?.(workerId),
    connectedHere,
    updateTools(workerId, tools) {
      const entry = entries.get(workerId);
      if (entry?.lease === undefined || entry.registration === undefined) return false;
      entry.registration = { ...entry.registration, tools };
      const toolNames = tools.map((tool) => tool.name);
      entry.info = { ...entry.info, tools: toolNames, builtinTools: builtinOf(entry.registration, toolNames) };
      persist(entry.info);
      return true;
    },
    updateCatalog(workerId, snapshot) {
      const entry = entries.get(workerId);
      if (entry?.lease === undefined || entry.registration === undefined) return 'not_connected';
      const current = entry.registration;
      if (current.instanceId !== snapshot.instanceId) return 'stale';
      if (current.catalog !== undefined && current.catalog.version >= snapshot.catalog.version) return 'stale';
      entry.registration = { ...current, catalog: snapshot.catalog };
      return 'updated';
    },
    updateMcpServers(workerId, snapshot) {
      const entry = entries.get(workerId);
      if (entry?.lease === undefined || entry.registration === undefined) return 'not_connected';
      const current = entry.registration;
      if (current.instanceId !== snapshot.instanceId) return 'stale';
      if (current.mcp !== undefined && current.mcp.version >= snapshot.mcp.version) return 'stale';
      entry.registration = { ...current, mcp: snapshot.mcp };
      return 'updated';
    },
    list() {
      return [...entries.values()].map(toInfo).sort((a, b) => a.name.localeCompare(b.name));
    },
    async flush() {
      while (pendingWrites.size > 0) await Promise.all([...pendingWrites]);
    },
  };
}
