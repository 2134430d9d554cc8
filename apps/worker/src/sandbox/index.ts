export type { SandboxMount } from './bwrap-arguments.ts';
export {
  createSandboxRunner,
  type SandboxRunner,
  sandboxStarted,
  type WrappedCommand,
} from './create-sandbox-runner.ts';
export { describeSandboxRefusal, detectSandboxRefusal, type SandboxRefusal } from './detect-sandbox-refusal.ts';
export { findBwrap } from './find-bwrap.ts';
export { describeSandbox, type PreparedSandbox, prepareSandbox } from './prepare-sandbox.ts';
export { runSandboxSelfTest, type SandboxSelfTest } from './run-sandbox-self-test.ts';
export {
  defaultHiddenPaths,
  READ_ONLY_IN_WORKDIR,
  type SandboxConfig,
  SandboxConfigFileSchema,
  type SandboxMode,
  SandboxModeSchema,
  type SandboxSettings,
  toSandboxSettings,
} from './sandbox-config.ts';
