import { RecordBatchStreamWriter, type RecordBatch } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { writeIpcStream } from '../src/ipc-stream-writer.js';
import { Random, randomBatch, randomSchema } from './arrow-random.js';

function apacheArrow(batch: RecordBatch): Buffer {
  return Buffer.from(RecordBatchStreamWriter.writeAll([batch]).toUint8Array(true));
}

describe('writeIpcStream', () => {
  it("writes apache-arrow's stream writer's bytes for random batches of every column type", () => {
    const r = new Random(4242);
    let dictionaries = 0;
    for (let i = 0; i < 200; i++) {
      const schema = randomSchema(r);
      if (schema.dictionaries.size > 0) dictionaries++;
      const batch = randomBatch(r, schema, r.int(0, 40));
      const bytes = writeIpcStream(batch);
      expect(
        Buffer.from(bytes).equals(apacheArrow(batch)),
        `batch ${i}: ${schema.fields.map((f) => f.name).join(', ')}`,
      ).toBe(true);
    }
    // Both paths ran: batches with dictionaries go through apache-arrow's writer.
    expect(dictionaries).toBeGreaterThan(0);
    expect(dictionaries).toBeLessThan(200);
  });

  it('writes the same bytes when the schema message comes from its cache', () => {
    const r = new Random(7);
    const schema = randomSchema(r);
    const first = randomBatch(r, schema, 5);
    const second = randomBatch(r, schema, 9);
    expect(Buffer.from(writeIpcStream(first)).equals(apacheArrow(first))).toBe(true);
    expect(Buffer.from(writeIpcStream(second)).equals(apacheArrow(second))).toBe(true);
  });

  it('pads with zeros whatever the memory it was given held', () => {
    const r = new Random(99);
    const schema = randomSchema(r);
    // Fill Node's free lists with ones so that an unzeroed allocation would show them.
    for (let i = 0; i < 50; i++) Buffer.allocUnsafeSlow(1 << 16).fill(0xff);
    const batch = randomBatch(r, schema, 13);
    expect(Buffer.from(writeIpcStream(batch)).equals(apacheArrow(batch))).toBe(true);
  });

  it('returns bytes that own their ArrayBuffer, so they can be transferred', () => {
    const r = new Random(3);
    const batch = randomBatch(r, randomSchema(r), 3);
    const bytes = writeIpcStream(batch);
    expect(bytes.byteOffset).toBe(0);
    expect(bytes.buffer.byteLength).toBe(bytes.byteLength);
    const { port1, port2 } = new MessageChannel();
    port1.postMessage(bytes, [bytes.buffer]);
    expect(bytes.byteLength).toBe(0);
    port1.close();
    port2.close();
  });
});
