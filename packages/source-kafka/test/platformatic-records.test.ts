import { gunzipSync, gzipSync } from 'node:zlib';
import { ColumnsWriter, offsetSpan, type SourceRecord } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import type { FetchedColumns } from '../src/consumer-port.js';
import { BatchChecksumMismatch } from '../src/kafka-record-batches.js';
import { toSourceBatch } from '../src/to-source-batch.js';
import { fetchedBatch, type WirePartition } from '../src/platformatic-records.js';
import { recordBatchBytes, sealed, type TestBatch, type TestRecord } from './record-batch-bytes.js';

const GZIP = 0x01;
const LOG_APPEND_TIME = 0x08;
const TRANSACTIONAL = 0x10;
const CONTROL = 0x20;

function record(offsetDelta: number, value: string, timestampDelta = 0): TestRecord {
  return {
    offsetDelta,
    timestampDelta,
    value: Buffer.from(value),
    headers: [['h', Buffer.from(value)]],
  };
}

function batch(
  firstOffset: number,
  values: readonly string[],
  extra: Partial<TestBatch> = {},
): TestBatch {
  return {
    firstOffset: BigInt(firstOffset),
    records: values.map((v, i) => record(i, v, i)),
    ...extra,
  };
}

/** A transaction marker: one control record whose key says abort (0) or commit (1). */
function marker(offset: number, producerId: bigint, type: 0 | 1): TestBatch {
  const key = Buffer.alloc(4);
  key.writeInt16BE(type, 2);
  return {
    firstOffset: BigInt(offset),
    attributes: TRANSACTIONAL | CONTROL,
    producerId,
    records: [{ offsetDelta: 0, key, value: Buffer.alloc(6) }],
  };
}

/** A partition of a response, counting in `releases` each time its bytes are given back. */
function part(
  batches: readonly TestBatch[],
  aborted: WirePartition['abortedTransactions'] = null,
  cut = 0,
  releases = { count: 0 },
): WirePartition {
  const bytes = Buffer.concat(batches.map(recordBatchBytes));
  return {
    partitionIndex: 3,
    errorCode: 0,
    highWatermark: 100n,
    abortedTransactions: aborted,
    records: bytes.byteLength === 0 ? null : bytes.subarray(0, bytes.byteLength - cut),
    release: () => {
      releases.count += 1;
    },
  };
}

const decompress = (codec: number, bytes: Buffer): Buffer => {
  if (codec !== GZIP) throw new Error(`codec ${codec} in a test`);
  return gunzipSync(bytes);
};

const fetched = (topic: string, position: bigint, p: WirePartition) =>
  fetchedBatch(topic, position, p, decompress);

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

describe('fetchedBatch (a fetch response read from its bytes into columns)', () => {
  it('starts at the fetch position, dropping the records of a record batch before it', () => {
    const b = fetched('t', 12n, part([batch(10, ['a', 'b', 'c', 'd']), batch(14, ['e'])]));
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
    expect(records.map((r) => Buffer.from(r.value).toString())).toEqual(['c', 'd', 'e']);
    expect(records[0]?.timestamp).toBe(1_700_000_000_002);
    expect(records[0]?.headers.map(([n, v]) => [n, Buffer.from(v ?? []).toString()])).toEqual([
      ['h', 'c'],
    ]);
  });

  it('is null when nothing at or after the position came back, and gives the bytes back', () => {
    const releases = { count: 0 };
    expect(fetched('t', 5n, part([], null, 0, releases))).toBeNull();
    expect(
      fetched('t', 14n, part([batch(10, ['a', 'b', 'c', 'd'])], null, 0, releases)),
    ).toBeNull();
    expect(releases.count).toBe(2);
  });

  it('gives the bytes back once written, and refuses a second write that would read them', () => {
    const releases = { count: 0 };
    const b = fetched('t', 0n, part([batch(0, ['a', 'b'])], null, 0, releases));
    expect(releases.count).toBe(0);
    expect(values(b)).toEqual(['a', 'b']);
    expect(releases.count).toBe(1);
    expect(() => b?.write(new ColumnsWriter(), 0)).toThrow(
      't/3: a fetched batch was written twice',
    );
    expect(releases.count).toBe(1);
  });

  it('gives the bytes back at once when only markers and aborted batches came back', () => {
    const releases = { count: 0 };
    const b = fetched('t', 0n, part([marker(0, 7n, 0)], null, 0, releases));
    expect(b?.count).toBe(0);
    expect(releases.count).toBe(1);
  });

  it('gives the bytes back when writing them fails', () => {
    const releases = { count: 0 };
    const b = fetched('t', 0n, part([batch(0, ['a'])], null, 0, releases));
    const writer = new ColumnsWriter();
    expect(() =>
      b?.write(
        new Proxy(writer, {
          get: (target, key) => {
            if (key === 'begin')
              return () => {
                throw new Error('injected');
              };
            return Reflect.get(target, key, target) as unknown;
          },
        }),
        0,
      ),
    ).toThrow('injected');
    expect(releases.count).toBe(1);
  });

  it('takes the batch append time when the topic stamps records on append', () => {
    const b = fetched('t', 0n, part([batch(0, ['a', 'b'], { attributes: LOG_APPEND_TIME })]));
    expect(recordsOf(b).map((r) => r.timestamp)).toEqual([1_700_000_000_999, 1_700_000_000_999]);
  });

  it('drops an aborted transaction and its marker, and ends after them', () => {
    const b = fetched(
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
    const b = fetched(
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
    const b = fetched(
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
    const b = fetched('t', 4n, part([marker(4, 8n, 1)]));
    expect(b).toMatchObject({ firstOffset: '4', lastOffset: '4', count: 0 });
    expect(recordsOf(b)).toEqual([]);
  });

  it('says offsets beyond 2^53 exactly, for the source to refuse by name', () => {
    const first = 2n ** 53n + 10n;
    const b = fetched('t', first, part([{ ...batch(0, ['a', 'b']), firstOffset: first }]));
    expect(b).toMatchObject({ firstOffset: '9007199254741002', lastOffset: '9007199254741003' });
    expect(() => toSourceBatch(b as FetchedColumns, undefined)).toThrow(
      expect.objectContaining({ code: 'TWG_KAFKA_OFFSET_UNSAFE' }),
    );
  });

  it('writes only the records at or after the start it is given, and counts the others', () => {
    const b = fetched('t', 10n, part([batch(10, ['a', 'b', 'c'])]));
    const converted = toSourceBatch(b as FetchedColumns, 12);
    expect(converted?.skipped).toBe(2);
    expect(converted?.batch.span).toMatchObject({ start: 12, end: 13 });
    expect(converted?.batch.records.map((r) => Buffer.from(r.value).toString())).toEqual(['c']);
  });

  it('refuses a timestamp beyond 2^53 ms by offset, and leaves the writer ready', () => {
    const b = fetched('t', 0n, part([batch(0, ['a'], { firstTimestamp: 2n ** 60n })]));
    const writer = new ColumnsWriter();
    expect(() => toSourceBatch(b as FetchedColumns, undefined, writer)).toThrow(
      /t\/3 offset 0: timestamp .* is not an integer below 2\^53 ms/,
    );
    const again = fetched('t', 0n, part([batch(0, ['ok'])]));
    expect(toSourceBatch(again as FetchedColumns, undefined, writer)?.batch.records).toHaveLength(
      1,
    );
  });

  it('keeps a null key and marks a null value as a tombstone', () => {
    const tomb = { ...batch(0, ['x']), records: [{ offsetDelta: 0, value: null }] };
    const [r] = recordsOf(fetched('t', 0n, part([tomb])));
    expect(r).toMatchObject({ offset: 0, key: null, tombstone: true });
    expect(r?.value.byteLength).toBe(0);
  });

  it('reads keys, every header in order (repeats and null values too) and long fields', () => {
    const long = Buffer.alloc(300, 7);
    const b = fetched(
      't',
      0n,
      part([
        {
          firstOffset: 0n,
          records: [
            {
              offsetDelta: 0,
              timestampDelta: -5,
              key: Buffer.from('k'),
              value: long,
              headers: [
                ['a', Buffer.from('1')],
                ['a', null],
                ['ü', Buffer.alloc(0)],
              ],
            },
            { offsetDelta: 1, timestampDelta: 2 ** 40, value: Buffer.from('v') },
          ],
        },
      ]),
    );
    const [first, second] = recordsOf(b);
    expect(Buffer.from(first?.key ?? []).toString()).toBe('k');
    expect(Buffer.from(first?.value ?? []).equals(long)).toBe(true);
    expect(first?.timestamp).toBe(1_700_000_000_000 - 5);
    expect(
      first?.headers.map(([n, v]) => [n, v === null ? null : Buffer.from(v).toString()]),
    ).toEqual([
      ['a', '1'],
      ['a', null],
      ['ü', ''],
    ]);
    expect(second).toMatchObject({ offset: 1, key: null, timestamp: 1_700_000_000_000 + 2 ** 40 });
    expect(second?.headers).toEqual([]);
  });

  it('decompresses a compressed batch with the codec its attributes name', () => {
    const b = fetched(
      't',
      0n,
      part([batch(0, ['a', 'b'], { attributes: GZIP, compress: gzipSync })]),
    );
    expect(values(b)).toEqual(['a', 'b']);
  });

  it('leaves out a batch cut short at the end of the response, for the next fetch to ask again', () => {
    const b = fetched('t', 0n, part([batch(0, ['a', 'b']), batch(2, ['c', 'd'])], null, 3));
    expect(b?.lastOffset).toBe('1');
    expect(values(b)).toEqual(['a', 'b']);
    expect(fetched('t', 0n, part([batch(0, ['a'])], null, 1))).toBeNull();
  });

  it('refuses a batch of an older message format, naming the partition and offset', () => {
    expect(() => fetched('t', 0n, part([batch(5, ['a'], { magic: 1 })]))).toThrow(
      /t\/3 record batch at offset 5: message format v1/,
    );
  });

  it('finds a batch damaged after it was sealed, naming the partition, offset and both CRCs', () => {
    const good = recordBatchBytes(batch(0, ['a', 'b']));
    const damaged = recordBatchBytes(batch(2, ['c', 'd']));
    // One bit of the value "c" flipped: the batch's own CRC no longer matches.
    const c = damaged.indexOf(Buffer.from('c'), 61);
    damaged.writeUInt8(damaged.readUInt8(c) ^ 0x02, c);
    const p = { ...part([]), records: Buffer.concat([good, damaged]) };
    expect(() => fetched('t', 0n, p)).toThrow(BatchChecksumMismatch);
    expect(() => fetched('t', 0n, p)).toThrow(
      /^t\/3 record batch at offset 2 fails its CRC-32C check: it says 0x[0-9a-f]{8}, its bytes give 0x[0-9a-f]{8}$/,
    );
    // The same batch sealed again is read: nothing else is checked against the CRC.
    expect(
      values(fetched('t', 0n, { ...p, records: Buffer.concat([good, sealed(damaged)]) })),
    ).toEqual(['a', 'b', 'a', 'd']);
  });

  it('checks the CRC a batch carries, not one it would have', () => {
    const bytes = recordBatchBytes(batch(7, ['x'], { crc: 0 }));
    expect(() => fetched('t', 7n, { ...part([]), records: bytes })).toThrow(
      /offset 7 fails its CRC-32C check: it says 0x00000000/,
    );
  });

  it('refuses a record that runs past its batch, naming the batch', () => {
    const bytes = recordBatchBytes(batch(8, ['abc']));
    // The record's value length (at the end of its fields) says 100 bytes.
    const at = bytes.indexOf(Buffer.from('abc')) - 1;
    bytes.writeInt8(100, at);
    const p = { ...part([]), records: sealed(bytes) };
    expect(() => toSourceBatch(fetched('t', 8n, p) as FetchedColumns, undefined)).toThrow(
      /t\/3 record batch at offset 8: a record runs past its batch or its own length/,
    );
  });

  it('refuses a record count its batch cannot hold, before allocating for it', () => {
    const bytes = recordBatchBytes(batch(4, ['a']));
    bytes.writeInt32BE(1_000_000_000, 57);
    const p = { ...part([]), records: sealed(bytes) };
    expect(() => toSourceBatch(fetched('t', 4n, p) as FetchedColumns, undefined)).toThrow(
      /t\/3 record batch at offset 4: record count 1000000000 for \d+ bytes/,
    );
  });
});
