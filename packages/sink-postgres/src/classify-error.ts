// The failure classifier is shared with the coverage and lease stores, so it
// lives beside them; the PostgreSQL sink uses the same one.
export {
  classifyPgError,
  isLostConnection,
  sqlStateOf,
  type PgFailure,
} from '@thalweg/offset-store/postgres';

/**
 * The bind parameter the server refused, from the context it reports
 * ("unnamed portal parameter $3 = '...'"), so the column can be named.
 */
export function refusedParameter(error: unknown): number | null {
  if (!(error instanceof Error)) return null;
  const where = (error as { where?: unknown }).where;
  if (typeof where !== 'string') return null;
  const m = /portal parameter \$(\d+)/.exec(where);
  return m?.[1] === undefined ? null : Number(m[1]);
}

/** The column a constraint violation names (23502 not_null_violation carries it). */
export function refusedColumn(error: unknown): string | null {
  if (!(error instanceof Error)) return null;
  const column = (error as { column?: unknown }).column;
  return typeof column === 'string' && column.length > 0 ? column : null;
}
