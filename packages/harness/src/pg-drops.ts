import type pg from 'pg';
import { CHILD_APPLICATION_NAME } from './harness-topology.js';

/**
 * Drops every Postgres connection of the harness's children, the way a
 * failover or an administrator would: the sink's transaction in flight, the
 * write-behind checkpoint, coverage reads. Returns how many were dropped.
 */
export async function dropChildConnections(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ dropped: boolean }>(
    `select pg_terminate_backend(pid) as dropped from pg_stat_activity
      where application_name = $1 and pid <> pg_backend_pid()`,
    [CHILD_APPLICATION_NAME],
  );
  return rows.filter((r) => r.dropped).length;
}
