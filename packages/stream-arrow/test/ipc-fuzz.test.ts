import { RecordBatchFileWriter, RecordBatchStreamWriter, type RecordBatch } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { ArrowBatchError, decodeIpcStream, readIpcFileSegment } from '../src/index.js';
import { Random, isUnsafeNumberGetter, randomBatch, randomSchema } from './arrow-random.js';
import { fixture } from './fixtures.js';
import { largestAllocation, mutate } from './ipc-mutations.js';

/**
 * The one reader on corrupted IPC: byte flips, truncations and length-field
 * edits of valid streams and files (apache-arrow's of random schemas,
 * pyarrow's fixtures). Every case ends in a read whose values can all be
 * taken, or in the reader's own coded error; nothing else is thrown, and no
 * allocation is larger than a bound of the input's size (a length the
 * reader did not check would allocate by the length instead). Seeded: the
 * same cases every run.
 */
const CASES = Number(process.env['TWG_FUZZ_CASES'] ?? 10_000);
/** Generous for legitimate work (apache-arrow's 64-byte padded bitmaps of up to 2^20 null rows). */
const allocationCap = (input: number) => Math.max(64 * input, 1 << 18);

function corpus(): { bytes: Uint8Array; read: (b: Uint8Array) => RecordBatch[] }[] {
  const stream = (b: Uint8Array) => [decodeIpcStream(b)];
  const file = (b: Uint8Array) => readIpcFileSegment(b);
  const out = [];
  const r = new Random(2026);
  for (let i = 0; i < 12; i++) {
    const schema = randomSchema(r);
    const batch = randomBatch(r, schema, r.int(1, 10));
    out.push({ bytes: RecordBatchStreamWriter.writeAll([batch]).toUint8Array(true), read: stream });
    out.push({ bytes: RecordBatchFileWriter.writeAll([batch]).toUint8Array(true), read: file });
  }
  for (const name of ['duplicate-names', 'null-column', 'sparse-union', 'dense-union']) {
    out.push({ bytes: fixture(`${name}.arrows`), read: stream });
    out.push({ bytes: fixture(`${name}.arrow`), read: file });
  }
  return out;
}

/**
 * Takes every value of a batch by apache-arrow's getters, nested ones
 * included; of a batch above 2048 rows (a corrupted row count can make one
 * of up to 2^20 rows of columns without a body, such as nulls), the first
 * and the last 1024 rows, so a case's cost stays bounded.
 */
function takeValues(batch: RecordBatch): void {
  const n = batch.numRows;
  const rows =
    n <= 2048
      ? [...Array(n).keys()]
      : [...Array(2048).keys()].map((i) => (i < 1024 ? i : n - 2048 + i));
  for (let c = 0; c < batch.numCols; c++) {
    const vector = batch.getChildAt(c);
    for (const row of rows) {
      JSON.stringify(vector?.get(row), (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
    }
  }
}

describe('the IPC reader on corrupted input', () => {
  it(`${CASES} seeded corruptions: a read or a coded error, allocations bounded by the input`, () => {
    const inputs = corpus();
    const r = new Random(Number(process.env['TWG_FUZZ_SEED'] ?? 15));
    const outcomes = { read: 0, refused: 0 };
    for (let i = 0; i < CASES; i++) {
      const input = r.pick(inputs);
      const bytes = mutate(r, input.bytes);
      let error: unknown;
      const largest = largestAllocation(() => {
        try {
          // Every value taken: a read that only fails when used is no read.
          const batches = input.read(bytes);
          try {
            for (const batch of batches) takeValues(batch);
          } catch (e) {
            if (!isUnsafeNumberGetter(e)) throw e;
          }
        } catch (e) {
          error = e;
        }
      });
      if (error !== undefined && !(error instanceof ArrowBatchError)) {
        throw new Error(`case ${i}: not a coded error`, { cause: error });
      }
      expect(largest, `case ${i}: allocation`).toBeLessThanOrEqual(allocationCap(bytes.byteLength));
      outcomes[error === undefined ? 'read' : 'refused']++;
    }
    // Both outcomes occur: the corruptions reach past the framing.
    expect(outcomes.read).toBeGreaterThan(CASES / 20);
    expect(outcomes.refused).toBeGreaterThan(CASES / 4);
  });
});
