/**
 * Runs tasks one after another per key, in the order they came, whether the one before succeeded
 * or failed; keys with nothing queued are forgotten. Returns the function that queues a task.
 */
export function createTurnsByKey(): <T>(key: string, task: () => Promise<T>) => Promise<T> {
  /** The tail of each key's queue. */
  const turns = new Map<string, Promise<unknown>>();
  return (key, task) => {
    const previous = turns.get(key) ?? Promise.resolve();
    const run = previous.then(task, task);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    turns.set(key, settled);
    void settled.then(() => {
      if (turns.get(key) === settled) turns.delete(key);
    });
    return run;
  };
}
