export {
  type Answerer,
  type ApprovalGate,
  createApprovalGate,
  type GateOutcome,
  type GateRequest,
} from './approval-gate.ts';
export { type AuditLog, type AuditRecord, openAuditLog } from './audit-log.ts';
export { requestMcpServerStart, withdrawMcpServerStart } from './mcp-server-approvals.ts';
export { createPermissionsStore, type PermissionsStore } from './permissions-store.ts';
