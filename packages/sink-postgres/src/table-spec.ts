import { RECORD_ID_COLUMN } from '@thalweg/connector-core';
import { z } from 'zod';

/** The column types the sink writes; each is sent as text or bytes and cast by the server. */
export const PG_COLUMN_TYPES = [
  'text',
  'bigint',
  'integer',
  'double precision',
  'boolean',
  'jsonb',
  'bytea',
  'timestamptz',
] as const;

export type PgColumnType = (typeof PG_COLUMN_TYPES)[number];

export interface PgColumnSpec {
  readonly name: string;
  readonly type: PgColumnType;
  readonly nullable: boolean;
}

/**
 * The table a sink writes. `_twg_record_id bytea PRIMARY KEY` is added by
 * the sink and must not be listed: it is what makes every write idempotent.
 */
export interface PgTableSpec {
  /** Defaults to `public`. */
  readonly schema?: string;
  readonly name: string;
  /** In the order of `PgRow.values`. */
  readonly columns: readonly PgColumnSpec[];
}

/** How format_type() spells each type, for comparing with an existing table. */
export const CATALOG_SPELLING: Record<PgColumnType, string> = {
  text: 'text',
  bigint: 'bigint',
  integer: 'integer',
  'double precision': 'double precision',
  boolean: 'boolean',
  jsonb: 'jsonb',
  bytea: 'bytea',
  timestamptz: 'timestamp with time zone',
};

/** A quoted identifier: any name is safe once quoted and its quotes doubled. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The quoted, schema-qualified name of the table. */
export function qualifiedName(spec: PgTableSpec): string {
  return `${quoteIdent(spec.schema ?? 'public')}.${quoteIdent(spec.name)}`;
}

const MAX_IDENT_BYTES = 63;

const identifier = z
  .string()
  .refine(
    (v) => v.length > 0 && !v.includes('\u0000') && Buffer.byteLength(v, 'utf8') <= MAX_IDENT_BYTES,
    `must be a non-empty identifier of at most ${MAX_IDENT_BYTES} UTF-8 bytes without NUL`,
  );

/**
 * Refuses a spec PostgreSQL would not store as written: an identifier over
 * 63 bytes is silently truncated by the server (two columns could become
 * one), NUL cannot be stored, and a duplicate or reserved column is ambiguous.
 */
export const pgTableSpecSchema = z.strictObject({
  schema: identifier.optional(),
  name: identifier,
  columns: z
    .array(
      z.strictObject({
        name: identifier.refine(
          (v) => v !== RECORD_ID_COLUMN,
          `${RECORD_ID_COLUMN} is added by the sink; do not list it`,
        ),
        type: z.enum(PG_COLUMN_TYPES, { error: `must be one of ${PG_COLUMN_TYPES.join(', ')}` }),
        nullable: z.boolean({ error: 'must be true or false' }),
      }),
    )
    .min(1, 'must be a non-empty array')
    .superRefine((columns, ctx) => {
      const seen = new Set<string>();
      columns.forEach((c, i) => {
        if (seen.has(c.name)) {
          ctx.addIssue({
            code: 'custom',
            path: [i, 'name'],
            message: `duplicate column "${c.name}"`,
          });
        }
        seen.add(c.name);
      });
    }),
});
