import { inflateRawSync } from 'node:zlib';
import { AvroCursor } from './avro-binary.js';
import { compileSchema, type AvroValue } from './avro-schema.js';
import { IcebergError } from './errors.js';

/** The four bytes every Avro object container file starts with: "Obj" then version 1. */
const MAGIC = [0x4f, 0x62, 0x6a, 0x01];
const SYNC_SIZE = 16;

/** What an object container file's header holds. */
export interface AvroHeader {
  /** The writer's schema, parsed from `avro.schema`. */
  readonly schema: unknown;
  readonly codec: 'null' | 'deflate';
  /** Every metadata entry, decoded as UTF-8 (Iceberg puts e.g. `format-version` here). */
  readonly metadata: ReadonlyMap<string, string>;
}

/**
 * Reads a whole Avro object container file (the spec's "Object Container
 * Files"): the header's magic, metadata map and sync marker, then each block's
 * count, size and (possibly deflated) data, checking the sync marker after
 * every block, so a torn or spliced file fails with its byte offset instead
 * of yielding records read out of frame. Codecs other than null and deflate
 * (snappy, zstandard, bzip2, xz) are refused by name: Iceberg writes deflate.
 */
export function readAvroContainer(
  bytes: Uint8Array,
  file: string,
): { header: AvroHeader; records: AvroValue[] } {
  const c = new AvroCursor(bytes, file);
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC[i]) throw c.corrupt('not an Avro object container file (bad magic)', i);
  }
  c.pos = MAGIC.length;
  const metadata = new Map<string, string>();
  const utf8 = new TextDecoder();
  for (;;) {
    let n = c.count();
    if (n === 0) break;
    if (n < 0) {
      n = -n;
      c.count();
    }
    for (let i = 0; i < n; i++) metadata.set(c.string(), utf8.decode(c.bytesValue()));
  }
  const sync = c.fixed(SYNC_SIZE).slice();
  const codec = metadata.get('avro.codec') ?? 'null';
  if (codec !== 'null' && codec !== 'deflate') {
    throw new IcebergError(
      'TWG_ICEBERG_UNSUPPORTED',
      file,
      `avro.codec ${JSON.stringify(codec)} (only null and deflate are read)`,
    );
  }
  const schemaText = metadata.get('avro.schema');
  if (schemaText === undefined) throw c.corrupt('the header has no avro.schema');
  let schema: unknown;
  try {
    schema = JSON.parse(schemaText);
  } catch (e) {
    throw new IcebergError('TWG_ICEBERG_AVRO_CORRUPT', file, 'avro.schema is not JSON', {
      cause: e,
    });
  }
  const decode = compileSchema(schema, file);

  const records: AvroValue[] = [];
  while (!c.atEnd) {
    const count = c.count();
    const sizeAt = c.pos;
    const size = c.count();
    if (count < 0 || size < 0) throw c.corrupt(`block count ${count}, size ${size}`, sizeAt);
    const dataAt = c.pos;
    const raw = c.fixed(size);
    let block: AvroCursor;
    if (codec === 'deflate') {
      let inflated: Uint8Array;
      try {
        inflated = inflateRawSync(raw);
      } catch (e) {
        throw new IcebergError(
          'TWG_ICEBERG_AVRO_CORRUPT',
          file,
          `byte ${dataAt}: the deflated block does not inflate`,
          { cause: e },
        );
      }
      // offsets inside an inflated block are named from the block's start
      block = new AvroCursor(inflated, `${file} (block at byte ${dataAt}, inflated)`);
    } else {
      block = new AvroCursor(bytes, file, 0, dataAt);
    }
    const end = codec === 'deflate' ? block.bytes.length : dataAt + size;
    // a record takes a byte at least (as in avro-schema's blocks): a larger count is corrupt
    if (count > end - block.pos)
      throw c.corrupt(`a block of ${count} records in ${size} bytes`, sizeAt);
    for (let i = 0; i < count; i++) records.push(decode(block));
    if (block.pos !== end) {
      throw block.corrupt(
        `the block's ${count} records end ${end - block.pos} bytes before its end`,
      );
    }
    const syncAt = c.pos;
    const marker = c.fixed(SYNC_SIZE);
    for (let i = 0; i < SYNC_SIZE; i++) {
      if (marker[i] !== sync[i]) throw c.corrupt('sync marker does not match the header', syncAt);
    }
  }
  return { header: { schema, codec, metadata }, records };
}
