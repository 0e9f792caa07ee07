import type { SinkId, SourceCursor } from '@thalweg/connector-core';
import type { CoverageDelta, CursorKey } from '../coverage-store.js';
import { CoverageError } from '../errors.js';
import { readU64, writeU64 } from './leveldb-keys.js';

/**
 * An entry of the local tier's not-yet-checkpointed log: coverage ranges or a
 * cursor recorded locally that the durable tier does not have yet.
 *
 * Coverage entries are binary, because they are written on every merge:
 *   0x01 | u16 len | sink | u16 len | topic | u32 partition | u32 n | n × (u64 start, u64 end)
 * Cursor entries are rare and stay readable:
 *   0x02 | JSON { key, cursor }
 */
export type LogEntry =
  | { readonly t: 'cov'; readonly delta: CoverageDelta }
  | { readonly t: 'cur'; readonly key: CursorKey; readonly cursor: SourceCursor };

const COVERAGE = 0x01;
const CURSOR = 0x02;

export function encodeCoverageEntry(delta: CoverageDelta): Buffer {
  const sink = Buffer.from(delta.key.sink, 'utf8');
  const topic = Buffer.from(delta.key.topic, 'utf8');
  const b = Buffer.alloc(1 + 2 + sink.length + 2 + topic.length + 4 + 4 + 16 * delta.ranges.length);
  let at = b.writeUInt8(COVERAGE, 0);
  at = b.writeUInt16BE(sink.length, at);
  at += sink.copy(b, at);
  at = b.writeUInt16BE(topic.length, at);
  at += topic.copy(b, at);
  at = b.writeUInt32BE(delta.key.partition, at);
  at = b.writeUInt32BE(delta.ranges.length, at);
  for (const r of delta.ranges) {
    at = writeU64(b, at, r.start);
    at = writeU64(b, at, r.end);
  }
  return b;
}

export function encodeCursorEntry(key: CursorKey, cursor: SourceCursor): Buffer {
  return Buffer.concat([
    Buffer.from([CURSOR]),
    Buffer.from(JSON.stringify({ key, cursor }), 'utf8'),
  ]);
}

/** Whether a log entry is a cursor of `key` (which a rewind of it must drop). */
export function isCursorEntryOf(value: Buffer, seq: number, key: CursorKey): boolean {
  if (value.readUInt8(0) !== CURSOR) return false;
  const entry = decodeLogEntry(value, seq);
  return (
    entry.t === 'cur' &&
    entry.key.source === key.source &&
    entry.key.topic === key.topic &&
    entry.key.partition === key.partition
  );
}

export function decodeLogEntry(value: Buffer, seq: number): LogEntry {
  try {
    if (value.readUInt8(0) === CURSOR) {
      const { key, cursor } = JSON.parse(value.toString('utf8', 1)) as {
        key: CursorKey;
        cursor: SourceCursor;
      };
      return { t: 'cur', key, cursor };
    }
    if (value.readUInt8(0) !== COVERAGE)
      throw new Error(`unknown entry type ${value.readUInt8(0)}`);
    let at = 1;
    const sinkLen = value.readUInt16BE(at);
    const sink = value.toString('utf8', at + 2, at + 2 + sinkLen);
    at += 2 + sinkLen;
    const topicLen = value.readUInt16BE(at);
    const topic = value.toString('utf8', at + 2, at + 2 + topicLen);
    at += 2 + topicLen;
    const partition = value.readUInt32BE(at);
    const n = value.readUInt32BE(at + 4);
    at += 8;
    if (value.length !== at + 16 * n)
      throw new Error(`length ${value.length} does not hold ${n} ranges`);
    const ranges = Array.from({ length: n }, (_, i) => ({
      start: readU64(value, at + 16 * i),
      end: readU64(value, at + 16 * i + 8),
    }));
    return { t: 'cov', delta: { key: { sink: sink as SinkId, topic, partition }, ranges } };
  } catch (cause) {
    throw new CoverageError(
      'TWG_COVERAGE_CORRUPT',
      `local log entry ${seq} cannot be decoded`,
      cause,
    );
  }
}
