export {
  type Answerer,
  type ApprovalGate,
  type ApproveOptions,
  createApprovalGate,
  type GateOutcome,
  type GateRequest,
  type UnattendedAsk,
} from './approval-gate.ts';
export { type ApprovalWatchers, createApprovalWatchers } from './approval-watchers.ts';
export type { AuditEntry, AuditLog, AuditRecord } from './audit-log.ts';
export { openFileAuditLog } from './file-audit-log.ts';
export { createGrantService, type GrantService } from './grant-service.ts';
export { requestMcpServerStart, withdrawMcpServerStart } from './mcp-server-approvals.ts';
export { createPermissionsStore, type PermissionsStore } from './permissions-store.ts';
export { openPostgresAuditLog } from './postgres-audit-log.ts';
export { createSessionGrants, type SessionGrants } from './session-grants.ts';
export { createWorkerRulesWatch, type WorkerRulesWatch } from './watch-worker-rules.ts';
