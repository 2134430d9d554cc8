import { createSilentLogger, type Logger } from '@molf/logging';
import { MolfError, type WorkerSandbox } from '@molf/protocol';
import { createSandboxRunner, type SandboxRunner } from './create-sandbox-runner.ts';
import { findBwrap } from './find-bwrap.ts';
import { runSandboxSelfTest, type SandboxSelfTest } from './run-sandbox-self-test.ts';
import { type SandboxConfig, toSandboxSettings } from './sandbox-config.ts';

export type PreparedSandbox = {
  /** What the worker reports (registration, `molf workers`, the start line). */
  status: WorkerSandbox;
  /** For shell_exec; undefined when commands run without the sandbox. */
  runner: SandboxRunner | undefined;
  /** For stdio MCP servers; undefined when they run without it. */
  mcpRunner: SandboxRunner | undefined;
};

/** The sandbox as people read it: `on`, `on, network off`, `off`, `failed: …`. */
export function describeSandbox(status: WorkerSandbox): string {
  if (status.mode === 'off') return 'off';
  if (!status.active) return `failed: ${status.selfTest?.failed ?? 'unknown reason'}`;
  return ['on', ...(status.network ? [] : ['network off']), ...(status.mcp ? [] : ['MCP servers outside'])].join(', ');
}

/** The self-test within the registration's bounds (a long path or bwrap message must not stop the worker). */
function bounded(selfTest: SandboxSelfTest): SandboxSelfTest {
  const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
  return {
    ok: selfTest.ok,
    ...(selfTest.failed === undefined ? {} : { failed: cut(selfTest.failed, 1_000) }),
    checks: selfTest.checks.slice(0, 32).map((check) => ({
      name: cut(check.name, 64),
      ok: check.ok,
      ...(check.detail === undefined ? {} : { detail: cut(check.detail, 500) }),
    })),
  };
}

/**
 * Reads the sandbox config and, in modes `on` and `required`, proves with the self-test that the
 * sandbox enforces before any command runs in it. A failed self-test in mode `required` is a
 * `sandbox_failed` error (the worker does not start); in mode `on` it is logged as an error and the
 * worker runs without the sandbox, saying so in its status.
 */
export async function prepareSandbox(options: {
  config: SandboxConfig | undefined;
  workdir: string;
  /** Where `MOLF_HOME`, `MOLF_CLIENT_DIR` and `PATH` (for bwrap) are read. */
  env: NodeJS.ProcessEnv;
  /** The worker user's home. Default: os.homedir(). */
  home?: string;
  logger?: Logger;
}): Promise<PreparedSandbox> {
  const logger = options.logger ?? createSilentLogger();
  const settings = toSandboxSettings(options.config, {
    workdir: options.workdir,
    env: options.env,
    ...(options.home === undefined ? {} : { home: options.home }),
  });
  const status = { mode: settings.mode, network: settings.network };
  if (settings.mode === 'off') {
    return { status: { ...status, active: false, mcp: false }, runner: undefined, mcpRunner: undefined };
  }
  const bwrap = process.platform === 'linux' ? findBwrap(options.env) : undefined;
  const selfTest: SandboxSelfTest = bounded(
    bwrap === undefined
      ? {
          ok: false,
          failed:
            process.platform === 'linux'
              ? 'bwrap is not installed (apt-get install bubblewrap)'
              : `the sandbox needs Linux and bubblewrap (this is ${process.platform})`,
          checks: [],
        }
      : await runSandboxSelfTest({ bwrap, settings, env: options.env }),
  );
  if (!selfTest.ok || bwrap === undefined) {
    if (settings.mode === 'required') {
      throw new MolfError(
        'sandbox_failed',
        `the sandbox is required (--sandbox required) but its self-test failed: ${selfTest.failed}`,
      );
    }
    logger.error(
      { sandbox: settings.mode, failed: selfTest.failed, checks: selfTest.checks },
      `SANDBOX SELF-TEST FAILED: ${selfTest.failed}. Commands and MCP servers run WITHOUT the sandbox ` +
        '(use --sandbox required to refuse to start instead)',
    );
    return { status: { ...status, active: false, mcp: false, selfTest }, runner: undefined, mcpRunner: undefined };
  }
  const runner = createSandboxRunner({ bwrap, settings });
  logger.info(
    { sandbox: settings.mode, network: settings.network, mcp: settings.mcp, hidden: settings.hidden },
    'sandbox self-test passed; commands run in the sandbox',
  );
  return {
    status: { ...status, active: true, mcp: settings.mcp, selfTest },
    runner,
    mcpRunner: settings.mcp ? runner : undefined,
  };
}
