import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { NO_HEADERS } from '@thalweg/connector-core';
import type { FetchedHeader } from './consumer-port.js';
import { KafkaSourceError } from './errors.js';

/**
 * Record headers exactly as they were on the wire, from kafkajs 2.2.4.
 *
 * kafkajs folds a record's header list into a plain object
 * (`recordBatch/record/v0/decoder.js`), which loses three things a raw sink
 * must keep: the order (integer-like names move first, repeats are grouped),
 * the position of repeats, and any name an object already has — for
 * `constructor` or `toString` the first value it reports is
 * `Object.prototype`'s function, for `__proto__` the prototype itself. The
 * list it folds is what we need, and it is only reachable while it is
 * decoded: the record decoder gets it from `decoder.readVarIntArray` with the
 * header decoder, then calls `reduce` on it. So the decoder's
 * `readVarIntArray` is wrapped: for the header decoder only, the list it
 * returns gets a `reduce` that attaches the `[name, value]` pairs, in wire
 * order, to the object it builds, under a symbol. kafkajs's object is
 * otherwise unchanged, so another kafkajs user in the process sees nothing
 * different.
 *
 * This reaches into kafkajs's internals, which is why the version is pinned
 * exactly and why `installWireHeaders` decodes a crafted record through
 * kafkajs's own record decoder before the first consumer is built: if the
 * pairs do not come back exactly, no consumer is built
 * (`TWG_KAFKA_CLIENT_UNSUPPORTED`) rather than one that would lose headers.
 */
const WIRE_HEADERS = Symbol('thalweg.kafkajs.wire-headers');

type Reader = (decoder: KafkajsDecoder) => unknown;

interface KafkajsDecoder {
  readVarIntArray: (this: KafkajsDecoder, reader: Reader) => unknown[];
}

interface DecodedHeader {
  readonly key: string;
  readonly value: Buffer | null;
}

interface DecoderClass {
  new (buffer: Buffer): KafkajsDecoder;
  prototype: KafkajsDecoder;
}

type RecordDecoder = (
  decoder: KafkajsDecoder,
  context: { firstOffset: string; firstTimestamp: string },
) => { headers: object };

let installed: 'no' | 'yes' | Error = 'no';

function unsupported(detail: string, cause?: unknown): KafkaSourceError {
  return new KafkaSourceError(
    'TWG_KAFKA_CLIENT_UNSUPPORTED',
    `this kafkajs does not decode record headers as kafkajs 2.2.4 does (${detail}); ` +
      'the source would lose header order, repeated headers or prototype-named headers, so it refuses to start',
    { cause },
  );
}

function patch(): void {
  const load = createRequire(import.meta.url);
  const root = dirname(load.resolve('kafkajs'));
  const internal = (path: string): unknown => load(join(root, 'src', 'protocol', path));
  const Decoder = internal('decoder.js') as DecoderClass;
  const headerDecoder = internal('recordBatch/header/v0/decoder.js') as Reader;
  const recordDecoder = internal('recordBatch/record/v0/decoder.js') as RecordDecoder;
  const original = Decoder.prototype.readVarIntArray;
  Decoder.prototype.readVarIntArray = function readVarIntArray(
    this: KafkajsDecoder,
    reader: Reader,
  ): unknown[] {
    const list = original.call(this, reader);
    if (reader !== headerDecoder || list.length === 0) return list;
    // The broker refuses a null header key, so every key here is a string.
    const pairs: FetchedHeader[] = (list as DecodedHeader[]).map((h) => [h.key, h.value]);
    Object.defineProperty(list, 'reduce', {
      value: function reduce(this: unknown[], ...args: Parameters<unknown[]['reduce']>) {
        const folded: unknown = Array.prototype.reduce.apply(this, args);
        if (typeof folded === 'object' && folded !== null) {
          Object.defineProperty(folded, WIRE_HEADERS, { value: pairs });
        }
        return folded;
      },
    });
    return list;
  };
  selfTest(Decoder, recordDecoder);
}

/**
 * A record with headers `a: "x"`, `constructor: null`, `a: ""`, `1: "y"`
 * (zig-zag varints: 0 is 0x00, -1 is 0x01, n is 2n), decoded by kafkajs.
 */
function selfTest(Decoder: DecoderClass, recordDecoder: RecordDecoder): void {
  const ascii = (s: string) => [...Buffer.from(s, 'latin1')];
  const bytes = Buffer.from([
    ...[0x00, 0x00, 0x00], // attributes, timestamp delta, offset delta
    ...[0x01, 0x01], // null key, null value
    0x08, // four headers
    ...[0x02, ...ascii('a'), 0x02, ...ascii('x')],
    ...[0x16, ...ascii('constructor'), 0x01],
    ...[0x02, ...ascii('a'), 0x00],
    ...[0x02, ...ascii('1'), 0x02, ...ascii('y')],
  ]);
  const decoded = recordDecoder(new Decoder(bytes), { firstOffset: '0', firstTimestamp: '0' });
  const got = wireHeaders(decoded.headers);
  const text = got.map(([n, v]) => `${n}=${v === null ? 'null' : Buffer.from(v).toString()}`);
  if (text.join(',') !== 'a=x,constructor=null,a=,1=y') {
    throw unsupported(`a test record's headers came back as [${text.join(', ')}]`);
  }
}

/** Wraps kafkajs's decoder once per process; throws if this kafkajs cannot be used. */
export function installWireHeaders(): void {
  if (installed === 'no') {
    try {
      patch();
      installed = 'yes';
    } catch (error) {
      installed = error instanceof KafkaSourceError ? error : unsupported('patch failed', error);
    }
  }
  if (installed !== 'yes') throw installed;
}

/**
 * The wire-order header list of a message kafkajs decoded, from the object
 * it handed us. A message with headers but no list was decoded before the
 * wrap was installed, which `kafkajsConsumer` rules out; it is refused, not
 * guessed at.
 */
export function wireHeaders(headers: object | undefined): readonly FetchedHeader[] {
  if (headers === undefined) return NO_HEADERS;
  const pairs = (headers as { [WIRE_HEADERS]?: readonly FetchedHeader[] })[WIRE_HEADERS];
  if (pairs !== undefined) return pairs;
  if (Object.keys(headers).length === 0) return NO_HEADERS;
  throw unsupported('a message carries headers but not their wire-order list');
}
