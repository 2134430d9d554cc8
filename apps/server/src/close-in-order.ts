/**
 * Runs each step of a shutdown in order, awaiting it, and runs the rest even when one throws: a
 * failing close must not leave files open or sockets listening. Rethrows a single failure as it
 * is; several as one `AggregateError`, so none is lost.
 */
export async function closeInOrder(steps: ReadonlyArray<() => unknown>): Promise<void> {
  const failures: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new AggregateError(failures, `${failures.length} steps of a shutdown failed`);
}
