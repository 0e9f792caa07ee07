import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordIdHex } from '@thalweg/connector-core';
import { rawSegments } from '@thalweg/sink-files';
import { fakeZerobus, zerobus } from '@thalweg/sink-zerobus';
import { BatchSchema, column } from '@thalweg/stream-arrow';
import { tableFromIPC } from 'apache-arrow';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openTopology } from '../../src/index.js';
import { logsOf, MemoryStoreSource } from '../doubles/memory-sources.js';

// A Zerobus secondary whose rows are a declared JSON mapping, derived on a
// worker thread (ADR 0042), through a whole topology: live, with a stream
// that dies and a lane that sheds, then recovery replaying the gaps from raw
// through the same derivation.

const PARTITIONS = 2;
const PER_PARTITION = 300;
const schema = BatchSchema.define({
  fields: [
    { name: 'n', type: column.int64, nullable: false },
    { name: 'p', type: column.int32, nullable: false },
  ],
  recordId: 'hex',
});

describe('a topology with a Zerobus secondary derived on a worker thread', () => {
  it('delivers every record once live or by recovery, each row with the id raw gives its record', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'twg-threaded-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const logs = logsOf('t', PARTITIONS, PER_PARTITION);
    const source = new MemoryStoreSource(logs, 20);
    const transport = fakeZerobus({
      ackLatencyMs: 1,
      // The first stream dies at its second wait: what it had not confirmed is replayed
      // by its rebuild, and what the small lane shed meanwhile stays a gap.
      faults: (opened) => (opened === 0 ? [{ op: 'wait', nth: 2, failure: 'poison-stream' }] : []),
    });
    const lines: string[] = [];
    const open = (role: 'both' | 'recovery') =>
      openTopology({
        source: { role: 'source', open: () => source },
        raw: rawSegments({ dir: join(dir, 'raw'), coverageDir: join(dir, 'coverage') }),
        secondaries: {
          events: zerobus({
            table: 'main.app.events',
            schema,
            transport,
            json: {},
            streams: 1,
            rebuild: { baseDelayMs: 1 },
            lane: { maxQueuedBatches: 2 },
          }),
        },
        log: (line) => lines.push(line),
        config: { recovery: { role, windowRecords: 1000 } },
      });

    const live = await (await open('both')).run();
    expect(live.raw.durableRecords).toBe(PARTITIONS * PER_PARTITION);
    const recovery = await open('recovery');
    await recovery.run({ untilCaughtUp: true });
    expect(recovery.backlog().maxLagRecords).toBe(0);
    // The stream died once; recovery replayed exactly what the lane shed meanwhile.
    expect(live.sinks.events?.rebuilds).toBe(1);
    expect(recovery.stats().recovery?.recordsReplayed).toBe(live.secondaries[0]?.shedRecords);

    // Every record reached the table, under raw's id for it; a replay may repeat a row
    // (the table dedups on the id), none is missing and none is foreign.
    const want = new Set<string>();
    for (const { partition, records } of logs.values()) {
      for (const r of records) {
        want.add(
          recordIdHex({ cluster: 'memory', ...partition, offset: r.offset, payload: r.value }),
        );
      }
    }
    const got = new Set<string>();
    for (const ipc of transport.server.batches) {
      for (const id of tableFromIPC(ipc).getChild('_twg_record_id') ?? []) got.add(String(id));
    }
    expect(got).toEqual(want);
    // The derivation ran on its thread: nothing fell back to the calling thread.
    expect(lines.filter((l) => l.includes('running on the calling thread'))).toEqual([]);
  });
});
