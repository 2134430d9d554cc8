import type { Logger } from '@molf/logging';
import type { CatalogProblem } from '@molf/protocol';

/**
 * Returns a function that logs the problems of each snapshot that the previous one did not have
 * (a warning as a warning, an error as an error, with the file), so a broken file is logged when it
 * breaks, not again at every rescan.
 */
export function createCatalogProblemLog(logger: Logger): (problems: readonly CatalogProblem[]) => void {
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
