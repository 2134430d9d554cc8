/**
 * The `molf up` supervisor's own entry: `molf up` checks its flags, then replaces its process with
 * this one (same pid, `process.execve`), passing the plan in {@link UP_PLAN_ENV}. Bundled apart, as
 * CommonJS that requires nothing but Node's built-ins, by scripts/build-cli.ts.
 */
import { superviseUp } from './supervise-up.ts';
import { parseUpPlan, UP_PLAN_ENV } from './up-plan.ts';

const plan = parseUpPlan(process.env[UP_PLAN_ENV]);
// The children get their environment from the plan; this variable is no business of theirs.
delete process.env[UP_PLAN_ENV];
if (plan instanceof Error) {
  process.stderr.write(`molf: ${plan.message}\n`);
  process.exitCode = 1;
} else {
  superviseUp(plan).catch((error: unknown) => {
    process.stderr.write(`molf: ${(error as Error).message}\n`);
    process.exitCode = 1;
  });
}
