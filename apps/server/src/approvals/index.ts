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
export { type AuditLog, type AuditRecord, openAuditLog } from './audit-log.ts';
export { createGrantService, type GrantService } from './grant-service.ts';
export { requestMcpServerStart, withdrawMcpServerStart } from './mcp-server-approvals.ts';
export { createPermissionsStore, type PermissionsStore } from './permissions-store.ts';
export { createWorkerRulesWatch, type WorkerRulesWatch } from './watch-worker-rules.ts';
