export * from './approvals.ts';
export * from './auth.ts';
export * from './credentials.ts';
export * from './cron.ts';
export * from './cron-text.ts';
export * from './errors.ts';
export * from './file-diff.ts';
export * from './grants.ts';
export * from './ids.ts';
export * from './mcp-server-approval.ts';
export * from './models.ts';
export * from './one-line-name.ts';
export * from './project-catalog.ts';
export * from './sessions.ts';
export * from './tool-definitions.ts';
export * from './tool-output.ts';
export * from './tool-result.ts';
export * from './usage.ts';
export * from './worker.ts';
export * from './worker-requests.ts';

/** Version of the wire contracts in this package. */
export const PROTOCOL_VERSION = '0.1.0';
