// The LevelDB-only install: @thalweg/offset-store and classic-level, nothing
// else. Compiled strict with skipLibCheck false, then run: a cursor saved on
// disk and read back after a reopen, and range arithmetic from the root.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  InMemoryCoverage,
  RangeSet,
  type CoverageStore,
  type CursorKey,
} from '@thalweg/offset-store';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';

const dir = await mkdtemp(join(tmpdir(), 'twg-leveldb-'));
try {
  const memory: CoverageStore = new InMemoryCoverage({ sinks: [] });
  await memory.close();
  const ranges = new RangeSet();
  ranges.add(0, 10);
  ranges.add(20, 30);
  ranges.add(10, 20);
  const key: CursorKey = { source: 'files', topic: 'in', partition: 0 };
  const store: CoverageStore = await LevelDbCoverage.open({ location: dir, sinks: [] });
  await store.saveCursor(key, { kind: 'log-offset', nextOffset: 42 });
  await store.close();
  const again = await LevelDbCoverage.open({ location: dir, sinks: [] });
  const cursor = await again.loadCursor(key);
  await again.close();
  const got = JSON.stringify({ ranges: ranges.ranges(), cursor });
  const want = JSON.stringify({
    ranges: [{ start: 0, end: 30 }],
    cursor: { kind: 'log-offset', nextOffset: 42 },
  });
  if (got !== want) throw new Error(`LevelDB-only consumer: got ${got}, want ${want}`);
  console.log(JSON.stringify({ consumer: 'leveldb', ...JSON.parse(got) }));
} finally {
  await rm(dir, { recursive: true, force: true });
}
