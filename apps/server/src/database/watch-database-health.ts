import type { Logger } from '@molf/logging';
import { describeDatabaseError } from './describe-database-error.ts';
import type { Database } from './open-database.ts';

/** What `/healthz` says of the database link. */
export type DatabaseHealth = {
  /** Whether the last look reached the database. */
  reachable: boolean;
  /** `user@host:port/database`. */
  name: string;
  /** Since when it has been reachable, or not (ISO 8601). */
  since: string;
  /** Why it is not reachable. */
  error?: string;
};

export type DatabaseHealthWatch = {
  current(): DatabaseHealth;
  close(): void;
};

/** How often the link is looked at, and how long a look may take. */
const LOOK_EVERY_MS = 2_000;
const LOOK_TIMEOUT_MS = 2_000;

/**
 * Looks at the database link every 2 s (one `select 1`, given up after 2 s): what `/healthz` reports
 * and `/readyz` answers by. A change is logged once each way: losing the database is an error (the
 * instance takes no new work until it is back), getting it back is news.
 */
export function watchDatabaseHealth(options: { database: Database; logger: Logger }): DatabaseHealthWatch {
  const { database, logger } = options;
  let state: DatabaseHealth = { reachable: true, name: database.name, since: new Date().toISOString() };
  let looking = false;

  async function look(): Promise<void> {
    if (looking) return;
    looking = true;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        database.sql`select 1`,
        new Promise((_resolve, reject) => {
          timer = setTimeout(
            () => reject(Object.assign(new Error('no answer within 2 s'), { code: 'ETIMEDOUT' })),
            LOOK_TIMEOUT_MS,
          );
        }),
      ]);
      if (!state.reachable) {
        logger.info({ database: database.name }, 'the database is reachable again: this instance takes work again');
        state = { reachable: true, name: database.name, since: new Date().toISOString() };
      }
    } catch (error) {
      const reason = describeDatabaseError(error);
      if (state.reachable) {
        logger.error(
          { database: database.name, reason },
          'the database cannot be reached: this instance takes no new work until it is back (/readyz answers 503)',
        );
        state = { reachable: false, name: database.name, since: new Date().toISOString(), error: reason };
      } else {
        state = { ...state, error: reason };
      }
    } finally {
      clearTimeout(timer);
      looking = false;
    }
  }

  const interval = setInterval(() => void look(), LOOK_EVERY_MS);
  interval.unref();
  return {
    current: () => state,
    close: () => clearInterval(interval),
  };
}
