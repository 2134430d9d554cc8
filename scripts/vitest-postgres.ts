/**
 * Vitest global setup: one throw-away PostgreSQL cluster for the whole run, on a loopback port,
 * removed at the end (tests that need a database each create their own in it; see
 * apps/server/src/testing/test-database.ts). Where PostgreSQL cannot start, its tests are skipped
 * with the reason — except in CI, which installs it (.ci/run) and must not skip them silently.
 */
import { type PostgresCluster, startPostgresCluster } from '@molf/testkit';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The cluster's superuser URL, or why there is none. */
    postgres: { url: string } | { unavailable: string };
  }
}

export default async function setup(project: TestProject) {
  let cluster: PostgresCluster | undefined;
  try {
    cluster = await startPostgresCluster();
    project.provide('postgres', { url: cluster.url });
  } catch (error) {
    const reason = `PostgreSQL cannot start here: ${(error as Error).message}`;
    if (process.env.CI === 'true') throw new Error(reason);
    project.provide('postgres', { unavailable: reason });
  }
  return async () => {
    await cluster?.close();
  };
}
