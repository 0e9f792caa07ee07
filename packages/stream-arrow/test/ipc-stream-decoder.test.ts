import { RecordBatchStreamWriter, tableFromArrays } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { ArrowBatchError, IpcStreamDecoder, type IpcStreamItem } from '../src/index.js';

/** A stream of three batches (2, 3 and 1 rows) written by apache-arrow's own writer. */
function threeBatches(): Uint8Array {
  const table = tableFromArrays({ n: Int32Array.of(1, 2, 3, 4, 5, 6) });
  const batches = [table.slice(0, 2), table.slice(2, 5), table.slice(5)].flatMap((t) => t.batches);
  return RecordBatchStreamWriter.writeAll(batches).toUint8Array(true);
}

/** Everything the decoder returns for `bytes` pushed `step` bytes at a time. */
function drain(bytes: Uint8Array, step: number, max = 1 << 20): IpcStreamItem[] {
  const decoder = new IpcStreamDecoder({ maxMessageBytes: max });
  const items: IpcStreamItem[] = [];
  for (let at = 0; at < bytes.byteLength; at += step) {
    decoder.push(bytes.subarray(at, at + step));
    for (;;) {
      const item = decoder.next();
      if (item.kind === 'need-more') break;
      items.push(item);
      if (item.kind === 'end') break;
    }
  }
  expect(decoder.finish()).toBe(true);
  return items;
}

function refusal(run: () => unknown): ArrowBatchError {
  try {
    run();
  } catch (error) {
    if (error instanceof ArrowBatchError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('IpcStreamDecoder', () => {
  it('reads the same batches whatever the chunking, one byte at a time included', () => {
    const bytes = threeBatches();
    for (const step of [1, 3, 8, 64, bytes.byteLength]) {
      const items = drain(bytes, step);
      expect(items.map((i) => i.kind)).toEqual(['schema', 'batch', 'batch', 'batch', 'end']);
      const rows = items.flatMap((i) =>
        i.kind === 'batch' ? [...(i.batch.getChildAt(0)?.toArray() as Int32Array)] : [],
      );
      expect(rows).toEqual([1, 2, 3, 4, 5, 6]);
      expect(items.flatMap((i) => (i.kind === 'batch' ? [i.index] : []))).toEqual([0, 1, 2]);
    }
  });

  it('gives each batch the stream byte where its message starts', () => {
    const bytes = threeBatches();
    const offsets = drain(bytes, 5).flatMap((i) => (i.kind === 'batch' ? [i.offset] : []));
    const decoder = new IpcStreamDecoder({ maxMessageBytes: 1 << 20 });
    decoder.push(bytes);
    decoder.next();
    expect(offsets[0]).toBe(decoder.offset);
    // The second batch's message follows the first's: corrupting its first byte is refused there.
    const bad = bytes.slice();
    bad[offsets[1]!] = 0x7f;
    const d = new IpcStreamDecoder({ maxMessageBytes: 1 << 20 });
    d.push(bad);
    expect(d.next().kind).toBe('schema');
    expect(d.next().kind).toBe('batch');
    const error = refusal(() => d.next());
    expect(error.code).toBe('TWG_ARROW_IPC_INVALID');
    expect(error.offset).toBe(offsets[1]);
    expect(error.message).toMatch(/record batch 1/);
    // Refused for good: nothing after bad bytes is read.
    expect(refusal(() => d.next())).toBe(error);
  });

  it('names the message start when garbage inside its metadata points far away', () => {
    // What pyarrow's test producer sends for --malformed-at-batch: a framed
    // message whose 32-byte "flatbuffer" is 0xa5 throughout, so every
    // reference read from it lands billions of bytes past the metadata.
    const bytes = threeBatches();
    const offsets = drain(bytes, bytes.byteLength).flatMap((i) =>
      i.kind === 'batch' ? [i.offset] : [],
    );
    const garbage = new Uint8Array(40).fill(0xa5);
    new DataView(garbage.buffer).setUint32(0, 0xffffffff, true);
    new DataView(garbage.buffer).setInt32(4, 32, true);
    const bad = new Uint8Array(offsets[1]! + garbage.byteLength);
    bad.set(bytes.subarray(0, offsets[1]));
    bad.set(garbage, offsets[1]);
    const d = new IpcStreamDecoder({ maxMessageBytes: 1 << 20 });
    d.push(bad);
    expect(d.next().kind).toBe('schema');
    expect(d.next().kind).toBe('batch');
    const error = refusal(() => d.next());
    expect(error.code).toBe('TWG_ARROW_IPC_INVALID');
    expect(error.offset).toBe(offsets[1]);
    expect(error.message).toContain(`byte ${offsets[1]}`);
    expect(error.message).toMatch(/record batch 1/);
  });

  it('refuses a truncated stream at the message it cuts, and bytes after the end marker', () => {
    const bytes = threeBatches();
    const cut = new IpcStreamDecoder({ maxMessageBytes: 1 << 20 });
    cut.push(bytes.subarray(0, bytes.byteLength - 20));
    const kinds: string[] = [];
    for (let i = cut.next(); i.kind !== 'need-more'; i = cut.next()) kinds.push(i.kind);
    expect(kinds).toEqual(['schema', 'batch', 'batch']);
    const truncated = refusal(() => cut.finish());
    expect(truncated.offset).toBe(cut.offset);
    expect(truncated.message).toMatch(/record batch 2: the stream ends/);

    const extra = new IpcStreamDecoder({ maxMessageBytes: 1 << 20 });
    extra.push(bytes);
    extra.push(Uint8Array.of(1, 2, 3));
    for (let i = 0; i < 4; i++) extra.next();
    expect(refusal(() => extra.next()).offset).toBe(bytes.byteLength);
  });

  it('refuses a message larger than maxMessageBytes by its declared length, before buffering it', () => {
    const bytes = threeBatches();
    const decoder = new IpcStreamDecoder({ maxMessageBytes: 64 });
    decoder.push(bytes.subarray(0, 8));
    const error = refusal(() => decoder.next());
    expect(error.code).toBe('TWG_ARROW_IPC_TOO_LARGE');
    expect(error.offset).toBe(0);
  });

  it('refuses garbage where a schema belongs, with its byte', () => {
    const decoder = new IpcStreamDecoder({ maxMessageBytes: 1 << 20 });
    decoder.push(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x10, 0, 0, 0, ...new Uint8Array(16)));
    const error = refusal(() => decoder.next());
    expect(error.code).toBe('TWG_ARROW_IPC_INVALID');
    expect(error.offset).toBe(0);
  });
});
