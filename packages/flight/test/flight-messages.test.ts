import { describe, expect, it } from 'vitest';
import {
  decodeAction,
  decodeActionType,
  decodeDescriptor,
  decodeFlightData,
  decodeFlightInfo,
  decodeSingleBytes,
  encodeAction,
  encodeActionType,
  encodeDescriptor,
  encodeFlightData,
  encodeFlightInfo,
  encodeSingleBytes,
} from '../src/flight-messages.js';
import { thrown } from './fixtures.js';

// Byte vectors from Flight.proto's field numbers: a key is (field << 3) | wire type,
// 0 for varints, 2 for length-delimited; field 1000 length-delimited is 0xc2 0x3e.
const bytes = (...b: number[]) => Uint8Array.from(b);
const PATH_DS = bytes(0x08, 0x01, 0x1a, 0x02, 0x64, 0x73); // type PATH, path "ds"

describe('FlightDescriptor', () => {
  it('PATH: type 1 and each element as field 3', () => {
    expect(encodeDescriptor({ type: 'path', path: ['ds'] })).toEqual(PATH_DS);
    expect(encodeDescriptor({ type: 'path', path: ['a', 'b'] })).toEqual(
      bytes(0x08, 0x01, 0x1a, 0x01, 0x61, 0x1a, 0x01, 0x62),
    );
    expect(decodeDescriptor(PATH_DS)).toEqual({ type: 'path', path: ['ds'] });
  });

  it('CMD: type 2 and the command as field 2', () => {
    const cmd = bytes(0x08, 0x02, 0x12, 0x01, 0x78);
    expect(encodeDescriptor({ type: 'cmd', cmd: bytes(0x78) })).toEqual(cmd);
    expect(decodeDescriptor(cmd)).toEqual({ type: 'cmd', cmd: bytes(0x78) });
  });

  it('refuses UNKNOWN (0) and a missing type', () => {
    expect(() => decodeDescriptor(bytes(0x08, 0x00))).toThrow(/neither PATH \(1\) nor CMD \(2\)/);
    expect(thrown(() => decodeDescriptor(bytes()))).toMatchObject({
      code: 'TWG_FLIGHT_PROTOBUF_INVALID',
      reason: 'FlightDescriptor.type 0 is neither PATH (1) nor CMD (2)',
    });
  });

  it('refuses a path element that is not UTF-8', () => {
    expect(() => decodeDescriptor(bytes(0x08, 0x01, 0x1a, 0x01, 0xff))).toThrow(/not UTF-8/);
  });
});

describe('FlightData', () => {
  const vector = bytes(
    ...[0x0a, 0x06, ...PATH_DS], // 1 flight_descriptor
    ...[0x12, 0x02, 0x01, 0x02], // 2 data_header
    ...[0x1a, 0x01, 0x03], // 3 app_metadata
    ...[0xc2, 0x3e, 0x03, 0x04, 0x05, 0x06], // 1000 data_body
  );
  const message = {
    descriptor: { type: 'path', path: ['ds'] } as const,
    dataHeader: bytes(1, 2),
    appMetadata: bytes(3),
    dataBody: bytes(4, 5, 6),
  };

  it('encodes fields 1, 2, 3 and 1000', () => {
    expect(encodeFlightData(message)).toEqual(vector);
  });

  it('decodes them, whatever their order, skipping unknown fields', () => {
    const reordered = bytes(
      ...[0xc2, 0x3e, 0x03, 0x04, 0x05, 0x06],
      ...[0x28, 0x07], // field 5, a varint this package does not know
      ...[0x1a, 0x01, 0x03],
      ...[0x12, 0x02, 0x01, 0x02],
      ...[0x0a, 0x06, ...PATH_DS],
    );
    expect(decodeFlightData(reordered)).toEqual(message);
    expect(decodeFlightData(vector)).toEqual(message);
  });

  it('leaves out empty fields and reads them back as empty', () => {
    const empty = { dataHeader: bytes(), appMetadata: bytes(), dataBody: bytes() };
    expect(encodeFlightData(empty)).toEqual(bytes());
    expect(decodeFlightData(bytes())).toEqual({ descriptor: undefined, ...empty });
  });

  it('names the position of a bad nested descriptor in the outer message', () => {
    const bad = bytes(0x12, 0x01, 0x09, 0x0a, 0x02, 0x08, 0x05);
    expect(() => decodeFlightData(bad)).toThrow(expect.objectContaining({ offset: 5 }));
  });

  it('refuses a data_header sent as a varint', () => {
    expect(() => decodeFlightData(bytes(0x10, 0x01))).toThrow(
      /data_header has the wrong wire type/,
    );
  });
});

describe('one-field messages, Action, ActionType', () => {
  it('Ticket, PutResult, Result and Criteria: field 1 bytes', () => {
    expect(encodeSingleBytes(bytes(0x61, 0x62))).toEqual(bytes(0x0a, 0x02, 0x61, 0x62));
    expect(decodeSingleBytes(bytes(0x0a, 0x02, 0x61, 0x62), 'Ticket')).toEqual(bytes(0x61, 0x62));
    expect(encodeSingleBytes(bytes())).toEqual(bytes()); // Empty and an empty PutResult alike
    expect(decodeSingleBytes(bytes(), 'PutResult')).toEqual(bytes());
  });

  it('Action: 1 type, 2 body', () => {
    const vector = bytes(0x0a, 0x01, 0x74, 0x12, 0x01, 0x09);
    expect(encodeAction('t', bytes(9))).toEqual(vector);
    expect(decodeAction(vector)).toEqual({ type: 't', body: bytes(9) });
  });

  it('ActionType: 1 type, 2 description', () => {
    const vector = bytes(0x0a, 0x01, 0x61, 0x12, 0x01, 0x62);
    expect(encodeActionType({ type: 'a', description: 'b' })).toEqual(vector);
    expect(decodeActionType(vector)).toEqual({ type: 'a', description: 'b' });
  });
});

describe('FlightInfo', () => {
  it('1 schema, 2 descriptor, 3 endpoints, 4 total_records, 5 total_bytes (int64, -1 unknown)', () => {
    const info = {
      schema: bytes(0xaa),
      descriptor: { type: 'path', path: ['ds'] } as const,
      endpoints: [bytes(0x01), bytes(0x02)],
      totalRecords: -1,
      totalBytes: 300,
    };
    const vector = bytes(
      ...[0x0a, 0x01, 0xaa],
      ...[0x12, 0x06, ...PATH_DS],
      ...[0x1a, 0x01, 0x01, 0x1a, 0x01, 0x02],
      ...[0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
      ...[0x28, 0xac, 0x02],
    );
    expect(encodeFlightInfo(info)).toEqual(vector);
    expect(decodeFlightInfo(vector)).toEqual(info);
  });

  it('refuses a count beyond a safe integer rather than rounding it', () => {
    const big = bytes(0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f);
    expect(() => decodeFlightInfo(big)).toThrow(/total_records \d+ is not a safe integer/);
  });
});
