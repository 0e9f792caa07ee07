import { FlightError } from './errors.js';
import { ProtoWriter, readFields, safeNumber, type ProtoField } from './protobuf-wire.js';

/**
 * The messages of Arrow's Flight.proto that this package sends and reads,
 * by their field numbers there. Only the fields named here are read; any
 * other field is skipped, as protobuf asks.
 */

/** FlightDescriptor.type: 0 UNKNOWN, 1 PATH, 2 CMD. */
export type FlightDescriptor =
  | { readonly type: 'path'; readonly path: readonly string[] }
  | { readonly type: 'cmd'; readonly cmd: Uint8Array };

/** FlightData: 1 flight_descriptor, 2 data_header, 3 app_metadata, 1000 data_body. */
export interface FlightData {
  readonly descriptor?: FlightDescriptor | undefined;
  /** The IPC `Message` flatbuffer, without the continuation marker or length prefix. */
  readonly dataHeader: Uint8Array;
  readonly appMetadata: Uint8Array;
  readonly dataBody: Uint8Array;
}

/** ActionType: 1 type, 2 description. */
export interface ActionType {
  readonly type: string;
  readonly description: string;
}

/**
 * FlightInfo, as ListFlights returns it: 1 schema (an IPC schema message),
 * 2 flight_descriptor, 3 endpoint (kept as raw FlightEndpoint bytes),
 * 4 total_records, 5 total_bytes (-1 when unknown).
 */
export interface FlightInfo {
  readonly schema: Uint8Array;
  readonly descriptor: FlightDescriptor | undefined;
  readonly endpoints: readonly Uint8Array[];
  readonly totalRecords: number;
  readonly totalBytes: number;
}

const EMPTY: Uint8Array = new Uint8Array(0);

export function encodeDescriptor(d: FlightDescriptor): Uint8Array {
  const w = new ProtoWriter();
  if (d.type === 'path') {
    w.varint(1, 1);
    for (const element of d.path) w.string(3, element);
  } else {
    w.varint(1, 2).bytes(2, d.cmd);
  }
  return w.finish();
}

export function decodeDescriptor(bytes: Uint8Array, base = 0): FlightDescriptor {
  let type = 0n;
  let cmd: Uint8Array = EMPTY;
  const path: string[] = [];
  for (const f of readFields(bytes, 'FlightDescriptor', base)) {
    if (f.field === 1) type = varint(f, 'FlightDescriptor', 'type');
    else if (f.field === 2) cmd = lengthDelimited(f, 'FlightDescriptor', 'cmd');
    else if (f.field === 3) path.push(utf8(lengthDelimited(f, 'FlightDescriptor', 'path')));
  }
  if (type === 1n) return { type: 'path', path };
  if (type === 2n) return { type: 'cmd', cmd };
  throw new FlightError(
    'TWG_FLIGHT_PROTOBUF_INVALID',
    `FlightDescriptor.type ${type} is neither PATH (1) nor CMD (2)`,
    { offset: base },
  );
}

/** Empty fields are left out, as proto3 does. */
export function encodeFlightData(d: FlightData): Uint8Array {
  const w = new ProtoWriter();
  if (d.descriptor !== undefined) w.bytes(1, encodeDescriptor(d.descriptor));
  if (d.dataHeader.byteLength > 0) w.bytes(2, d.dataHeader);
  if (d.appMetadata.byteLength > 0) w.bytes(3, d.appMetadata);
  if (d.dataBody.byteLength > 0) w.bytes(1000, d.dataBody);
  return w.finish();
}

export function decodeFlightData(bytes: Uint8Array): FlightData {
  let descriptor: FlightDescriptor | undefined;
  let dataHeader = EMPTY;
  let appMetadata = EMPTY;
  let dataBody = EMPTY;
  for (const f of readFields(bytes, 'FlightData')) {
    if (f.field === 1) {
      const b = lengthDelimited(f, 'FlightData', 'flight_descriptor');
      descriptor = decodeDescriptor(b, b.byteOffset - bytes.byteOffset);
    } else if (f.field === 2) dataHeader = lengthDelimited(f, 'FlightData', 'data_header');
    else if (f.field === 3) appMetadata = lengthDelimited(f, 'FlightData', 'app_metadata');
    else if (f.field === 1000) dataBody = lengthDelimited(f, 'FlightData', 'data_body');
  }
  return { descriptor, dataHeader, appMetadata, dataBody };
}

/** A message of one bytes (or string) field: Ticket (1 ticket), PutResult (1 app_metadata), Result (1 body), Criteria (1 expression). */
export function encodeSingleBytes(value: Uint8Array): Uint8Array {
  return value.byteLength === 0 ? EMPTY : new ProtoWriter().bytes(1, value).finish();
}

export function decodeSingleBytes(bytes: Uint8Array, what: string): Uint8Array {
  let value = EMPTY;
  for (const f of readFields(bytes, what)) {
    if (f.field === 1) value = lengthDelimited(f, what, 'field 1');
  }
  return value;
}

/** Action: 1 type, 2 body. */
export function encodeAction(type: string, body: Uint8Array): Uint8Array {
  const w = new ProtoWriter().string(1, type);
  if (body.byteLength > 0) w.bytes(2, body);
  return w.finish();
}

export function decodeAction(bytes: Uint8Array): {
  readonly type: string;
  readonly body: Uint8Array;
} {
  let type = '';
  let body = EMPTY;
  for (const f of readFields(bytes, 'Action')) {
    if (f.field === 1) type = utf8(lengthDelimited(f, 'Action', 'type'));
    else if (f.field === 2) body = lengthDelimited(f, 'Action', 'body');
  }
  return { type, body };
}

export function encodeActionType(a: ActionType): Uint8Array {
  return new ProtoWriter().string(1, a.type).string(2, a.description).finish();
}

export function decodeActionType(bytes: Uint8Array): ActionType {
  let type = '';
  let description = '';
  for (const f of readFields(bytes, 'ActionType')) {
    if (f.field === 1) type = utf8(lengthDelimited(f, 'ActionType', 'type'));
    else if (f.field === 2) description = utf8(lengthDelimited(f, 'ActionType', 'description'));
  }
  return { type, description };
}

export function encodeFlightInfo(info: FlightInfo): Uint8Array {
  const w = new ProtoWriter();
  if (info.schema.byteLength > 0) w.bytes(1, info.schema);
  if (info.descriptor !== undefined) w.bytes(2, encodeDescriptor(info.descriptor));
  for (const endpoint of info.endpoints) w.bytes(3, endpoint);
  if (info.totalRecords !== 0) w.varint(4, info.totalRecords);
  if (info.totalBytes !== 0) w.varint(5, info.totalBytes);
  return w.finish();
}

export function decodeFlightInfo(bytes: Uint8Array): FlightInfo {
  let schema = EMPTY;
  let descriptor: FlightDescriptor | undefined;
  const endpoints: Uint8Array[] = [];
  let totalRecords = 0;
  let totalBytes = 0;
  for (const f of readFields(bytes, 'FlightInfo')) {
    if (f.field === 1) schema = lengthDelimited(f, 'FlightInfo', 'schema');
    else if (f.field === 2) {
      const b = lengthDelimited(f, 'FlightInfo', 'flight_descriptor');
      descriptor = decodeDescriptor(b, b.byteOffset - bytes.byteOffset);
    } else if (f.field === 3) endpoints.push(lengthDelimited(f, 'FlightInfo', 'endpoint'));
    else if (f.field === 4) {
      totalRecords = safeNumber(
        varint(f, 'FlightInfo', 'total_records'),
        'FlightInfo',
        'total_records',
      );
    } else if (f.field === 5) {
      totalBytes = safeNumber(varint(f, 'FlightInfo', 'total_bytes'), 'FlightInfo', 'total_bytes');
    }
  }
  return { schema, descriptor, endpoints, totalRecords, totalBytes };
}

/** What a FlightDescriptor names, for error messages: `path a/b` or `cmd <n bytes>`. */
export function describeDescriptor(d: FlightDescriptor): string {
  return d.type === 'path' ? `path ${d.path.join('/')}` : `cmd of ${d.cmd.byteLength} bytes`;
}

function varint(f: ProtoField, what: string, name: string): bigint {
  if (f.wireType !== 0) wrongType(what, name);
  return f.value;
}

function lengthDelimited(f: ProtoField, what: string, name: string): Uint8Array {
  if (f.wireType !== 2) wrongType(what, name);
  return f.bytes;
}

function wrongType(what: string, name: string): never {
  throw new FlightError('TWG_FLIGHT_PROTOBUF_INVALID', `${what}.${name} has the wrong wire type`);
}

function utf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (cause) {
    throw new FlightError(
      'TWG_FLIGHT_PROTOBUF_INVALID',
      'a string field is not UTF-8',
      {},
      { cause },
    );
  }
}
