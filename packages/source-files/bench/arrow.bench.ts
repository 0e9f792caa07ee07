import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Field,
  Float64,
  Int64,
  RecordBatch,
  RecordBatchReader,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  TimestampMicrosecond,
  Utf8,
  makeData,
  vectorFromArray,
  type Data,
} from 'apache-arrow';
import { FileSetSource } from '@thalweg/source-files';
import { emit, medianMs, round } from './measure.js';

// The source's full read of an Arrow IPC stream, every row rendered as a
// JSON record, against apache-arrow reading the same bytes and rendering
// each row with JSON.stringify (bigints as strings), in the same run.
const ROWS = 200_000;
const BATCH_ROWS = 10_000;
const dir = await mkdtemp(join(tmpdir(), 'twg-bench-arrow-'));
try {
  const schema = new Schema([
    new Field('id', new Int64(), false),
    new Field('name', new Utf8(), true),
    new Field('score', new Float64(), false),
    new Field('at', new TimestampMicrosecond('UTC'), true),
  ]);
  const batches: RecordBatch[] = [];
  for (let start = 0; start < ROWS; start += BATCH_ROWS) {
    const ids = Array.from({ length: BATCH_ROWS }, (_, i) => BigInt(start + i));
    const children: Data[] = [
      vectorFromArray(ids, new Int64()).data[0]!,
      vectorFromArray(
        ids.map((i) => `name-${i}-${'x'.repeat(150)}`),
        new Utf8(),
      ).data[0]!,
      vectorFromArray(
        ids.map((i) => Number(i) / 3),
        new Float64(),
      ).data[0]!,
      makeData({
        type: new TimestampMicrosecond('UTC'),
        length: BATCH_ROWS,
        data: BigInt64Array.from(ids, (i) => 1_700_000_000_000_000n + i),
      }),
    ];
    batches.push(
      new RecordBatch(
        schema,
        makeData({ type: new Struct(schema.fields), length: BATCH_ROWS, children }),
      ),
    );
  }
  const path = join(dir, 'bench.arrow');
  const bytes = RecordBatchStreamWriter.writeAll(batches).toUint8Array(true);
  await writeFile(path, bytes);

  let valueBytes = 0;
  let seen = 0;
  const sourceMs = await medianMs(async () => {
    const source = await FileSetSource.open({
      files: { kind: 'paths', paths: [path] },
      format: 'arrow-ipc',
      topic: 'bench',
    });
    seen = 0;
    valueBytes = 0;
    for await (const batch of source.batches(new AbortController().signal)) {
      seen += batch.records.length;
      for (const r of batch.records) valueBytes += r.value.byteLength;
    }
    await source.close();
  }, 3);
  if (seen !== ROWS) throw new Error(`source read ${seen} rows of ${ROWS}`);

  let rows = 0;
  const bigintAsString = (_: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);
  const arrowMs = await medianMs(async () => {
    rows = 0;
    for (const batch of RecordBatchReader.from(await readFile(path))) {
      for (const row of batch) {
        Buffer.from(JSON.stringify(row.toJSON(), bigintAsString));
        rows++;
      }
    }
  }, 3);
  if (rows !== ROWS) throw new Error(`apache-arrow read ${rows} rows of ${ROWS}`);

  emit({
    bench: 'file-source',
    format: 'arrow-ipc',
    records: ROWS,
    record_bytes: Math.round(valueBytes / ROWS),
    file_bytes: bytes.byteLength,
    ms: round(sourceMs),
    records_per_s: Math.round(ROWS / (sourceMs / 1000)),
    mb_per_s: round(bytes.byteLength / 1e6 / (sourceMs / 1000)),
    baseline: 'apache-arrow RecordBatchReader, whole file in memory, JSON.stringify(row.toJSON())',
    baseline_records_per_s: Math.round(ROWS / (arrowMs / 1000)),
    ratio: round(arrowMs / sourceMs, 2),
  });
} finally {
  await rm(dir, { recursive: true, force: true });
}
