import { describe, expect, it } from 'vitest';
import { Field, Int32, Schema } from 'apache-arrow';
import {
  FlightBatchReader,
  batchFlightData,
  ipcMessageOf,
  schemaFlightData,
} from '../src/flight-data-framing.js';
import { ROWS_SCHEMA, rowsBatch, rowsOf, thrown, type Row } from './fixtures.js';

const bytes = (...b: number[]) => Uint8Array.from(b);
const none = new Uint8Array(0);
const rows: Row[] = [
  { id: 1n, payload: 'a', ts: 1_764_633_600_000 },
  { id: -(2n ** 62n), payload: null, ts: null },
  { id: 3n, payload: 'ü', ts: 0 },
];

describe('ipcMessageOf', () => {
  it('frames a FlightData as an IPC stream message: marker, length, header padded to 8, body', () => {
    const framed = ipcMessageOf({
      dataHeader: bytes(1, 2, 3, 4, 5),
      appMetadata: none,
      dataBody: bytes(9, 9),
    });
    expect(framed).toEqual(bytes(0xff, 0xff, 0xff, 0xff, 8, 0, 0, 0, 1, 2, 3, 4, 5, 0, 0, 0, 9, 9));
  });

  it('adds no padding to a header that is a multiple of 8', () => {
    const header = bytes(1, 2, 3, 4, 5, 6, 7, 8);
    expect(ipcMessageOf({ dataHeader: header, appMetadata: none, dataBody: none }).byteLength).toBe(
      16,
    );
  });
});

describe('FlightBatchReader', () => {
  const first = schemaFlightData(ROWS_SCHEMA);

  it('reads the schema, then each batch, with what stream-arrow wrote', () => {
    const reader = new FlightBatchReader('DoGet ticket "t"');
    expect(reader.read(first)).toBeUndefined();
    expect(reader.schema?.fields.map((f) => `${f.name}:${String(f.type)}`)).toEqual([
      'id:Int64',
      'payload:Utf8',
      'ts:Timestamp<MILLISECOND, UTC>',
    ]);
    for (const part of [rows.slice(0, 1), rows.slice(1)]) {
      const batch = reader.read(batchFlightData(rowsBatch(part), first.dataHeader, none));
      expect(batch === undefined ? [] : rowsOf(batch)).toEqual(part);
    }
  });

  it('refuses a malformed data_header, naming the call, the message index and its byte position', () => {
    const reader = new FlightBatchReader('DoGet ticket "t"');
    const good = batchFlightData(rowsBatch(rows), first.dataHeader, none);
    reader.read(first);
    reader.read(good);
    const at = ipcMessageOf(first).byteLength + ipcMessageOf(good).byteLength;
    const torn = { ...good, dataHeader: good.dataHeader.subarray(0, 12) };
    // The position is in the IPC stream the messages make up, within the torn message
    // (where the header points past its end).
    const error = thrown(() => reader.read(torn));
    expect(error).toMatchObject({ code: 'TWG_FLIGHT_DATA_INVALID', messageIndex: 2 });
    expect(error.offset).toBeGreaterThanOrEqual(at);
    expect(error.offset).toBeLessThan(at + 8 + good.dataHeader.byteLength);
    expect(error.message).toMatch(
      /^TWG_FLIGHT_DATA_INVALID: DoGet ticket "t", message 2, byte \d+: /,
    );
  });

  it('refuses a body of another length than its header declares', () => {
    const reader = new FlightBatchReader('c');
    reader.read(first);
    const good = batchFlightData(rowsBatch(rows), first.dataHeader, none);
    const short = { ...good, dataBody: good.dataBody.subarray(0, good.dataBody.byteLength - 8) };
    expect(() => reader.read(short)).toThrow(
      /message 1, .*data_body holds \d+ bytes, the header declares/,
    );
  });

  it('refuses a stream that starts with a batch, a second schema and metadata alone', () => {
    const batch = batchFlightData(rowsBatch(rows), first.dataHeader, none);
    expect(() => new FlightBatchReader('c').read(batch)).toThrow(
      /message 0, byte 0: the first message is not a schema/,
    );
    const reader = new FlightBatchReader('c');
    reader.read(first);
    expect(() => reader.read(first)).toThrow(/message 1, .*a second schema message/);
    expect(() => reader.read({ dataHeader: none, appMetadata: bytes(1), dataBody: none })).toThrow(
      expect.objectContaining({ code: 'TWG_FLIGHT_UNSUPPORTED', messageIndex: 2 }),
    );
  });

  it('refuses garbage bytes as a header with the reader’s own code, never a crash', () => {
    const reader = new FlightBatchReader('c');
    expect(() =>
      reader.read({ dataHeader: bytes(1, 2, 3, 4, 5, 6, 7, 8), appMetadata: none, dataBody: none }),
    ).toThrow(expect.objectContaining({ code: 'TWG_FLIGHT_DATA_INVALID', messageIndex: 0 }));
  });
});

describe('batchFlightData', () => {
  it('refuses a batch of another schema than the stream’s', () => {
    const other = schemaFlightData(new Schema([new Field('n', new Int32(), false)]));
    expect(() => batchFlightData(rowsBatch(rows), other.dataHeader, none)).toThrow(
      expect.objectContaining({ code: 'TWG_FLIGHT_MISUSE' }),
    );
  });

  it('carries the app_metadata it is given', () => {
    const first = schemaFlightData(ROWS_SCHEMA);
    expect(batchFlightData(rowsBatch(rows), first.dataHeader, bytes(7)).appMetadata).toEqual(
      bytes(7),
    );
  });
});
