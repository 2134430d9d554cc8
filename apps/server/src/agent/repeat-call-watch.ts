/** How many identical tool calls in a row count as a loop. */
export const REPEAT_RUN_LENGTH = 3;

export type RepeatVerdict = 'ok' | 'warn' | 'stop';

export type RepeatCallWatch = {
  /** One tool call of the turn, in call order. */
  observe(toolName: string, input: unknown): RepeatVerdict;
};

/**
 * Watches one turn's tool calls for the same call (name and arguments) repeated: the third in a row
 * gets a warning with its result, and a call that repeats that run once more is not run (the turn
 * ends). The warning belongs to its run: a later run of different identical calls is warned again.
 */
export function createRepeatCallWatch(): RepeatCallWatch {
  let last = '';
  let run = 0;
  let warned = false;
  return {
    observe(toolName, input) {
      const signature = `${toolName}\u0000${JSON.stringify(input)}`;
      if (signature === last) run += 1;
      else {
        run = 1;
        warned = false;
      }
      last = signature;
      if (run < REPEAT_RUN_LENGTH) return 'ok';
      if (!warned) {
        warned = true;
        return 'warn';
      }
      return 'stop';
    },
  };
}
