import type { ModelCheck, ModelList, WorkerId } from '@molf/protocol';
import type { AgentDirectory, AgentRunner } from '../agent/index.ts';
import type { ApprovalGate } from '../approvals/approval-gate.ts';
import type { ApprovalWatchers } from '../approvals/approval-watchers.ts';
import type { GrantService } from '../approvals/grant-service.ts';
import type { PermissionsStore } from '../approvals/permissions-store.ts';
import type { CredentialStore } from '../auth/credential-store.ts';
import type { ApprovalAnswers } from '../cluster/approval-answers.ts';
import type { CronScheduler } from '../cron/index.ts';
import type { PairingCodeStore } from '../pairing/index.ts';
import type { SessionEvents } from '../sessions/session-events.ts';
import type { SessionStore } from '../sessions/session-store.ts';
import type { ToolResultFiles } from '../sessions/tool-result-files.ts';
import type { ToolCatalog } from '../tools/tool-catalog.ts';
import type { JobDispatcher } from '../workers/job-dispatcher.ts';
import type { WorkerChanges } from '../workers/worker-changes.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';

/** The services the routers adapt: every procedure calls one of them. */
export type RouterServices = {
  registry: WorkerRegistry;
  /** The server's credentials: who is who, and the admin's minting and revoking. */
  credentials: CredentialStore;
  /** One-time pairing codes: the admin's making, listing and cancelling. */
  pairing: PairingCodeStore;
  /** Whether a credential still exists (fixed ones always do). */
  isCredentialActive: (credentialId: string) => boolean;
  /** Whether a credential is one of the server's fixed tokens. */
  isCredentialFixed: (credentialId: string) => boolean;
  dispatcher: JobDispatcher;
  serverVersion: string;
  gate: ApprovalGate;
  /**
   * With several servers: how long a worker whose socket closed here has to reconnect to any server
   * before the approvals its calls wait for are denied (it keeps its calls when it moves). Undefined:
   * they are denied at once.
   */
  workerReturnMs?: number;
  /** People's answers to approvals, and the list of those waiting: this server's, or every instance's. */
  answers: ApprovalAnswers;
  /** The clients following approvals now (for unattended runs). */
  approvalWatchers: ApprovalWatchers;
  permissions: PermissionsStore;
  grants: GrantService;
  sessions: SessionStore;
  sessionEvents: SessionEvents;
  /** The full text of cut tool outputs and the attachments of tool results, for clients. */
  toolResultFiles: ToolResultFiles;
  agent: AgentRunner;
  /** Scheduled prompts. */
  cron: CronScheduler;
  /** The subagents each worker's sessions can run. */
  agents: AgentDirectory;
  catalog: ToolCatalog;
  onWorkerEvent: (event: { type: 'worker.connected' | 'worker.disconnected'; workerId: string; name: string }) => void;
  /** Workers connecting, disconnecting and changing what they show, for `workers.events`. */
  workerChanges: WorkerChanges;
  /** The models a picker offers: the default, the config's, recent sessions' (no network). */
  listModels: () => Promise<ModelList>;
  /** Whether a prompt with this model, or in this session, would reach its provider (no network). */
  checkModel: (input: { model?: string | undefined; sessionId?: string | undefined }) => Promise<ModelCheck>;
  /** A worker sent a new snapshot of its skills and agents. */
  onCatalogChanged: (workerId: WorkerId) => void;
};
