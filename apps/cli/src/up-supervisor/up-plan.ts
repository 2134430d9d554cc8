/**
 * What `molf up` hands its supervisor: everything decided from the flags, and no secret. It travels
 * in the supervisor's environment (see {@link UP_PLAN_ENV}), so a token must never be part of it:
 * the supervisor makes or loads the tokens itself.
 */
export type UpPlan = {
  /** The project directory, checked: the worker's workdir and the key of the saved connection. */
  projectDir: string;
  /** The CLI script the children run (the supervisor's own `molf`). */
  cliMain: string;
  /** Node options for the children (those of the `molf up` that was started, watch mode left out). */
  nodeOptions: string[];
  /** `molf server …` arguments. */
  serverArgs: string[];
  /** `molf worker …` arguments, without `--server`: the server's URL is known once it listens. */
  workerArgs: string[];
  /** Variables both children get on top of `molf up`'s environment. */
  env: Record<string, string>;
};

/** The environment variable that carries the plan from `molf up` to the supervisor it becomes. */
export const UP_PLAN_ENV = 'MOLF_UP_PLAN';

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/** The plan in `text`, or an Error that says what is wrong with it. */
export function parseUpPlan(text: string | undefined): UpPlan | Error {
  if (text === undefined || text === '') return new Error(`${UP_PLAN_ENV} is not set: run \`molf up\`, not this file`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return new Error(`${UP_PLAN_ENV} is not JSON`);
  }
  const plan = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const env = plan.env;
  const valid =
    typeof plan.projectDir === 'string' &&
    typeof plan.cliMain === 'string' &&
    isStringArray(plan.nodeOptions) &&
    isStringArray(plan.serverArgs) &&
    isStringArray(plan.workerArgs) &&
    typeof env === 'object' &&
    env !== null &&
    Object.values(env).every((item) => typeof item === 'string');
  return valid ? (plan as UpPlan) : new Error(`${UP_PLAN_ENV} does not hold a plan of molf up`);
}
