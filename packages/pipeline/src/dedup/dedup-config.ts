import { z } from 'zod';

/**
 * What a stream's data contract asserts, which is what makes content dedup
 * safe on it: a natural key (two records with the same values of these
 * fields are the same logical record) or a uniqueness guarantee (no two
 * distinct records have byte-identical payloads).
 */
export type DedupDeclaration =
  { readonly naturalKey: readonly string[] } | { readonly unique: true };

/**
 * Opt-in content dedup of one source stream (topic), under the pipeline's
 * `dedup` keyed by the topic (ADR 0036). The declaration lives here, in the
 * pipeline config per source stream, because dedup acts once per stream
 * before the fan-out to the secondaries, and the pipeline's other contract
 * (the dq checks of `checked()`) belongs to one secondary's derivation.
 */
export interface DedupConfigInput {
  /**
   * What is hashed: the declared fields of the JSON value (in this order), or
   * the whole payload. With a natural key, the fields must include all of it
   * (the natural key plus an event time is the configuration to prefer).
   */
  key: { fields: string[] } | 'payload';
  /**
   * How long a content hash is remembered, in ms: the expected upstream retry
   * interval (seconds to minutes), not longer; memory is rate times window.
   */
  windowMs: number;
  /** The seen-set's size bound; past it the oldest hashes are evicted (a missed dedup). */
  maxEntries: number;
  /** The contract's assertion; without one dedup is refused on the stream. */
  declared?: z.input<typeof dedupConfigSchema>['declared'];
  /**
   * How long one bulk lookup or write may take before the batch goes on
   * with dedup off, in ms.
   * @defaultValue 2000
   */
  timeoutMs?: number | undefined;
}

const field = z.string().min(1, { error: 'must be a non-empty field name' });

const declarationSchema = z.union([
  z.strictObject({ naturalKey: z.array(field).min(1) }),
  z.strictObject({ unique: z.literal(true) }),
]);

/**
 * Refused without a declaration, with the reason: two distinct events can
 * have identical payloads (two heartbeats, two clicks without a timestamp),
 * and dropping the second is loss caused by dedup that reports success.
 */
export const dedupConfigSchema = z
  .strictObject({
    key: z.union([
      z.literal('payload'),
      z.strictObject({ fields: z.array(field).min(1, { error: 'must name at least one field' }) }),
    ]),
    windowMs: z.number().int().min(1).max(86_400_000),
    maxEntries: z.number().int().min(1),
    declared: declarationSchema.optional(),
    timeoutMs: z.number().int().min(1).default(2000),
  })
  .superRefine((c, ctx) => {
    if (c.declared === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['declared'],
        message:
          "is missing: content dedup needs the stream's contract to declare a natural key " +
          '({ naturalKey: [...] }) or a uniqueness guarantee ({ unique: true }); two distinct ' +
          'events can have identical payloads, and dropping the second is loss caused by dedup',
      });
      return;
    }
    if ('unique' in c.declared) {
      if (c.key !== 'payload') {
        ctx.addIssue({
          code: 'custom',
          path: ['key'],
          message:
            "must be 'payload' on a stream declared unique: uniqueness is of the whole payload, " +
            'so a subset of its fields can repeat between distinct records',
        });
      }
      return;
    }
    if (c.key === 'payload') return; // the payload holds the natural key
    const hashed = new Set(c.key.fields);
    const missing = c.declared.naturalKey.filter((f) => !hashed.has(f));
    if (missing.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['key', 'fields'],
        message:
          `must include every field of the declared natural key (missing ${missing.join(', ')}): ` +
          'records differing only there are distinct, and hashing without it would drop one',
      });
    }
  });

export type DedupConfig = z.output<typeof dedupConfigSchema>;
