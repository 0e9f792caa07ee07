import type { ConfirmTarget, SourceBatch } from '@thalweg/connector-core';
import {
  CONTRACT_TOPIC,
  contractRecordId,
  describeSinkContract,
  type HeldRecord,
  type SinkSubject,
} from '@thalweg/contracts';
import { MemoryRawSink, MemorySecondary, type MemoryRow } from '../doubles/memory-sinks.js';

// The pipeline's correctness tests trust these doubles to behave as the real
// sinks do; the contract is what holds them to it.

const text = new TextDecoder();

function rawSubject(
  target: ConfirmTarget<'primary-raw'>,
  stored?: Map<string, Map<number, Uint8Array>>,
): SinkSubject<'primary-raw', SourceBatch> {
  const sink = new MemoryRawSink(target, [], 'raw', stored);
  return {
    sink,
    batch: (records, span) => ({
      span,
      records: records.map((r) => ({
        offset: r.offset,
        key: null,
        value: r.bytes,
        timestamp: 0,
        headers: [],
      })),
    }),
    held: async () => {
      const out: HeldRecord[] = [];
      for (const { partition, spans } of await sink.held()) {
        for (const span of spans) {
          for await (const batch of sink.read(span)) {
            for (const r of batch.records) {
              out.push({
                idHex: contractRecordId(partition, r.offset, r.value),
                value: text.decode(r.value),
              });
            }
          }
        }
      }
      return out;
    },
    reopen: async (next) => rawSubject(next, sink.stored),
  };
}

function secondarySubject(
  target: ConfirmTarget<'secondary'>,
  rows?: Map<string, MemoryRow>,
): SinkSubject<'secondary', MemoryRow[]> {
  const sink = new MemorySecondary(target, 'secondary', { kind: 'server-ack' }, [], rows);
  return {
    sink,
    batch: (records) => records.map((r) => ({ offset: r.offset, text: r.value })),
    held: async () =>
      [...sink.rows].map(([key, row]) => {
        const partition = Number(key.split(':')[0]);
        const at = { topic: CONTRACT_TOPIC, partition };
        return {
          idHex: contractRecordId(at, row.offset, new TextEncoder().encode(row.text)),
          value: row.text,
        };
      }),
    reopen: async (next) => secondarySubject(next, sink.rows),
  };
}

describeSinkContract('MemoryRawSink (pipeline double)', {
  lane: 'primary-raw',
  replay: 'deduplicated',
  restarts: true,
  open: async (target) => rawSubject(target),
});

describeSinkContract('MemorySecondary (pipeline double)', {
  lane: 'secondary',
  replay: 'deduplicated',
  restarts: true,
  open: async (target) => secondarySubject(target),
});
