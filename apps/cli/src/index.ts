export { createProgram, CLI_VERSION } from './create-program.ts';
export { findConnection, saveConnection } from './connection-store.ts';
