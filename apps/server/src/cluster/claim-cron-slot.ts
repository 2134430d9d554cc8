import type { Database } from '../database/index.ts';

/** Claims are kept this long, then deleted (a slot that old is never fired again). */
const KEEP_CLAIMS = '7 days';

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
}): Promise<boolean> {
  const { sql } = options.database;
  const rows = await sql`
    insert into cron_claims (job_id, slot, instance_id) values (${options.jobId}, ${options.slot}, ${options.instanceId})
    on conflict (job_id, slot) do update set instance_id = excluded.instance_id, claimed_at = now()
      where cron_claims.instance_id = excluded.instance_id
        or not exists (
          select 1 from instances i
          where i.instance_id = cron_claims.instance_id
            and i.seen_at > now() - ${`${options.deadAfterMs} milliseconds`}::interval
        )
    returning job_id`;
  if (Math.random() < 0.01) {
    await sql`delete from cron_claims where claimed_at < now() - ${KEEP_CLAIMS}::interval`;
  }
  return rows.length > 0;
}
