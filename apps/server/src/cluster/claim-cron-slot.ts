import type { CronFireResult } from '../cron/index.ts';
import type { Database } from '../database/index.ts';

/** Claims are kept this long, then deleted (a slot that old is never fired again). */
const KEEP_CLAIMS = '7 days';

/** A claim's answer: taken or not; if taken over from a claimer that fired the run, how it fired (JSON). */
export type CronSlotClaim = { claimed: false } | { claimed: true; fired: string | undefined };

/**
 * Claims one scheduled run of a cron job (its job and slot) for this instance: true for exactly one
 * instance however many fire it at once, so a run fires once across the servers on the database.
 * The same instance may claim again (a retry of its failed run); another may take the slot only
 * from an instance not seen for `deadAfterMs` (it died before recording the run).
 */
export async function claimCronSlot(options: {
  database: Database;
  instanceId: string;
  jobId: string;
  slot: string;
  deadAfterMs: number;
}): Promise<CronSlotClaim> {
  const { sql } = options.database;
  const rows = await sql<{ fired: string | null }[]>`
    insert into cron_claims (job_id, slot, instance_id) values (${options.jobId}, ${options.slot}, ${options.instanceId})
    on conflict (job_id, slot) do update set instance_id = excluded.instance_id, claimed_at = now()
      where cron_claims.instance_id = excluded.instance_id
        or not exists (
          select 1 from instances i
          where i.instance_id = cron_claims.instance_id
            and i.seen_at > now() - ${`${options.deadAfterMs} milliseconds`}::interval
        )
    returning fired`;
  if (Math.random() < 0.01) {
    await sql`delete from cron_claims where claimed_at < now() - ${KEEP_CLAIMS}::interval`;
  }
  const [row] = rows;
  return row === undefined ? { claimed: false } : { claimed: true, fired: row.fired ?? undefined };
}

/** Stores how this instance's claimed run fired (its prompt is stored), for an instance that takes the slot over. */
export async function recordCronSlotFired(options: {
  database: Database;
  instanceId: string;
  jobId: string;
  slot: string;
  fired: string;
}): Promise<void> {
  await options.database.sql`
    update cron_claims set fired = ${options.fired}
    where job_id = ${options.jobId} and slot = ${options.slot} and instance_id = ${options.instanceId}`;
}

/** The cron scheduler's `claimSlot` and `slotFired` for one instance on the database. */
export function cronSlotClaims(options: { database: Database; instanceId: string; deadAfterMs: number }) {
  const { database, instanceId, deadAfterMs } = options;
  return {
    async claimSlot(jobId: string, slot: string): Promise<{ claimed: boolean; fired?: CronFireResult }> {
      const claim = await claimCronSlot({ database, instanceId, jobId, slot, deadAfterMs });
      if (!claim.claimed) return { claimed: false };
      return claim.fired === undefined ? { claimed: true } : { claimed: true, fired: JSON.parse(claim.fired) };
    },
    slotFired(jobId: string, slot: string, fired: CronFireResult): Promise<void> {
      return recordCronSlotFired({ database, instanceId, jobId, slot, fired: JSON.stringify(fired) });
    },
  };
}
