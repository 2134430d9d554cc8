/**
 * How a `molf run` ended, as its final JSON result names it: the turn's own end (`completed`,
 * `error`, `step_limit`, `doom_loop`, `aborted`), or `denied` when `--on-ask fail` stopped it at an
 * approval the gate asked for.
 */
export type RunExitReason = 'completed' | 'error' | 'denied' | 'step_limit' | 'doom_loop' | 'aborted';

/**
 * The exit code of each ending. 2 is also a usage error (a bad flag, no prompt, stdin too large),
 * refused before anything runs. The loop guard (the same call repeated) counts as a limit, like
 * the step limit: the model ran out of ways forward, nothing broke. 130 is an interrupt (Ctrl-C), as
 * shells report one, and a turn another client aborted.
 */
export const RUN_EXIT_CODES: Readonly<Record<RunExitReason, number>> = {
  completed: 0,
  error: 1,
  denied: 2,
  step_limit: 3,
  doom_loop: 3,
  aborted: 130,
};
