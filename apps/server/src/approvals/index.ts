export {
  type Answerer,
  type ApprovalGate,
  type ApproveOptions,
  createApprovalGate,
  type GateOutcome,
  type GateRequest,
} from './approval-gate.ts';
export { type AuditLog, type AuditRecord, openAuditLog } from './audit-log.ts';
export { createGrantService, type GrantService } from './grant-service.ts';
export { requestMcpServerStart, withdrawMcpServerStart } from './mcp-server-approvals.ts';
export { createPermissionsStore, type PermissionsStore } from './permissions-store.ts';
