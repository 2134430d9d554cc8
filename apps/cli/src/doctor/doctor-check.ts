/**
 * How one check of `molf doctor` came out: `ok`; `warning` (works, less well: no ripgrep);
 * `error` (something is broken: doctor exits 1); `skipped` (nothing to check here: no .mcp.json).
 */
export type DoctorStatus = 'ok' | 'warning' | 'error' | 'skipped';

/** One line of `molf doctor`, and for a warning or an error the one thing to do about it. */
export type DoctorCheck = {
  /** Stable for scripts reading `--json`: `node`, `data-dir`, `provider:openai`, `mcp:github`… */
  id: string;
  status: DoctorStatus;
  summary: string;
  /** One line: a command to run or a setting to change. Only on a warning or an error. */
  fix?: string;
};
