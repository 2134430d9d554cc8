export {
  type CredentialStore,
  type ListedCredential,
  openCredentialStore,
  type StoredCredential,
  toCredentialInfo,
} from './auth/credential-store.ts';
export { generateToken } from './auth/tokens.ts';
export {
  loadServerConfigFile,
  type ServerConfigFile,
  toCronSettings,
  toModelSettings,
} from './config/load-server-config.ts';
export {
  loadProjectConfigFile,
  type ProjectConfigFile,
  projectConfigPath,
  withProjectConfig,
} from './config/project-config.ts';
export {
  createServer,
  DEFAULT_HOST,
  DEFAULT_MAX_PAYLOAD_BYTES,
  DEFAULT_PORT,
  type MolfServer,
  type ServerConfig,
} from './create-server.ts';
export { newCronJob } from './cron/cron-job-fields.ts';
export { type CronJobStore, type CronScheduler, openCronJobStore, startCronScheduler } from './cron/index.ts';
export { type CopyReport, checkCopy, copyDataDir } from './database/copy-data-dir.ts';
export {
  DATABASE_URL_ENV,
  type Database,
  describeDatabaseUrl,
  openDatabase,
  type SchemaPolicy,
} from './database/index.ts';
export {
  MAX_LIVE_PAIRING_CODES,
  openPairingCodeStore,
  PAIRING_CODE_TTL_MS,
  PAIRING_LIMITS,
  type PairingCodeStore,
} from './pairing/index.ts';
export {
  BUILT_IN_PROVIDERS,
  builtinProviderKey,
  KEY_VARIABLES,
  type ProviderSettings,
} from './providers/resolve-model.ts';
export type { AppRouter } from './rpc/router.ts';
export {
  createServerServices,
  type DatabaseSettings,
  type ServerServices,
  type ServerServicesConfig,
} from './services/index.ts';
export {
  createPostgresSessionStore,
  createSessionEvents,
  openFileSessionStore,
  openPostgresEventLog,
  type SessionStore,
} from './sessions/index.ts';
export { openFileStateDocuments, openPostgresStateDocuments, type StateDocuments } from './state/index.ts';
export {
  type CertificatePair,
  defaultCertificateNames,
  generateCertificate,
  loadServerCertificate,
  readServerCertificate,
  renewServerCertificate,
  type ServerCertificate,
  safeParseCertificateName,
} from './tls/index.ts';
export { safeParseOrigin } from './transport/origin-policy.ts';
export { SERVER_VERSION } from './version.ts';
export { DEFAULT_DISPATCH_MARGIN_MS, type DispatchOptions, type JobDispatcher } from './workers/job-dispatcher.ts';
