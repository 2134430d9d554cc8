export { type BackoffOptions, createBackoff } from './backoff.ts';
export {
  type ConnectionStatus,
  createMolfClient,
  type MolfClient,
  type MolfClientOptions,
} from './create-molf-client.ts';
export type { ConnectionChange } from './track-connection.ts';
