import { ColumnsWriter, offsetSpan, type SourceRecord } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import type { FetchedColumns } from '../src/consumer-port.js';
import { toSourceBatch } from '../src/to-source-batch.js';
import {
  fetchedBatch,
  type WireBatch,
  type WirePartition,
  type WireRecord,
} from '../src/platformatic-records.js';

const TRANSACTIONAL = 0x10;
const CONTROL = 0x20;
const LOG_APPEND_TIME = 0x08;

function record(offsetDelta: number, value: string, timestampDelta = 0n): WireRecord {
  return {
    offsetDelta,
    timestampDelta,
    key: null,
    value: Buffer.from(value),
    headers: [[Buffer.from('h'), Buffer.from(value)]],
  };
}

function batch(
  firstOffset: number,
  values: readonly string[],
  extra: Partial<Omit<WireBatch, 'records'>> = {},
): WireBatch {
  return {
    firstOffset: BigInt(firstOffset),
    lastOffsetDelta: values.length - 1,
    attributes: 0,
    firstTimestamp: 1_700_000_000_000n,
    maxTimestamp: 1_700_000_000_999n,
    producerId: -1n,
    records: values.map((v, i) => record(i, v, BigInt(i))),
    ...extra,
  };
}

/** A transaction marker: one control record whose key says abort (0) or commit (1). */
function marker(offset: number, producerId: bigint, type: 0 | 1): WireBatch {
  const key = Buffer.alloc(4);
  key.writeInt16BE(type, 2);
  return {
    ...batch(offset, ['']),
    attributes: TRANSACTIONAL | CONTROL,
    producerId,
    records: [{ ...record(0, ''), key, headers: [] }],
  };
}

function part(
  records: readonly WireBatch[],
  aborted: WirePartition['abortedTransactions'] = null,
): WirePartition {
  return {
    partitionIndex: 3,
    errorCode: 0,
    highWatermark: 100n,
    logStartOffset: 0n,
    abortedTransactions: aborted,
    records,
  };
}

/** The records a batch writes from its first offset on, as the source reads them. */
function recordsOf(b: FetchedColumns | null): readonly SourceRecord[] {
  if (b === null) return [];
  const start = Number(b.firstOffset);
  const writer = new ColumnsWriter();
  b.write(writer, start);
  return writer.finish(offsetSpan(b.topic, b.partition, start, Number(b.lastOffset) + 1)).records;
}

const values = (b: FetchedColumns | null) =>
  recordsOf(b).map((r) => Buffer.from(r.value).toString());

describe('fetchedBatch (a @platformatic/kafka fetch as the port batch)', () => {
  it('starts at the fetch position, dropping the records of a record batch before it', () => {
    const b = fetchedBatch('t', 12n, part([batch(10, ['a', 'b', 'c', 'd']), batch(14, ['e'])]));
    expect(b).toMatchObject({
      topic: 't',
      partition: 3,
      firstOffset: '12',
      lastOffset: '14',
      highWatermark: '100',
    });
    expect(b?.count).toBe(5);
    const records = recordsOf(b);
    expect(records.map((r) => r.offset)).toEqual([12, 13, 14]);
    expect(values(b)).toEqual(['c', 'd', 'e']);
    expect(records[0]?.timestamp).toBe(1_700_000_000_002);
    expect(records[0]?.headers.map(([n, v]) => [n, Buffer.from(v ?? []).toString()])).toEqual([
      ['h', 'c'],
    ]);
  });

  it('is null when nothing at or after the position came back', () => {
    expect(fetchedBatch('t', 5n, part([]))).toBeNull();
    expect(fetchedBatch('t', 14n, part([batch(10, ['a', 'b', 'c', 'd'])]))).toBeNull();
  });

  it('takes the batch append time when the topic stamps records on append', () => {
    const b = fetchedBatch('t', 0n, part([batch(0, ['a', 'b'], { attributes: LOG_APPEND_TIME })]));
    expect(recordsOf(b).map((r) => r.timestamp)).toEqual([1_700_000_000_999, 1_700_000_000_999]);
  });

  it('drops an aborted transaction and its marker, and ends after them', () => {
    const b = fetchedBatch(
      't',
      0n,
      part(
        [
          batch(0, ['x1', 'x2'], { attributes: TRANSACTIONAL, producerId: 7n }),
          marker(2, 7n, 0),
          batch(3, ['ok']),
        ],
        [{ producerId: 7n, firstOffset: 0n }],
      ),
    );
    expect(values(b)).toEqual(['ok']);
    expect(b?.lastOffset).toBe('3');
  });

  it('drops an aborted transaction whose marker lies past the response (the client keeps it)', () => {
    const b = fetchedBatch(
      't',
      0n,
      part(
        [
          batch(0, ['kept']),
          batch(1, ['x1', 'x2'], { attributes: TRANSACTIONAL, producerId: 7n }),
          batch(3, ['x3'], { attributes: TRANSACTIONAL, producerId: 7n }),
        ],
        [{ producerId: 7n, firstOffset: 1n }],
      ),
    );
    expect(values(b)).toEqual(['kept']);
    // The next fetch starts after the aborted batches, not on them again.
    expect(b?.lastOffset).toBe('3');
  });

  it('keeps a committed transaction and the batches of other producers', () => {
    const b = fetchedBatch(
      't',
      0n,
      part(
        [
          batch(0, ['c1'], { attributes: TRANSACTIONAL, producerId: 8n }),
          batch(1, ['other'], { attributes: TRANSACTIONAL, producerId: 9n }),
          marker(2, 8n, 1),
          // Producer 7's aborted transaction starts after producer 8's.
          batch(3, ['x'], { attributes: TRANSACTIONAL, producerId: 7n }),
          marker(4, 7n, 0),
          batch(5, ['again'], { attributes: TRANSACTIONAL, producerId: 7n }),
        ],
        [{ producerId: 7n, firstOffset: 3n }],
      ),
    );
    expect(values(b)).toEqual(['c1', 'other', 'again']);
    expect(b?.lastOffset).toBe('5');
  });

  it('reports a fetch of only markers as an empty batch over their offsets', () => {
    const b = fetchedBatch('t', 4n, part([marker(4, 8n, 1)]));
    expect(b).toMatchObject({ firstOffset: '4', lastOffset: '4', count: 0 });
    expect(recordsOf(b)).toEqual([]);
  });

  it('says offsets beyond 2^53 exactly, for the source to refuse by name', () => {
    const first = 2n ** 53n + 10n;
    const b = fetchedBatch('t', first, part([{ ...batch(0, ['a', 'b']), firstOffset: first }]));
    expect(b).toMatchObject({ firstOffset: '9007199254741002', lastOffset: '9007199254741003' });
    expect(() => toSourceBatch(b as FetchedColumns, undefined)).toThrow(
      expect.objectContaining({ code: 'TWG_KAFKA_OFFSET_UNSAFE' }),
    );
  });

  it('writes only the records at or after the start it is given, and counts the others', () => {
    const b = fetchedBatch('t', 10n, part([batch(10, ['a', 'b', 'c'])]));
    const converted = toSourceBatch(b as FetchedColumns, 12);
    expect(converted?.skipped).toBe(2);
    expect(converted?.batch.span).toMatchObject({ start: 12, end: 13 });
    expect(converted?.batch.records.map((r) => Buffer.from(r.value).toString())).toEqual(['c']);
  });

  it('refuses a timestamp beyond 2^53 ms by offset, and leaves the writer ready', () => {
    const b = fetchedBatch('t', 0n, part([batch(0, ['a'], { firstTimestamp: 2n ** 60n })]));
    const writer = new ColumnsWriter();
    expect(() => toSourceBatch(b as FetchedColumns, undefined, writer)).toThrow(
      /t\/3 offset 0: timestamp .* is not an integer below 2\^53 ms/,
    );
    const again = fetchedBatch('t', 0n, part([batch(0, ['ok'])]));
    expect(toSourceBatch(again as FetchedColumns, undefined, writer)?.batch.records).toHaveLength(
      1,
    );
  });

  it('keeps a null key and marks a null value as a tombstone', () => {
    const tomb = { ...batch(0, ['x']), records: [{ ...record(0, 'x'), value: null, headers: [] }] };
    const [r] = recordsOf(fetchedBatch('t', 0n, part([tomb])));
    expect(r).toMatchObject({ offset: 0, key: null, tombstone: true });
    expect(r?.value.byteLength).toBe(0);
  });
});
