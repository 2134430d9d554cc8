import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@molf/logging';
import {
  type ProjectCatalog,
  type WorkerId,
  WorkerIdSchema,
  type WorkerInfo,
  type WorkerMcpServers,
  type WorkerRegistration,
  WorkerSandboxSchema,
} from '@molf/protocol';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';

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
  /** Serialises this worker's state writes so an older state never lands after a newer one. */
  writes: Promise<void>;
};

export type RegisterOutcome =
  | { type: 'registered'; lease: WorkerLease; previousInstanceId: string | undefined }
  | { type: 'owned_by_another_credential'; ownerCredentialId: string };

export type WorkerRegistry = {
  /**
   * Registers (or re-registers) a worker for the credential `credentialId`. A worker id stays
   * bound to the credential that first registered it while that credential exists, so one
   * machine's worker token can't take over another machine's workers.
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
  ): RegisterOutcome;
  /** The credential a worker id is bound to. */
  ownerOf(workerId: WorkerId): string | undefined;
  /** Marks the worker offline if `lease` is still the current one; returns whether it was. */
  release(lease: WorkerLease): boolean;
  isCurrent(lease: WorkerLease): boolean;
  get(workerId: WorkerId): WorkerInfo | undefined;
  registration(workerId: WorkerId): WorkerRegistration | undefined;
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
  /** Resolves once every pending state write has reached the disk. */
  flush(): Promise<void>;
};

export async function loadWorkerRegistry(options: { dataDir: string; logger: Logger }): Promise<WorkerRegistry> {
  const workersDir = join(options.dataDir, 'workers');
  await mkdir(workersDir, { recursive: true, mode: 0o700 });
  const entries = new Map<WorkerId, Entry>();

  for (const name of await readdir(workersDir)) {
    const file = join(workersDir, name, 'state.json');
    try {
      const parsed = PersistedWorkerSchema.parse(JSON.parse(await readFile(file, 'utf8')));
      // Whatever the file says, nobody is connected to a server that just started.
      entries.set(parsed.workerId, { info: { ...parsed, online: false }, writes: Promise.resolve() });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      options.logger.warn({ err: error, file }, 'skipping unreadable worker state');
    }
  }

  function persist(entry: Entry): void {
    const snapshot = `${JSON.stringify(entry.info, null, 2)}\n`;
    const dir = join(workersDir, entry.info.workerId);
    entry.writes = entry.writes
      .then(async () => {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        await writeFileAtomic(join(dir, 'state.json'), snapshot, { mode: 0o600 });
      })
      .catch((error: unknown) => {
        options.logger.error({ err: error, workerId: entry.info.workerId }, 'could not persist worker state');
      });
  }

  function toInfo(entry: Entry): WorkerInfo {
    const { online, ownerCredentialId: _owner, builtinTools, ...rest } = entry.info;
    const mcp = entry.lease === undefined ? undefined : entry.registration?.mcp;
    return {
      ...rest,
      builtinTools: builtinTools ?? rest.tools,
      state: online ? 'online' : 'offline',
      ...(mcp === undefined ? {} : { mcpServers: mcp.servers }),
    };
  }

  /** The worker's own tools among `tools`: those it names as built-in (all, for a worker that names none). */
  function builtinOf(registration: WorkerRegistration, tools: readonly string[]): string[] {
    if (registration.builtinTools === undefined) return [...tools];
    const builtin = new Set(registration.builtinTools);
    return tools.filter((name) => builtin.has(name));
  }

  return {
    register(incoming, owner) {
      let registration = incoming;
      const now = new Date().toISOString();
      const existing = entries.get(registration.workerId);
      const currentOwner = existing?.info.ownerCredentialId;
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
      // The reason names the new instance, so the old stream can tell a rival process from itself.
      existing?.lease?.controller.abort(registration.instanceId);
      const controller = new AbortController();
      const lease = {
        leaseId: randomUUID(),
        workerId: registration.workerId,
        instanceId: registration.instanceId,
        replaced: controller.signal,
        controller,
      };
      const entry: Entry = {
        info: {
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
        },
        registration,
        lease,
        writes: existing?.writes ?? Promise.resolve(),
      };
      entries.set(registration.workerId, entry);
      persist(entry);
      return { type: 'registered', lease, previousInstanceId };
    },
    release(lease) {
      const entry = entries.get(lease.workerId);
      if (entry?.lease?.leaseId !== lease.leaseId) return false;
      entry.lease = undefined;
      entry.info = { ...entry.info, online: false, lastSeenAt: new Date().toISOString() };
      persist(entry);
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
    registration(workerId) {
      const entry = entries.get(workerId);
      return entry?.lease === undefined ? undefined : entry.registration;
    },
    updateTools(workerId, tools) {
      const entry = entries.get(workerId);
      if (entry?.lease === undefined || entry.registration === undefined) return false;
      entry.registration = { ...entry.registration, tools };
      const toolNames = tools.map((tool) => tool.name);
      entry.info = { ...entry.info, tools: toolNames, builtinTools: builtinOf(entry.registration, toolNames) };
      persist(entry);
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
      await Promise.all([...entries.values()].map((entry) => entry.writes));
    },
  };
}
