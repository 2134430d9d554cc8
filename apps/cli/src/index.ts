export { findConnection, saveConnection } from './connection-store.ts';
export { CLI_VERSION, createProgram } from './create-program.ts';
