import type { WorkerRegistration } from '@molf/protocol';

/**
 * Which instance holds each worker's socket, with several servers on one database: the worker's
 * registration (its tools, catalog and MCP servers) is shared, so that any instance can run a turn
 * for it and route the tool calls to the instance it is connected to.
 */
export type WorkerPresence = {
  /**
   * This instance holds the worker's socket with this registration (again after a change), or no
   * longer (`undefined`). Written in the order of the calls; a write that fails (rejected here) is
   * tried again until the database takes it, unless a newer change of the worker came meanwhile.
   */
  update(workerId: string, registration: WorkerRegistration | undefined): Promise<void>;
  /** The registration of a worker connected to another live instance, as last seen. */
  elsewhere(workerId: string): WorkerRegistration | undefined;
  /** The live instance holding the worker's socket, read now. */
  instanceOf(workerId: string): Promise<string | undefined>;
  /** Forgets this instance's workers. */
  close(): Promise<void>;
};
