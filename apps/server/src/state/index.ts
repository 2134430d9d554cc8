export { openFileStateDocuments } from './file-state-documents.ts';
export { DOCUMENTS_CHANNEL, openPostgresStateDocuments } from './postgres-state-documents.ts';
export type { StateDocuments } from './state-documents.ts';
