import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { SourceCursor } from '@thalweg/connector-core';
import { WriteBehindCoverage, type CoverageStore, type CursorKey } from '@thalweg/offset-store';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { PostgresCoverage } from '@thalweg/offset-store/postgres';

export const CURSOR_USAGE = `thalweg cursor show   STORE --source NAME --topic T --partition P [--json]
  thalweg cursor rewind STORE --source NAME --topic T --partition P --to OFFSET
    STORE: --dir DIR | --leveldb PATH | --postgres URL [--schema S]
           | --leveldb PATH --postgres URL [--schema S]  (a write-behind pair)

  cursor show    the stored position of a store-managed source's partition.
  cursor rewind  (no pipeline running) moves that position back to OFFSET, the
                 first offset of a hole \`raw repair\` printed: the next run
                 re-reads from there, and raw and the secondaries drop the
                 records they already hold by record id. A rewind above the
                 stored position is refused. Builds log-offset cursors (Kafka
                 with manual assignment); a cursor of another kind is refused
                 by name: only the source can build it (from code,
                 store.rewindCursor(key, source.cursorAt(partition, OFFSET))
                 where the source can place OFFSET).
                 For a consumer group, reset its offsets with the Kafka tools.
                 --dir reads the demo's layout (DIR/coverage).`;

/** `thalweg cursor …`: read and move back the position of a store-managed source. */
export async function cursorCommand(rest: string[]): Promise<number> {
  const [sub, ...args] = rest;
  if (sub !== 'show' && sub !== 'rewind') {
    throw new Error(`cursor: unknown subcommand ${JSON.stringify(sub ?? '')} (show, rewind)`);
  }
  const { values } = parseArgs({
    args,
    options: {
      dir: { type: 'string' },
      leveldb: { type: 'string' },
      postgres: { type: 'string' },
      schema: { type: 'string' },
      source: { type: 'string' },
      topic: { type: 'string' },
      partition: { type: 'string' },
      to: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const key: CursorKey = {
    source: required(values.source, '--source'),
    topic: required(values.topic, '--topic'),
    partition: offsetArg(values.partition, '--partition'),
  };
  const to = sub === 'rewind' ? offsetArg(values.to, '--to') : null;
  const { store, name } = await openStore(values, sub === 'rewind');
  try {
    const stored = await store.loadCursor(key);
    const where = `${key.source} ${key.topic}/${key.partition}`;
    if (to === null) {
      process.stdout.write(
        values.json
          ? `${JSON.stringify({ key, cursor: stored })}\n`
          : `cursor ${where} (${name}): ${stored === null ? 'none stored' : JSON.stringify(stored)}\n`,
      );
      return 0;
    }
    if (stored === null) throw new Error(`cursor rewind: no cursor is stored for ${where}`);
    if (stored.kind !== 'log-offset') {
      throw new Error(
        `cursor rewind: the stored cursor of ${where} is a ${stored.kind} cursor; this command ` +
          `builds only log-offset cursors, and only the source can build a ${stored.kind} one: ` +
          `rewind it from code with rewindCursor(key, source.cursorAt(partition, ${to}))`,
      );
    }
    const cursor: SourceCursor = { kind: 'log-offset', nextOffset: to };
    await store.rewindCursor(key, cursor);
    process.stdout.write(
      `cursor rewind: ${where} (${name}) moved from ${stored.nextOffset} to ${to}; ` +
        `the next run re-reads from offset ${to}\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

interface StoreFlags {
  readonly dir?: string | undefined;
  readonly leveldb?: string | undefined;
  readonly postgres?: string | undefined;
  readonly schema?: string | undefined;
}

async function openStore(
  values: StoreFlags,
  rewinding: boolean,
): Promise<{ store: CoverageStore; name: string }> {
  if (values.dir !== undefined && values.leveldb !== undefined) {
    throw new Error('cursor: give --dir or --leveldb, not both');
  }
  const leveldb =
    values.leveldb ?? (values.dir === undefined ? undefined : join(values.dir, 'coverage'));
  const postgres = async (): Promise<PostgresCoverage> =>
    PostgresCoverage.open({
      pool: values.postgres ?? '',
      sinks: [],
      ...(values.schema === undefined ? {} : { schema: values.schema }),
    });
  if (leveldb === undefined) {
    if (values.postgres === undefined) {
      throw new Error('cursor: give one of --dir, --leveldb or --postgres');
    }
    return { store: await postgres(), name: 'PostgreSQL' };
  }
  // Cursors are not kept per sink: the store needs to know none.
  const local = await LevelDbCoverage.open({ location: leveldb, sinks: [] });
  if (values.postgres === undefined) {
    if (rewinding && (await local.diagnostics()).lastWrittenAs === 'local') {
      await local.close();
      throw new Error(
        `cursor rewind: ${leveldb} served as the local tier of a write-behind store, whose ` +
          'durable tier holds the cursor too: give its --postgres URL as well, to rewind both',
      );
    }
    return { store: local, name: `LevelDB ${leveldb}` };
  }
  let durable: PostgresCoverage;
  try {
    durable = await postgres();
  } catch (e) {
    await local.close();
    throw e;
  }
  const store = new WriteBehindCoverage({ local, durable, checkpointIntervalMs: 60_000 });
  return { store, name: `LevelDB ${leveldb} in front of PostgreSQL` };
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new Error(`cursor: ${flag} is required`);
  return value;
}

function offsetArg(value: string | undefined, flag: string): number {
  const text = required(value, flag);
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) {
    throw new Error(`cursor: ${flag} ${JSON.stringify(text)} is not a non-negative integer`);
  }
  return n;
}
