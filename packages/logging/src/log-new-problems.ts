import type { Logger } from 'pino';

/** A problem of a file, as a skill or agent catalog reports it. */
export type FileProblem = { path: string; severity: 'warning' | 'error'; message: string };

/**
 * Returns a function that logs the problems of each snapshot that the previous one did not have
 * (a warning as a warning, an error as an error, with the file), so a broken file is logged when it
 * breaks, not again at every rescan. The logger may be a child carrying context (a worker's id).
 */
export function createProblemLog(logger: Logger): (problems: readonly FileProblem[]) => void {
  let logged = new Set<string>();
  return (problems) => {
    const current = new Set<string>();
    for (const problem of problems) {
      const key = `${problem.severity}\0${problem.path}\0${problem.message}`;
      current.add(key);
      if (logged.has(key)) continue;
      const line = `${problem.path}: ${problem.message}`;
      if (problem.severity === 'error') logger.error({ path: problem.path }, line);
      else logger.warn({ path: problem.path }, line);
    }
    logged = current;
  };
}
