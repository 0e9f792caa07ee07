import { FlightError } from './errors.js';

/**
 * The protobuf wire format, as far as Flight's messages use it: varints
 * (wire type 0) and length-delimited fields (wire type 2). A field is a key
 * varint `(number << 3) | wireType`, then its value. Unknown fields are
 * skipped (also the fixed 32- and 64-bit wire types 5 and 1), as protobuf
 * requires for forward compatibility; groups (3, 4) are refused.
 *
 * Every length is checked against the bytes left before anything is sliced
 * or allocated: the reader sees bytes straight from the network.
 */
export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_BYTES = 2;
export const WIRE_FIXED32 = 5;

/** Builds one message: fields are appended in the order they are written. */
export class ProtoWriter {
  private readonly parts: Uint8Array[] = [];
  private length = 0;

  /** A varint field; zero is written too (the caller leaves out defaults). */
  varint(field: number, value: number | bigint): this {
    this.key(field, WIRE_VARINT);
    this.push(encodeVarint(value));
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.key(field, WIRE_BYTES);
    this.push(encodeVarint(value.byteLength));
    this.push(value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const part of this.parts) {
      out.set(part, at);
      at += part.byteLength;
    }
    return out;
  }

  private key(field: number, wireType: number): void {
    if (!Number.isInteger(field) || field < 1 || field > 0x1fffffff) {
      throw new RangeError(`protobuf field number ${field} is out of range`);
    }
    this.push(encodeVarint(field * 8 + wireType));
  }

  private push(part: Uint8Array): void {
    this.parts.push(part);
    this.length += part.byteLength;
  }
}

/** An unsigned varint of up to 64 bits (a negative int64 is its two's complement, 10 bytes). */
export function encodeVarint(value: number | bigint): Uint8Array {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Uint8Array.from(out);
}

/** One field as read: its number, wire type, and value (a varint, or the bytes of a length-delimited field). */
export type ProtoField =
  | { readonly field: number; readonly wireType: typeof WIRE_VARINT; readonly value: bigint }
  | { readonly field: number; readonly wireType: typeof WIRE_BYTES; readonly bytes: Uint8Array };

/**
 * The fields of one message, in order. Length-delimited values are views
 * into `bytes` (nothing is copied). `what` names the message in errors;
 * `base` is where `bytes` starts in the outer buffer, so an offset in an
 * error is a position in what the peer sent.
 */
export function* readFields(bytes: Uint8Array, what: string, base = 0): Generator<ProtoField> {
  let at = 0;
  while (at < bytes.byteLength) {
    const start = at;
    const [key, afterKey] = readVarint(bytes, at, what, base);
    at = afterKey;
    const field = Number(key >> 3n);
    const wireType = Number(key & 7n);
    if (field === 0) fail(what, base + start, 'field number 0');
    if (wireType === WIRE_VARINT) {
      const [value, next] = readVarint(bytes, at, what, base);
      at = next;
      yield { field, wireType, value };
    } else if (wireType === WIRE_BYTES) {
      const [length, next] = readVarint(bytes, at, what, base);
      if (length > BigInt(bytes.byteLength - next)) {
        fail(
          what,
          base + start,
          `field ${field} of ${length} bytes does not fit the ${bytes.byteLength - next} left`,
        );
      }
      at = next + Number(length);
      yield { field, wireType, bytes: bytes.subarray(next, at) };
    } else if (wireType === WIRE_FIXED64 || wireType === WIRE_FIXED32) {
      const width = wireType === WIRE_FIXED64 ? 8 : 4;
      if (bytes.byteLength - at < width) fail(what, base + start, `field ${field} is truncated`);
      at += width;
    } else {
      fail(what, base + start, `field ${field} has wire type ${wireType}, which is not read`);
    }
  }
}

/** A varint at `at`: its value and where the next byte is. At most 10 bytes, at most 64 bits. */
export function readVarint(
  bytes: Uint8Array,
  at: number,
  what: string,
  base = 0,
): [bigint, number] {
  let value = 0n;
  for (let i = 0; i < 10; i += 1) {
    const byte = bytes[at + i];
    if (byte === undefined) fail(what, base + at, 'a varint runs past the end');
    value |= BigInt(byte & 0x7f) << BigInt(7 * i);
    if ((byte & 0x80) === 0) {
      if (i === 9 && byte > 1) fail(what, base + at, 'a varint longer than 64 bits');
      return [value, at + i + 1];
    }
  }
  return fail(what, base + at, 'a varint longer than 10 bytes');
}

/** A varint field as a JavaScript number, refused when it is not a safe integer. */
export function safeNumber(value: bigint, what: string, field: string): number {
  const signed = BigInt.asIntN(64, value);
  if (signed > BigInt(Number.MAX_SAFE_INTEGER) || signed < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new FlightError(
      'TWG_FLIGHT_PROTOBUF_INVALID',
      `${what}.${field} ${signed} is not a safe integer`,
    );
  }
  return Number(signed);
}

function fail(what: string, offset: number, reason: string): never {
  throw new FlightError('TWG_FLIGHT_PROTOBUF_INVALID', `${what}: ${reason}`, { offset });
}
