import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WriteBehindCoverage } from '@thalweg/offset-store';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { PostgresCoverage } from '@thalweg/offset-store/postgres';
import { cursorCommand } from '../src/commands/cursor-command.js';

/** The shared PostgreSQL (a missing service fails the test, never skips it). */
function postgresUrl(): string {
  const url = process.env['THALWEG_PG_URL'];
  if (url === undefined || url === '') throw new Error('THALWEG_PG_URL is not set: no PostgreSQL');
  return url;
}

const dirs: string[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const at = { source: 'kafka-assigned', topic: 'events', partition: 0 };

describe('thalweg cursor over a write-behind pair (LevelDB in front of PostgreSQL)', () => {
  it('rewinds both tiers, so neither a reopened pair nor a new owner sees the old cursor', async () => {
    const url = postgresUrl();
    const schema = `twg_cursor_${randomBytes(4).toString('hex')}`;
    const dir = await mkdtemp(join(tmpdir(), 'twg-cli-cursor-pg-'));
    dirs.push(dir);
    const leveldb = join(dir, 'coverage');
    const pair = async () =>
      new WriteBehindCoverage({
        local: await LevelDbCoverage.open({ location: leveldb, sinks: [] }),
        durable: await PostgresCoverage.open({ pool: url, schema, sinks: [] }),
        checkpointIntervalMs: 60_000,
      });
    const local = await LevelDbCoverage.open({ location: leveldb, sinks: [] });
    const tier = await PostgresCoverage.open({ pool: url, schema, sinks: [] });
    const first = new WriteBehindCoverage({ local, durable: tier, checkpointIntervalMs: 60_000 });
    await first.saveCursor(at, { kind: 'log-offset', nextOffset: 500 });
    await first.checkpoint();
    // Saved locally only: a crash would leave it for the next checkpoint to send.
    await first.saveCursor(at, { kind: 'log-offset', nextOffset: 900 });
    expect(await tier.loadCursor(at)).toEqual({ kind: 'log-offset', nextOffset: 500 });
    // close() would checkpoint; the pod stops without one instead.
    await local.close();
    await tier.close();

    const flags = ['--leveldb', leveldb, '--postgres', url, '--schema', schema];
    const key = ['--source', at.source, '--topic', at.topic, '--partition', '0'];
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out.push(String(chunk));
      return true;
    });
    expect(await cursorCommand(['rewind', ...flags, ...key, '--to', '200'])).toBe(0);
    expect(out.join('')).toContain('moved from 900 to 200');

    const again = await pair();
    expect(await again.loadCursor(at)).toEqual({ kind: 'log-offset', nextOffset: 200 });
    await again.close();
    const durable = await PostgresCoverage.open({ pool: url, schema, sinks: [] });
    expect(await durable.loadCursor(at)).toEqual({ kind: 'log-offset', nextOffset: 200 });
    await durable.close();
  });
});
